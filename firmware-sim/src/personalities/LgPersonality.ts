/** LG commercial display: ka power, kf volume, ke mute (inverted), xb input. */
import {
  LG_BROADCAST_ID,
  LG_INPUTS,
  LG_READ,
  LgCommand,
  createLgCommandFramer,
  encodeLgReply,
  lgInputName,
  parseLgCommand,
  type LgCommandFrame,
} from '@svc/shared/panels/index'
import type { PanelModel } from '../PanelModel.js'
import { inputCode, type Personality } from './Personality.js'

/** NG data byte: 01 illegal code. */
export const LG_NG_ILLEGAL = 0x01

export interface LgQuirks {
  /** The set "plays media": NG to everything but ka. */
  ngExceptPower?: boolean
  /** ka is ignored (no reply, no change) while the set is off, as over some adapters. */
  powerOnlyWhenOn?: boolean
}

export class LgPersonality implements Personality {
  readonly protocol = 'lg' as const
  /** Quirks can be switched at runtime. */
  quirks: LgQuirks

  constructor(quirks: LgQuirks = {}) {
    this.quirks = { ...quirks }
  }

  createFramer() {
    return createLgCommandFramer()
  }

  greeting(): null {
    return null
  }

  answer(frame: Buffer, model: PanelModel): Buffer | null {
    const cmd = this.parse(frame, model)
    if (!cmd) return null
    const reply = this.apply(cmd, model)
    // set id 00 addresses every set; none of them answers
    return cmd.id === LG_BROADCAST_ID ? null : reply
  }

  nak(frame: Buffer, model: PanelModel): Buffer | null {
    const cmd = this.parse(frame, model)
    return cmd && cmd.id !== LG_BROADCAST_ID ? this.ng(cmd, model) : null
  }

  corrupt(reply: Buffer): Buffer {
    // no checksum in LG: damage the last data character so the reply cannot parse
    const out = Buffer.from(reply)
    if (out.length >= 2) out[out.length - 2] = 0x3f // '?'
    return out
  }

  private apply(cmd: LgCommandFrame, model: PanelModel): Buffer | null {
    const v = cmd.data[0]!
    const read = v === LG_READ
    const ok = (data: number) => encodeLgReply({ cmd2: cmd.cmd[1]!, id: model.id, ok: true, data: Uint8Array.of(data) })
    if (cmd.cmd === LgCommand.power) {
      if (this.quirks.powerOnlyWhenOn && model.power === 'off') return null
      if (!read) {
        if (v > 1) return this.ng(cmd, model)
        model.setPower(v === 1 ? 'on' : 'off')
      }
      return ok(model.power === 'off' ? 0 : 1)
    }
    if (this.quirks.ngExceptPower) return this.ng(cmd, model)
    switch (cmd.cmd) {
      case LgCommand.volume:
        if (!read) {
          if (v > 100) return this.ng(cmd, model)
          model.setVolume(v)
        }
        return ok(model.volume)
      case LgCommand.mute:
        if (!read) {
          if (v > 1) return this.ng(cmd, model)
          model.setMuted(v === 0)
        }
        return ok(model.muted ? 0 : 1)
      case LgCommand.input:
        if (!read) model.setInput(lgInputName(v))
        return ok(inputCode(model.input, LG_INPUTS, LG_INPUTS.hdmi1))
      default:
        return this.ng(cmd, model)
    }
  }

  private ng(cmd: LgCommandFrame, model: PanelModel): Buffer {
    return encodeLgReply({ cmd2: cmd.cmd[1]!, id: model.id, ok: false, data: Uint8Array.of(LG_NG_ILLEGAL) })
  }

  private parse(frame: Buffer, model: PanelModel): LgCommandFrame | null {
    try {
      const cmd = parseLgCommand(frame)
      return cmd.id === model.id || cmd.id === LG_BROADCAST_ID ? cmd : null
    } catch {
      return null
    }
  }
}
