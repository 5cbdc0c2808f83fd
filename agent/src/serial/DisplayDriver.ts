/**
 * DisplayDriver: owns one panel port (RS232 device, pty, or `tcp://host:port`
 * gateway) and sends commands to it one at a time. For each command it waits
 * for the reply (framed per protocol with the shared framers; raw bytes end on
 * inter-byte silence), retries a timeout or an unreadable reply a few times
 * with growing delays, keeps the protocol's minimum gap between packets (NEC
 * > 600 ms), and reopens the port with backoff after an unplug. While the port
 * is closed, commands are held for `holdMs` (then fail "port closed"), or fail
 * at once with `whileClosed: 'fail'`.
 */
import { EventEmitter } from 'node:events'
import {
  isPanelProtocolError,
  panelProtocols,
  RawReplyCollector,
  RAW_DEFAULT_MAX_BYTES,
  type PanelProtocol,
  type PanelProtocolName,
  type PanelReply,
} from '@svc/shared/panels/index'
import type { JobOutcome } from '@svc/shared/mqtt/index'
import { systemClock, type Clock, type Timers } from '@svc/shared'
import { openPanelPort, type PanelPort, type PanelPortFactory } from './PanelPort.js'

/** Time as a dependency: the shared clock and timers in one object (systemClock, ManualClock). */
export type DriverClock = Clock & Timers

export const systemDriverClock: DriverClock = systemClock

export interface DisplayDriverOptions {
  /** Device path (`/dev/ttyUSB0`, a pty) or `tcp://host:port` for a serial-over-IP gateway. */
  path: string
  /** Framing for commands that do not name one; null = raw (reply ends on silence). Default null. */
  protocol?: PanelProtocolName | null
  /** Serial settings; default 9600 8N1 (every supported panel). */
  baudRate?: number
  dataBits?: 5 | 6 | 7 | 8
  parity?: 'none' | 'even' | 'odd'
  stopBits?: 1 | 2
  /** Reply timeout per attempt; default 2000 ms for PJLink (its replies are due within 2 s), else 1000 ms. */
  timeoutMs?: number
  /** Extra attempts after a timeout or an unreadable reply; default 2. A NAK is never retried. */
  retries?: number
  /** Delay before the first retry, doubled for each further one; default 100 ms. */
  retryDelayMs?: number
  /** Least time between the end of one exchange and the next packet; default 650 ms for NEC, else 0. */
  minGapMs?: number
  /** First reopen delay after an unplug or a failed open, doubled up to reopenMaxDelayMs; default 500 ms. */
  reopenDelayMs?: number
  reopenMaxDelayMs?: number
  /** What a command does while the port is closed: wait up to holdMs (default) or fail at once. */
  whileClosed?: 'hold' | 'fail'
  /** How long a held command waits for the port; default 10 000 ms. */
  holdMs?: number
  /** Raw replies end after this much silence; default 100 ms. */
  rawSilenceMs?: number
  openPort?: PanelPortFactory
  clock?: DriverClock
}

export interface CommandOptions {
  /** Overrides the driver's protocol for this command; null = raw. */
  protocol?: PanelProtocolName | null
  timeoutMs?: number
  retries?: number
}

export interface CommandResult {
  outcome: JobOutcome
  /** Bytes written (hex pairs, no separators). */
  sentHex: string
  /** The reply frame, or every byte read in the last attempt when no frame was found. */
  replyHex: string
  /** The parsed reply when a protocol frame was read. */
  reply?: PanelReply
  /** Why: always set for `failed`, also for `timeout` and `nak`. */
  reason?: string
  attempts: number
}

type Attempt =
  | { kind: 'ok' | 'nak'; frame: Buffer; reply?: PanelReply }
  | { kind: 'timeout'; received: Buffer }
  | { kind: 'bad'; frame: Buffer; reason: string }
  | { kind: 'failed'; received: Buffer; reason: string }

export interface DisplayDriverEvents {
  open: []
  close: [Error | undefined]
  /** Open failures and port errors; the driver keeps going. */
  warn: [Error]
}

export class DisplayDriver extends EventEmitter<DisplayDriverEvents> {
  readonly path: string
  readonly protocol: PanelProtocolName | null
  private readonly clock: DriverClock
  private readonly factory: PanelPortFactory
  private port: PanelPort | null = null
  private started = false
  private reopenDelay: number
  /** The port opened and its protocol's open commands (CEC: the adapter's set-up) are not sent yet. */
  private setupPending = false
  private reopenTimer: unknown = null
  private openWaiters = new Set<() => void>()
  private chain: Promise<unknown> = Promise.resolve()
  private onChunk: ((chunk: Buffer) => void) | null = null
  private abortAttempt: ((reason: string) => void) | null = null
  private lastExchangeEnd = -Infinity
  private readonly o: Required<Omit<DisplayDriverOptions, 'openPort' | 'clock' | 'protocol' | 'timeoutMs' | 'minGapMs'>> & {
    timeoutMs?: number
    minGapMs?: number
  }

  constructor(opts: DisplayDriverOptions) {
    super()
    if (typeof opts.path !== 'string' || opts.path === '') throw new TypeError('DisplayDriver: path is required')
    for (const k of ['timeoutMs', 'retries', 'retryDelayMs', 'minGapMs', 'reopenDelayMs', 'reopenMaxDelayMs', 'holdMs', 'rawSilenceMs'] as const) {
      const v = opts[k]
      if (v !== undefined && (!Number.isFinite(v) || v < 0)) throw new TypeError(`DisplayDriver: ${k} must be a number of at least 0`)
    }
    if (opts.protocol != null && !Object.hasOwn(panelProtocols, opts.protocol)) throw new TypeError(`DisplayDriver: unknown protocol ${opts.protocol}`)
    this.path = opts.path
    this.protocol = opts.protocol ?? null
    this.clock = opts.clock ?? systemDriverClock
    this.factory = opts.openPort ?? openPanelPort
    this.o = {
      path: opts.path,
      baudRate: opts.baudRate ?? 9600,
      dataBits: opts.dataBits ?? 8,
      parity: opts.parity ?? 'none',
      stopBits: opts.stopBits ?? 1,
      retries: opts.retries ?? 2,
      retryDelayMs: opts.retryDelayMs ?? 100,
      reopenDelayMs: opts.reopenDelayMs ?? 500,
      reopenMaxDelayMs: opts.reopenMaxDelayMs ?? 30_000,
      whileClosed: opts.whileClosed ?? 'hold',
      holdMs: opts.holdMs ?? 10_000,
      rawSilenceMs: opts.rawSilenceMs ?? 100,
      ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
      ...(opts.minGapMs !== undefined ? { minGapMs: opts.minGapMs } : {}),
    }
    this.reopenDelay = this.o.reopenDelayMs
  }

  get isOpen(): boolean {
    return this.port?.isOpen ?? false
  }

  /** Opens the port; a failure is reported as `warn` and retried with backoff. */
  async start(): Promise<void> {
    if (this.started) return
    this.started = true
    await this.connect()
  }

  /** Closes the port and fails whatever waits for it. */
  async stop(): Promise<void> {
    this.started = false
    if (this.reopenTimer !== null) this.clock.clearTimer(this.reopenTimer)
    this.reopenTimer = null
    this.abortAttempt?.('driver stopped')
    for (const w of this.openWaiters) w()
    const port = this.port
    this.port = null
    if (port) {
      port.removeAllListeners()
      port.on('error', () => undefined)
      if (port.isOpen) await new Promise<void>((r) => port.close(() => r()))
    }
    await this.chain.catch(() => undefined)
  }

  /** Queues a command; resolves with its outcome (never rejects). */
  send(bytes: Uint8Array, opts: CommandOptions = {}): Promise<CommandResult> {
    const run = this.chain.then(() => this.execute(Buffer.from(bytes), opts))
    this.chain = run.catch(() => undefined)
    return run
  }

  private timeoutFor(protocol: PanelProtocolName | null): number {
    return this.o.timeoutMs ?? (protocol === 'pjlink' ? 2000 : 1000)
  }

  private gapFor(protocol: PanelProtocolName | null): number {
    return this.o.minGapMs ?? (protocol === 'nec' ? 650 : 0)
  }

  private async execute(bytes: Buffer, opts: CommandOptions): Promise<CommandResult> {
    const protocol = opts.protocol !== undefined ? opts.protocol : this.protocol
    const codec = protocol ? panelProtocols[protocol] : null
    const timeoutMs = opts.timeoutMs ?? this.timeoutFor(protocol)
    const attempts = 1 + (opts.retries ?? this.o.retries)
    const sentHex = bytes.toString('hex')
    let last: Attempt | null = null
    let n = 0
    for (n = 1; n <= attempts; n++) {
      if (n > 1) await this.sleep(this.o.retryDelayMs * 2 ** (n - 2))
      if (!(await this.waitOpen())) {
        return { outcome: 'failed', sentHex: last ? sentHex : '', replyHex: '', reason: this.started ? 'port closed' : 'driver stopped', attempts: n - 1 }
      }
      if (this.setupPending) await this.setUp()
      await this.sleep(this.lastExchangeEnd + this.gapFor(protocol) - this.clock.now().getTime())
      last = await this.attempt(bytes, codec, timeoutMs)
      if (last.kind === 'ok') return { outcome: 'ok', sentHex, replyHex: last.frame.toString('hex'), ...(last.reply ? { reply: last.reply } : {}), attempts: n }
      if (last.kind === 'nak') {
        const code = last.reply?.errorCode
        return {
          outcome: 'nak',
          sentHex,
          replyHex: last.frame.toString('hex'),
          ...(last.reply ? { reply: last.reply } : {}),
          reason: code !== undefined ? `panel rejected the command (${String(code)})` : 'panel rejected the command',
          attempts: n,
        }
      }
      if (!this.started) break
    }
    const tries = Math.min(n, attempts)
    if (!last || last.kind === 'failed')
      return { outcome: 'failed', sentHex, replyHex: last ? last.received.toString('hex') : '', reason: last?.reason ?? 'not sent', attempts: tries }
    if (last.kind === 'bad') return { outcome: 'failed', sentHex, replyHex: last.frame.toString('hex'), reason: last.reason, attempts: tries }
    return {
      outcome: 'timeout',
      sentHex,
      replyHex: 'received' in last ? last.received.toString('hex') : '',
      reason: `no reply within ${timeoutMs} ms (${tries} attempt${tries > 1 ? 's' : ''})`,
      attempts: tries,
    }
  }

  /**
   * The port's protocol's open commands, once after each open and before the first command
   * (run inside the queue, so nothing else is on the line). One that fails is said (`warn`)
   * and the command goes ahead: an adapter that refuses its set-up may still transmit.
   */
  private async setUp(): Promise<void> {
    this.setupPending = false
    const codec = this.protocol ? panelProtocols[this.protocol] : null
    for (const bytes of codec?.openCommands?.() ?? []) {
      if (!this.isOpen) return
      await this.sleep(this.lastExchangeEnd + this.gapFor(this.protocol) - this.clock.now().getTime())
      const a = await this.attempt(bytes, codec, this.timeoutFor(this.protocol))
      if (a.kind === 'ok') continue
      const why = a.kind === 'timeout' ? 'no answer' : 'reason' in a ? a.reason : `refused (${String(a.reply?.errorCode ?? 'rejected')})`
      this.warn(new Error(`${codec!.name}: the set-up command ${bytes.toString('hex')} sent on opening ${this.o.path}: ${why}`))
    }
  }

  /**
   * One write and the wait for its reply. A protocol that cuts commands into pieces (CEC:
   * one transmission each) gets each piece written after the previous one's reply; the
   * attempt's reply is the pieces' replies together, read as the last one's.
   */
  private attempt(bytes: Buffer, codec: PanelProtocol | null, timeoutMs: number): Promise<Attempt> {
    const port = this.port!
    const pieces = codec?.splitCommand?.(bytes) ?? [bytes]
    return new Promise<Attempt>((resolve) => {
      const received: Buffer[] = []
      const answered: Buffer[] = []
      let piece = 0
      let framer = codec?.createReplyFramer(pieces[0]) ?? null
      const raw = codec ? null : new RawReplyCollector({ kind: 'raw', silenceMs: this.o.rawSilenceMs, maxBytes: RAW_DEFAULT_MAX_BYTES })
      let silence: unknown = null
      let settled = false
      const finish = (a: Attempt) => {
        if (settled) return
        settled = true
        this.clock.clearTimer(timer)
        if (silence !== null) this.clock.clearTimer(silence)
        this.onChunk = null
        this.abortAttempt = null
        this.lastExchangeEnd = this.clock.now().getTime()
        resolve(a)
      }
      const all = () => Buffer.concat(received)
      const onTimeout = () => {
        const rest = raw?.poll(Number.POSITIVE_INFINITY)
        finish(rest?.length ? { kind: 'ok', frame: rest } : { kind: 'timeout', received: all() })
      }
      let timer = this.clock.setTimer(onTimeout, timeoutMs)
      this.abortAttempt = (reason) => finish({ kind: 'failed', received: all(), reason })
      const pollRaw = () => {
        silence = null
        const reply = raw!.poll(this.clock.now().getTime())
        if (reply) return finish({ kind: 'ok', frame: reply })
        const at = raw!.deadline()
        if (at !== null) silence = this.clock.setTimer(pollRaw, Math.max(0, at - this.clock.now().getTime()))
      }
      this.onChunk = (chunk) => {
        received.push(chunk)
        if (raw) {
          const full = raw.push(chunk, this.clock.now().getTime())
          if (full) return finish({ kind: 'ok', frame: full })
          if (silence !== null) this.clock.clearTimer(silence)
          silence = this.clock.setTimer(pollRaw, this.o.rawSilenceMs)
          return
        }
        for (const frame of framer!.push(chunk)) {
          let reply: PanelReply
          try {
            reply = codec!.parseReply(frame)
          } catch (err) {
            const reason = isPanelProtocolError(err, 'checksum') ? 'bad checksum' : `unreadable reply: ${err instanceof Error ? err.message : String(err)}`
            return finish({ kind: 'bad', frame, reason })
          }
          if (reply.kind === 'greeting' && reply.ok) continue // PJLink greets on connect
          if (reply.ok && piece < pieces.length - 1) {
            answered.push(frame)
            piece++
            framer = codec!.createReplyFramer(pieces[piece])
            this.clock.clearTimer(timer)
            timer = this.clock.setTimer(onTimeout, timeoutMs)
            write(pieces[piece]!)
            return
          }
          const whole = answered.length ? Buffer.concat([...answered, frame]) : frame
          return finish(reply.ok ? { kind: 'ok', frame: whole, reply } : { kind: 'nak', frame: whole, reply })
        }
      }
      const write = (b: Buffer) =>
        port.write(b, (err) => {
          if (err) finish({ kind: 'failed', received: all(), reason: `write failed: ${err.message}` })
        })
      write(pieces[0]!)
    })
  }

  private async connect(): Promise<void> {
    if (!this.started) return
    let port: PanelPort
    try {
      port = this.factory({ path: this.o.path, baudRate: this.o.baudRate, dataBits: this.o.dataBits, parity: this.o.parity, stopBits: this.o.stopBits })
      await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())))
    } catch (err) {
      this.warn(err)
      this.scheduleReopen()
      return
    }
    if (!this.started) {
      port.close(() => undefined)
      return
    }
    this.port = port
    this.reopenDelay = this.o.reopenDelayMs
    this.setupPending = true
    port.on('data', (chunk) => this.onChunk?.(chunk))
    port.on('error', (err) => this.warn(err))
    port.on('close', (err) => this.onClose(port, err))
    this.emit('open')
    for (const w of [...this.openWaiters]) w()
  }

  private onClose(port: PanelPort, err?: Error & { disconnected?: boolean }): void {
    if (this.port !== port) return
    this.port = null
    port.removeAllListeners()
    port.on('error', () => undefined)
    this.emit('close', err)
    this.abortAttempt?.(err?.disconnected ? 'disconnected' : 'port closed')
    this.scheduleReopen()
  }

  private scheduleReopen(): void {
    if (!this.started || this.reopenTimer !== null) return
    const delay = this.reopenDelay
    this.reopenDelay = Math.min(this.reopenDelay * 2, this.o.reopenMaxDelayMs)
    this.reopenTimer = this.clock.setTimer(() => {
      this.reopenTimer = null
      void this.connect()
    }, delay)
  }

  /** True once the port is open; false when it stays closed past holdMs (or at once with whileClosed 'fail'). */
  private waitOpen(): Promise<boolean> {
    if (this.isOpen) return Promise.resolve(true)
    if (!this.started || this.o.whileClosed === 'fail') return Promise.resolve(false)
    return new Promise<boolean>((resolve) => {
      const done = () => {
        this.openWaiters.delete(done)
        this.clock.clearTimer(timer)
        resolve(this.isOpen)
      }
      const timer = this.clock.setTimer(done, this.o.holdMs)
      this.openWaiters.add(done)
    })
  }

  private sleep(ms: number): Promise<void> {
    if (!(ms > 0)) return Promise.resolve()
    return new Promise((resolve) => this.clock.setTimer(resolve, ms))
  }

  private warn(err: unknown): void {
    if (this.listenerCount('warn') > 0) this.emit('warn', err instanceof Error ? err : new Error(String(err)))
  }
}
