/** PJLink projector (class 1): greeting, POWR with warm-up / cool-down, INPT, AVMT. */
import {
  PJLINK_INPUTS,
  createPjLinkCommandFramer,
  encodePjLinkGreeting,
  encodePjLinkReply,
  parsePjLinkCommand,
  pjLinkInputName,
  type PjLinkCommandFrame,
} from '@svc/shared/panels/index'
import { systemClock, type Clock, type Timers } from '../Clock.js'
import type { PanelModel } from '../PanelModel.js'
import type { Personality } from './Personality.js'

export interface PjLinkPersonalityOptions {
  /** How long "warming" lasts after POWR 1 (0 = on at once). */
  warmupMs?: number
  /** How long "cooling" lasts after POWR 0 (0 = standby at once). */
  cooldownMs?: number
  clock?: Clock & Timers
}

const POWER_CODE = { standby: '0', off: '0', on: '1', cooling: '2', warming: '3' } as const

export class PjLinkPersonality implements Personality {
  readonly protocol = 'pjlink' as const
  private readonly warmupMs: number
  private readonly cooldownMs: number
  private readonly clock: Clock & Timers
  private timer: unknown = null

  constructor(opts: PjLinkPersonalityOptions = {}) {
    this.warmupMs = opts.warmupMs ?? 0
    this.cooldownMs = opts.cooldownMs ?? 0
    this.clock = opts.clock ?? systemClock
  }

  createFramer() {
    return createPjLinkCommandFramer()
  }

  greeting(): Buffer {
    return encodePjLinkGreeting({ auth: false })
  }

  answer(frame: Buffer, model: PanelModel): Buffer | null {
    const cmd = this.parse(frame)
    if (!cmd) return null
    const reply = (value: string) => encodePjLinkReply({ cls: cmd.cls, cmd: cmd.cmd, value })
    const q = cmd.param === '?'
    switch (cmd.cmd) {
      case 'POWR':
        if (q) return reply(POWER_CODE[model.power])
        if (cmd.param === '1') {
          if (model.power === 'cooling') return reply('ERR3')
          if (model.power !== 'on') this.transition(model, 'warming', 'on', this.warmupMs)
          return reply('OK')
        }
        if (cmd.param === '0') {
          if (model.power === 'warming') return reply('ERR3')
          if (model.power === 'on') this.transition(model, 'cooling', 'standby', this.cooldownMs)
          return reply('OK')
        }
        return reply('ERR2')
      case 'INPT': {
        if (q) return reply(PJLINK_INPUTS[model.input as keyof typeof PJLINK_INPUTS] ?? model.input)
        if (!/^[1-9][1-9A-Z]$/.test(cmd.param)) return reply('ERR2')
        model.setInput(pjLinkInputName(cmd.param))
        return reply('OK')
      }
      case 'AVMT':
        if (q) return reply(model.muted ? '21' : '20')
        if (!/^[123][01]$/.test(cmd.param)) return reply('ERR2')
        if (cmd.param[0] !== '1') model.setMuted(cmd.param[1] === '1')
        return reply('OK')
      default:
        return reply('ERR1')
    }
  }

  nak(frame: Buffer): Buffer | null {
    const cmd = this.parse(frame)
    return cmd ? encodePjLinkReply({ cls: cmd.cls, cmd: cmd.cmd, value: 'ERR3' }) : null
  }

  corrupt(reply: Buffer): Buffer {
    const out = Buffer.from(reply)
    if (out.length >= 2) out[out.length - 2] = 0x3f // '?': the value can no longer be read
    return out
  }

  private transition(model: PanelModel, during: 'warming' | 'cooling', after: 'on' | 'standby', ms: number): void {
    if (this.timer !== null) this.clock.clearTimer(this.timer)
    this.timer = null
    if (ms <= 0) {
      model.setPower(after)
      return
    }
    model.setPower(during)
    this.timer = this.clock.setTimer(() => {
      this.timer = null
      model.setPower(after)
    }, ms)
  }

  /** Cancels a pending warm-up / cool-down timer. */
  dispose(): void {
    if (this.timer !== null) this.clock.clearTimer(this.timer)
    this.timer = null
  }

  private parse(frame: Buffer): PjLinkCommandFrame | null {
    try {
      return parsePjLinkCommand(frame)
    } catch {
      return null
    }
  }
}
