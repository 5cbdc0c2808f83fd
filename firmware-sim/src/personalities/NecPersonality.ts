/** NEC large-format display: power set / status, get and set of volume, mute, input. */
import {
  NEC_INPUTS,
  NEC_POWER_SET,
  NEC_POWER_STATUS,
  NecParameter,
  NecPowerMode,
  createNecCommandFramer,
  encodeNecParameterReply,
  encodeNecReply,
  necInputName,
  parseNecCommand,
  type NecMessage,
} from '@svc/shared/panels/index'
import type { PanelModel } from '../PanelModel.js'
import { inputCode, type Personality } from './Personality.js'

const h4 = (n: number) => n.toString(16).toUpperCase().padStart(4, '0')

export class NecPersonality implements Personality {
  readonly protocol = 'nec' as const

  createFramer() {
    return createNecCommandFramer()
  }

  greeting(): null {
    return null
  }

  answer(frame: Buffer, model: PanelModel): Buffer | null {
    const m = this.parse(frame, model)
    if (!m) return null
    const reply = this.apply(m, model, false)
    return m.id === 0 ? null : reply
  }

  nak(frame: Buffer, model: PanelModel): Buffer | null {
    const m = this.parse(frame, model)
    return m && m.id !== 0 ? this.apply(m, model, true) : null
  }

  corrupt(reply: Buffer): Buffer {
    const out = Buffer.from(reply)
    out[out.length - 2] = out[out.length - 2]! ^ 0x01 // BCC
    return out
  }

  private apply(m: NecMessage, model: PanelModel, reject: boolean): Buffer | null {
    const reply = (type: NecMessage['type'], message: string) => encodeNecReply({ id: model.id, type, message })
    const msg = m.message.toUpperCase()
    const powerMode = () => (model.power === 'off' ? NecPowerMode.off : model.power === 'on' ? NecPowerMode.on : NecPowerMode.standby)
    if (m.type === 'A' && msg.startsWith(NEC_POWER_SET) && msg.length === 10) {
      const mode = parseInt(msg.slice(6), 16)
      const valid = mode === NecPowerMode.on || mode === NecPowerMode.off
      if (reject || !valid) return reply('B', `01${NEC_POWER_SET}${msg.slice(6)}`)
      model.setPower(mode === NecPowerMode.on ? 'on' : 'off')
      return reply('B', `00${NEC_POWER_SET}${h4(mode)}`)
    }
    if (m.type === 'A' && msg === NEC_POWER_STATUS) {
      return reply('B', `02${reject ? '01' : '00'}D6000004${h4(powerMode())}`)
    }
    if (m.type === 'C' || m.type === 'E') {
      if (!/^[0-9A-F]{4}([0-9A-F]{4})?$/.test(msg)) return null
      const page = parseInt(msg.slice(0, 2), 16)
      const code = parseInt(msg.slice(2, 4), 16)
      const value = m.type === 'E' ? parseInt(msg.slice(4, 8), 16) : undefined
      if (m.type === 'E' && value === undefined) return null
      const rtype = m.type === 'C' ? 'D' : 'F'
      const param = this.parameter(page, code, model)
      const out = (result: number, max: number, current: number) => reply(rtype, encodeNecParameterReply({ result, page, code, kind: 0, max, current }))
      if (reject || !param) return out(1, 0, 0)
      if (value !== undefined) {
        if (value > param.max) return out(1, param.max, param.get())
        param.set(value)
      }
      return out(0, param.max, param.get())
    }
    return null
  }

  private parameter(page: number, code: number, model: PanelModel) {
    if (page !== 0) return null
    switch (code) {
      case NecParameter.volume.code:
        return { max: 100, get: () => model.volume, set: (v: number) => model.setVolume(v) }
      case NecParameter.mute.code:
        return { max: 2, get: () => (model.muted ? 1 : 0), set: (v: number) => model.setMuted(v === 1) }
      case NecParameter.input.code:
        return {
          max: 0xff,
          get: () => inputCode(model.input, NEC_INPUTS, NEC_INPUTS.hdmi1),
          set: (v: number) => model.setInput(necInputName(v)),
        }
      default:
        return null
    }
  }

  private parse(frame: Buffer, model: PanelModel): NecMessage | null {
    try {
      const m = parseNecCommand(frame)
      return m.id === model.id || m.id === 0 ? m : null
    } catch {
      return null
    }
  }
}
