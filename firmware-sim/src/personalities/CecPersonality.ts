/**
 * A Pulse-Eight USB-CEC adapter with a TV behind it. The adapter accepts each of its
 * messages (COMMAND_ACCEPTED), puts the CEC frame on the bus and reports the result;
 * the TV (logical address 0) acts on what it hears and answers queries:
 *
 * - Image View On / Text View On: the TV turns on; Standby: it goes to standby.
 * - Active Source / Set Stream Path: the TV shows that HDMI input.
 * - Give Device Power Status → Report Power Status; Give Physical Address → 0.0.0.0.
 * - Request Active Source: the device on the shown input answers with Active Source,
 *   except on the player's own input (the panel's id), where the player itself would
 *   have to answer.
 * - User Control Pressed Mute Function / Restore Volume Function / Mute: mute, unmute, toggle.
 * - Anything else sent to the TV: Feature Abort (unrecognized opcode).
 *
 * The adapter starts as a fresh one does: not under the host's control and acknowledging
 * no logical address. SET_CONTROLLED and SET_ACK_MASK change that (`adapter`); a TV's
 * message to an address outside the mask is reported unacknowledged (FRAME flags without
 * ACK), as the adapter hears it go unanswered on the bus.
 *
 * Faults: `no-cec` (a TV that does not speak CEC: nothing acknowledges a message sent
 * to it, TRANSMIT_FAILED_ACK), `ignore-standby` (SimulatedPanel: acknowledged, not
 * obeyed), `nak` (the adapter rejects every message), `bad-checksum` (a broken escape).
 */
import {
  CecAddress,
  CecOpcode,
  CecPowerStatus,
  CecUserControl,
  CecAbortReason,
  P8Assembler,
  P8Code,
  cecInputName,
  encodeP8Message,
  encodeP8Received,
  splitP8Messages,
  type CecMessage,
  P8TransmissionFramer,
  type P8Message,
} from '@svc/shared/panels/index'
import type { Faults } from '../faults.js'
import type { PanelModel } from '../PanelModel.js'
import type { Personality } from './Personality.js'

/** The logical address of the other source devices on the TV's inputs (Playback Device 2). */
export const CEC_SIM_OTHER_SOURCE = CecAddress.playback2

const POWER_STATUS = {
  on: CecPowerStatus.on,
  off: CecPowerStatus.standby,
  standby: CecPowerStatus.standby,
  warming: CecPowerStatus.toOn,
  cooling: CecPowerStatus.toStandby,
} as const

const accepted = (m: P8Message) => encodeP8Message({ code: P8Code.commandAccepted, data: Uint8Array.of(m.code) })
const result = (code: number) => encodeP8Message({ code, data: new Uint8Array() })
const cec = (initiator: number, destination: number, opcode: number, ...operands: number[]): CecMessage => ({
  initiator,
  destination,
  opcode,
  operands: Uint8Array.from(operands),
})

export class CecPersonality implements Personality {
  readonly protocol = 'cec' as const
  private readonly assembler = new P8Assembler()
  private controlled = false
  private ackMask = 0

  /** The adapter's set-up as the host left it: under its control, the logical addresses it acknowledges. */
  get adapter(): { controlled: boolean; ackMask: number } {
    return { controlled: this.controlled, ackMask: this.ackMask }
  }

  createFramer() {
    return new P8TransmissionFramer()
  }

  greeting(): null {
    return null
  }

  answer(frame: Buffer, model: PanelModel, faults: Faults = {}): Buffer | null {
    let messages: P8Message[]
    try {
      messages = splitP8Messages(frame)
    } catch {
      return result(P8Code.commandRejected)
    }
    const out: Buffer[] = []
    for (const m of messages) {
      let event: ReturnType<P8Assembler['push']>
      try {
        event = this.assembler.push(m)
      } catch {
        out.push(encodeP8Message({ code: P8Code.commandRejected, data: Uint8Array.of(m.code) }))
        continue
      }
      out.push(this.adapterAnswer(m))
      if (event?.kind !== 'transmit') continue
      const msg = event.message
      const directed = msg.destination !== CecAddress.broadcast
      // A message to the TV needs its acknowledgement; without CEC nobody gives it.
      // A broadcast succeeds unless someone objects.
      if (faults.noCec && directed) {
        out.push(result(P8Code.transmitFailedAck))
        continue
      }
      if (directed && msg.destination !== CecAddress.tv && msg.destination !== CEC_SIM_OTHER_SOURCE) {
        out.push(result(P8Code.transmitFailedAck)) // no such device on this bus
        continue
      }
      out.push(result(P8Code.transmitSucceeded))
      if (faults.noCec) continue
      const answer = this.tv(msg, model)
      if (answer) out.push(encodeP8Received(answer, answer.destination === CecAddress.broadcast || (this.ackMask & (1 << answer.destination)) !== 0))
    }
    return Buffer.concat(out)
  }

  nak(frame: Buffer): Buffer | null {
    try {
      return Buffer.concat(splitP8Messages(frame).map((m) => encodeP8Message({ code: P8Code.commandRejected, data: Uint8Array.of(m.code) })))
    } catch {
      return result(P8Code.commandRejected)
    }
  }

  /** The last message loses its ending: an escape byte followed by another escape. */
  corrupt(reply: Buffer): Buffer {
    if (reply.length < 2) return reply
    return Buffer.concat([reply.subarray(0, reply.length - 1), Buffer.from([0xfd, 0xfd, 0xfe])])
  }

  private adapterAnswer(m: P8Message): Buffer {
    if (m.code === P8Code.firmwareVersion) return encodeP8Message({ code: P8Code.firmwareVersion, data: Uint8Array.of(0, 12) })
    if (m.code === P8Code.setControlled) {
      if (m.data.length !== 1) return encodeP8Message({ code: P8Code.commandRejected, data: Uint8Array.of(m.code) })
      this.controlled = m.data[0] !== 0
    }
    if (m.code === P8Code.setAckMask) {
      if (m.data.length !== 2) return encodeP8Message({ code: P8Code.commandRejected, data: Uint8Array.of(m.code) })
      this.ackMask = (m.data[0]! << 8) | m.data[1]!
    }
    return accepted(m)
  }

  /** The TV's (or the shown source's) reaction to a message on the bus. */
  private tv(m: CecMessage, model: PanelModel): CecMessage | null {
    const toTv = m.destination === CecAddress.tv
    const from = CecAddress.tv
    const pa = m.operands.length >= 2 ? (m.operands[0]! << 8) | m.operands[1]! : 0
    switch (m.opcode) {
      case CecOpcode.imageViewOn:
      case CecOpcode.textViewOn:
        model.setPower('on')
        return null
      case CecOpcode.standby:
        model.setPower('standby')
        return null
      case CecOpcode.activeSource:
      case CecOpcode.setStreamPath:
        model.setInput(cecInputName(pa))
        return null
      case CecOpcode.giveDevicePowerStatus:
        return toTv ? cec(from, m.initiator, CecOpcode.reportPowerStatus, POWER_STATUS[model.power]) : null
      case CecOpcode.givePhysicalAddress:
        return toTv ? cec(from, CecAddress.broadcast, CecOpcode.reportPhysicalAddress, 0, 0, 0) : null
      case CecOpcode.requestActiveSource: {
        const shown = /^hdmi(\d+)$/.exec(model.input)
        const port = shown ? Number(shown[1]) : 0
        if (port < 1 || port > 15 || port === model.id) return null
        return cec(CEC_SIM_OTHER_SOURCE, CecAddress.broadcast, CecOpcode.activeSource, port << 4, 0)
      }
      case CecOpcode.userControlPressed: {
        const key = m.operands[0]
        if (key === CecUserControl.muteFunction) model.setMuted(true)
        else if (key === CecUserControl.restoreVolumeFunction) model.setMuted(false)
        else if (key === CecUserControl.mute) model.setMuted(!model.muted)
        return null
      }
      case CecOpcode.userControlReleased:
      case CecOpcode.featureAbort:
      case CecOpcode.reportPowerStatus:
      case CecOpcode.inactiveSource:
        return null
      default:
        if (!toTv || m.opcode === undefined) return null
        return cec(from, m.initiator, CecOpcode.featureAbort, m.opcode, CecAbortReason.unrecognized)
    }
  }
}
