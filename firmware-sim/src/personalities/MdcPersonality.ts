/** Samsung MDC panel: status, power, volume, mute and input source. */
import {
  MdcCommand,
  MdcPower,
  MDC_INPUTS,
  createMdcCommandFramer,
  encodeMdcReply,
  encodeMdcStatus,
  mdcInputName,
  parseMdcCommand,
  type MdcCommandFrame,
} from '@svc/shared/panels/index'
import type { PanelModel } from '../PanelModel.js'
import { inputCode, type Personality } from './Personality.js'

/** MDC broadcast id: every panel acts (and answers) on it. */
export const MDC_BROADCAST_ID = 0xfe
/** Error byte in a NAK. */
export const MDC_ERROR_UNSUPPORTED = 0x01

export class MdcPersonality implements Personality {
  readonly protocol = 'samsung-mdc' as const

  createFramer() {
    return createMdcCommandFramer()
  }

  greeting(): null {
    return null
  }

  answer(frame: Buffer, model: PanelModel): Buffer | null {
    const cmd = this.parse(frame, model)
    if (!cmd) return null
    const ack = (...data: number[]) => encodeMdcReply({ id: model.id, ack: true, cmd: cmd.cmd, data: Uint8Array.from(data) })
    const nak = () => this.nakFor(cmd, model)
    const get = cmd.data.length === 0
    const v = cmd.data[0]!
    switch (cmd.cmd) {
      case MdcCommand.status:
        if (!get) return nak()
        return encodeMdcReply({ id: model.id, ack: true, cmd: cmd.cmd, data: encodeMdcStatus(this.status(model)) })
      case MdcCommand.power:
        if (!get) {
          if (v === MdcPower.on || v === MdcPower.reboot) model.setPower('on')
          else if (v === MdcPower.off) model.setPower('off')
          else return nak()
        }
        return ack(model.power === 'off' ? MdcPower.off : MdcPower.on)
      case MdcCommand.volume:
        if (!get) {
          if (v > 100) return nak()
          model.setVolume(v)
        }
        return ack(model.volume)
      case MdcCommand.mute:
        if (!get) {
          if (v > 1) return nak()
          model.setMuted(v === 1)
        }
        return ack(model.muted ? 1 : 0)
      case MdcCommand.input:
        if (!get) model.setInput(mdcInputName(v))
        return ack(inputCode(model.input, MDC_INPUTS, MDC_INPUTS.hdmi1))
      default:
        return nak()
    }
  }

  nak(frame: Buffer, model: PanelModel): Buffer | null {
    const cmd = this.parse(frame, model)
    return cmd ? this.nakFor(cmd, model) : null
  }

  corrupt(reply: Buffer): Buffer {
    const out = Buffer.from(reply)
    out[out.length - 1] = (out[out.length - 1]! + 1) & 0xff
    return out
  }

  private nakFor(cmd: MdcCommandFrame, model: PanelModel): Buffer {
    return encodeMdcReply({ id: model.id, ack: false, cmd: cmd.cmd, data: Uint8Array.of(MDC_ERROR_UNSUPPORTED) })
  }

  private parse(frame: Buffer, model: PanelModel): MdcCommandFrame | null {
    let cmd: MdcCommandFrame
    try {
      cmd = parseMdcCommand(frame)
    } catch {
      return null // a real panel ignores frames it cannot read
    }
    return cmd.id === model.id || cmd.id === MDC_BROADCAST_ID ? cmd : null
  }

  private status(model: PanelModel) {
    return {
      power: model.power === 'off' ? 0 : 1,
      volume: model.volume,
      mute: model.muted ? 1 : 0,
      input: inputCode(model.input, MDC_INPUTS, MDC_INPUTS.hdmi1),
      aspect: 0,
      timer1: 0,
      timer2: 0,
    }
  }
}
