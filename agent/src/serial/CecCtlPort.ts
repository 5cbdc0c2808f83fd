/**
 * The kernel's CEC adapters (`/dev/cecN`: a Raspberry Pi's HDMI port, a Pulse-Eight under the
 * pulse8-cec driver …) through `cec-ctl` (v4l-utils), shaped like a Pulse-Eight adapter on a
 * serial port: the panel protocol `cec` writes the adapter's messages as usual; this port
 * answers each with COMMAND_ACCEPTED, runs one `cec-ctl` per CEC transmission, and turns
 * its output into the adapter's answer (TRANSMIT_SUCCEEDED / TRANSMIT_FAILED_ACK and, for
 * a query, the reply as FRAME_START / FRAME_DATA). Everything above the port (codec,
 * retries, read-back, operating hours) works unchanged.
 *
 * On open the adapter is configured as a playback device (`cec-ctl -d DEV --playback`).
 * cec-ctl waits for the reply of a directed query it knows (Give Device Power Status) and
 * prints it; broadcast queries (Request Active Source) get no answer through it (the kernel
 * waits for replies to directed messages only), so the port says so after the transmit
 * result (encodeP8NoAnswer) and the driver stops waiting at once instead of at its timeout.
 */
import { spawn } from 'node:child_process'
import { EventEmitter } from 'node:events'
import {
  CecOpcode,
  P8Assembler,
  P8Code,
  P8MessageFramer,
  CecAddress,
  cecResponseOpcode,
  encodeP8Message,
  encodeP8NoAnswer,
  encodeP8Received,
  formatPhysicalAddress,
  parseP8Message,
  type CecMessage,
} from '@svc/shared/panels/index'

const CEC_DEVICE = /^\/dev\/cec\d+$/

export function isCecDevicePath(path: string): boolean {
  return CEC_DEVICE.test(path)
}

export interface CecCtlPortOptions {
  /** The program; default `cec-ctl` (found on PATH). */
  command?: string
  env?: NodeJS.ProcessEnv
  /** A run that takes longer is killed and reported as a failed transmission; default 5000 ms. */
  runTimeoutMs?: number
}

export interface CecCtlRun {
  code: number | null
  stdout: string
  stderr: string
  /** The program could not be started (ENOENT: not installed). */
  spawnError?: NodeJS.ErrnoException
}

/** The error code of an open that failed because `cec-ctl` is not installed. */
export const CEC_CTL_MISSING = 'CEC_CTL_MISSING'

/** cec-ctl's options for one CEC message: the named option where it has one (so it waits for the reply). */
export function cecCtlArgs(device: string, m: CecMessage): string[] {
  const base = ['-d', device, '--to', String(m.destination)]
  const pa = () => formatPhysicalAddress((m.operands[0]! << 8) | m.operands[1]!)
  switch (m.opcode) {
    case CecOpcode.imageViewOn:
      return [...base, '--image-view-on']
    case CecOpcode.textViewOn:
      return [...base, '--text-view-on']
    case CecOpcode.standby:
      return [...base, '--standby']
    case CecOpcode.giveDevicePowerStatus:
      return [...base, '--give-device-power-status']
    case CecOpcode.activeSource:
      return [...base, '--active-source', `phys-addr=${pa()}`]
    case CecOpcode.setStreamPath:
      return [...base, '--set-stream-path', `phys-addr=${pa()}`]
    case CecOpcode.requestActiveSource:
      return [...base, '--request-active-source']
    case CecOpcode.userControlPressed:
      return [...base, '--user-control-pressed', `ui-cmd=0x${m.operands[0]!.toString(16).padStart(2, '0')}`]
    case CecOpcode.userControlReleased:
      return [...base, '--user-control-released']
    default: {
      const payload = [...m.operands].map((b) => `0x${b.toString(16).padStart(2, '0')}`).join(':')
      return [...base, '--custom-command', `cmd=0x${(m.opcode ?? 0).toString(16).padStart(2, '0')}${payload ? `,payload=${payload}` : ''}`]
    }
  }
}

/**
 * The adapter's answer to one transmission, from cec-ctl's output: the transmit status
 * line ("Tx, Not Acknowledged (4), Max Retries" …) and a reply block ("Received from TV (0):"
 * then e.g. "REPORT_POWER_STATUS (0x90):" and "pwr-state: on (0x00)").
 */
export function cecCtlAnswer(run: CecCtlRun, sent: CecMessage): Buffer {
  const out = `${run.stdout}\n${run.stderr}`
  const result = (code: number) => encodeP8Message({ code, data: new Uint8Array() })
  if (/not acknowledged|\bnack\b/i.test(out)) return result(P8Code.transmitFailedAck)
  if (/arbitration lost/i.test(out)) return result(P8Code.transmitFailedLine)
  if (/\bTx,.*\b(error|low drive)\b/i.test(out) || run.code !== 0) return result(P8Code.transmitFailedTimeoutLine)
  const parts = [result(P8Code.transmitSucceeded)]
  const from = /Received from [^\n]*\((\d{1,2})\)/.exec(out)
  const initiator = from ? Number(from[1]) : sent.destination
  const reply = (opcode: number, ...operands: number[]) =>
    parts.push(encodeP8Received({ initiator, destination: sent.initiator, opcode, operands: Uint8Array.from(operands) }))
  const power = /REPORT_POWER_STATUS \(0x90\):\s*\n\s*pwr-state:[^\n(]*\((0x[0-9a-f]+)\)/i.exec(out)
  const active = /ACTIVE_SOURCE \(0x82\):\s*\n\s*phys-addr:\s*([0-9a-f])\.([0-9a-f])\.([0-9a-f])\.([0-9a-f])/i.exec(out)
  const abort = /FEATURE_ABORT \(0x00\):\s*\n\s*abort-msg:[^\n(]*\((0x[0-9a-f]+)[,)][^\n]*\n\s*reason:[^\n(]*\((0x[0-9a-f]+)\)/i.exec(out)
  if (power && from) reply(CecOpcode.reportPowerStatus, Number(power[1]))
  else if (active && from) {
    const [a, b, c, d] = active.slice(1, 5).map((x) => parseInt(x, 16)) as [number, number, number, number]
    parts.push(encodeP8Received({ initiator, destination: 15, opcode: CecOpcode.activeSource, operands: Uint8Array.of((a << 4) | b, (c << 4) | d) }))
  } else if (abort && from) reply(CecOpcode.featureAbort, Number(abort[1]), Number(abort[2]))
  else if (sent.destination === CecAddress.broadcast && cecResponseOpcode(sent.opcode) !== null) parts.push(encodeP8NoAnswer())
  return Buffer.concat(parts)
}

/** Structurally a PanelPort (PanelPort.ts's factory returns it as one). */
export class CecCtlPort extends EventEmitter {
  private opened = false
  private readonly framer = new P8MessageFramer()
  private readonly assembler = new P8Assembler()
  private chain: Promise<void> = Promise.resolve()
  private readonly command: string
  private readonly runTimeoutMs: number

  constructor(
    readonly device: string,
    private readonly o: CecCtlPortOptions = {},
  ) {
    super()
    if (!isCecDevicePath(device)) throw new TypeError(`"${device}" is not a /dev/cecN device`)
    this.command = o.command ?? 'cec-ctl'
    this.runTimeoutMs = o.runTimeoutMs ?? 5000
  }

  get isOpen(): boolean {
    return this.opened
  }

  open(callback: (err: Error | null) => void): void {
    void this.run(['-d', this.device, '--playback']).then((r) => {
      if (r.spawnError?.code === 'ENOENT')
        return callback(Object.assign(new Error(`${this.command} is not installed (apt-get install -y v4l-utils)`), { code: CEC_CTL_MISSING }))
      if (r.code !== 0) return callback(new Error(`${this.command} -d ${this.device} --playback failed: ${(r.stderr || r.stdout).trim().slice(0, 300)}`))
      this.opened = true
      callback(null)
    })
  }

  close(callback: (err: Error | null) => void): void {
    const was = this.opened
    this.opened = false
    void this.chain.then(() => {
      if (was) this.emit('close')
      callback(null)
    })
  }

  write(data: Buffer, callback?: (err: Error | null | undefined) => void): boolean {
    if (!this.opened) {
      callback?.(new Error('port is not open'))
      return false
    }
    for (const raw of this.framer.push(data)) {
      let answer: () => Promise<Buffer>
      try {
        const m = parseP8Message(raw)
        const accepted = encodeP8Message({ code: P8Code.commandAccepted, data: Uint8Array.of(m.code) })
        const event = this.assembler.push(m)
        answer =
          event?.kind === 'transmit'
            ? async () => {
                const message = event.message
                const r = await this.run(cecCtlArgs(this.device, message))
                return Buffer.concat([accepted, cecCtlAnswer(r, message)])
              }
            : async () => accepted
      } catch {
        answer = async () => encodeP8Message({ code: P8Code.commandRejected, data: new Uint8Array() })
      }
      this.chain = this.chain.then(async () => {
        const bytes = await answer()
        if (this.opened) this.emit('data', bytes)
      })
    }
    queueMicrotask(() => callback?.(null))
    return true
  }

  private run(args: string[]): Promise<CecCtlRun> {
    return new Promise((resolve) => {
      let stdout = ''
      let stderr = ''
      let child: ReturnType<typeof spawn>
      try {
        child = spawn(this.command, args, { env: this.o.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] })
      } catch (err) {
        resolve({ code: null, stdout: '', stderr: (err as Error).message, spawnError: err as NodeJS.ErrnoException })
        return
      }
      const timer = setTimeout(() => child.kill('SIGKILL'), this.runTimeoutMs)
      child.stdout!.on('data', (c: Buffer) => (stdout += c.toString('utf8')))
      child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')))
      child.on('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(timer)
        resolve({ code: null, stdout, stderr: `${stderr}${err.message}`, spawnError: err })
      })
      child.on('close', (code) => {
        clearTimeout(timer)
        resolve({ code, stdout, stderr })
      })
    })
  }
}
