/**
 * The simulated panel: one PanelModel speaking one protocol personality to
 * any number of links (TCP connections, a serial port), with fault injection,
 * a scripted `onHostFrame` hook and a trace of every byte.
 *
 * Transports only move bytes: they call `attach(link)` per connection, feed
 * what they read into the session, and listen for `unplug`.
 */
import { EventEmitter } from 'node:events'
import { RawReplyCollector, type Framer } from '@svc/shared/panels/index'
import { systemClock, type Clock, type Timers } from './Clock.js'
import { describeFaults, type Faults } from './faults.js'
import { PanelModel, type PanelChange, type PanelState } from './PanelModel.js'
import { createPersonality, type PersonalityOptions } from './personalities/index.js'
import type { Personality, SimProtocol } from './personalities/Personality.js'
import type { TraceEntry } from './trace.js'

/** Where the panel's bytes go. */
export interface PanelLink {
  readonly label: string
  write(bytes: Buffer): void
}

export interface HostFrameContext {
  readonly panel: SimulatedPanel
  readonly model: PanelModel
  readonly personality: Personality
  readonly link: PanelLink
}

/**
 * Scripted behaviour, asked first for every host frame. Return a Buffer to
 * send instead of the normal answer, `null` to stay silent, or `undefined`
 * to carry on normally (faults still apply to the normal answer; delay,
 * split and garbage also apply to the hook's bytes).
 */
export type HostFrameHook = (frame: Buffer, ctx: HostFrameContext) => Buffer | null | undefined | Promise<Buffer | null | undefined>

export interface SimulatedPanelOptions {
  protocol: SimProtocol
  /** Initial state; `id` is the set id the panel answers to. */
  state?: Partial<PanelState>
  /** Use this personality instead of the stock one for `protocol`. */
  personality?: Personality
  personalityOptions?: PersonalityOptions
  faults?: Faults
  onHostFrame?: HostFrameHook
  clock?: Clock & Timers
}

export interface FrameEvent {
  link: string
  frame: Buffer
  reply: Buffer | null
}

export interface SimulatedPanelEvents {
  trace: [TraceEntry]
  state: [PanelChange]
  frame: [FrameEvent]
  faults: [Faults]
  unplug: []
  /** A hook or write failed; the panel keeps running. */
  error: [Error]
}

export class SimulatedPanel extends EventEmitter<SimulatedPanelEvents> {
  readonly protocol: SimProtocol
  readonly model: PanelModel
  readonly personality: Personality
  readonly clock: Clock & Timers
  onHostFrame: HostFrameHook | undefined
  private currentFaults: Faults
  private readonly sessions = new Set<PanelSession>()

  constructor(opts: SimulatedPanelOptions) {
    super()
    this.protocol = opts.protocol
    this.clock = opts.clock ?? systemClock
    this.model = new PanelModel(opts.state)
    this.personality = opts.personality ?? createPersonality(opts.protocol, { ...opts.personalityOptions, clock: this.clock })
    this.currentFaults = { ...opts.faults }
    this.onHostFrame = opts.onHostFrame
    this.model.on('change', (c) => this.emit('state', c))
  }

  get state(): PanelState {
    return this.model.state
  }

  get faults(): Faults {
    return { ...this.currentFaults }
  }

  /** Adds to the active faults (a key set to undefined/false/null clears that fault). */
  setFaults(faults: Faults): void {
    this.currentFaults = { ...this.currentFaults, ...faults }
    this.emit('faults', this.faults)
  }

  clearFaults(): void {
    this.currentFaults = {}
    this.emit('faults', this.faults)
  }

  describeFaults(): string[] {
    return describeFaults(this.currentFaults)
  }

  /** Pulls the cable: every transport drops its connection / port. */
  unplug(): void {
    this.emit('unplug')
  }

  /** Starts talking to a host over `link`; the transport feeds read bytes into the session. */
  attach(link: PanelLink): PanelSession {
    const session = new PanelSession(this, link)
    this.sessions.add(session)
    const greeting = this.personality.greeting(this.model)
    if (greeting) session.send(greeting)
    return session
  }

  /** @internal */
  detach(session: PanelSession): void {
    this.sessions.delete(session)
  }

  /** Resolves when every session has answered every frame received so far. */
  async idle(): Promise<void> {
    await Promise.all([...this.sessions].map((s) => s.idle()))
  }

  /** Stops every session's pending timers and personality timers. */
  close(): void {
    for (const s of [...this.sessions]) s.close()
    const p = this.personality as { dispose?: () => void }
    p.dispose?.()
  }

  /** @internal Emits `error` when someone listens, else warns on stderr: a panel never crashes its host. */
  reportError(err: unknown): void {
    const e = err instanceof Error ? err : new Error(String(err))
    if (this.listenerCount('error') > 0) this.emit('error', e)
    else process.stderr.write(`firmware-sim: ${e.message}\n`)
  }

  /** @internal */
  trace(direction: 'rx' | 'tx', link: PanelLink, bytes: Buffer): void {
    this.emit('trace', { at: this.clock.now().getTime(), direction, link: link.label, bytes: Buffer.from(bytes) })
  }

  /** @internal Computes the panel's answer to one frame, faults and hook included. */
  async respond(frame: Buffer, link: PanelLink): Promise<Buffer | null> {
    if (this.onHostFrame) {
      const scripted = await this.onHostFrame(frame, { panel: this, model: this.model, personality: this.personality, link })
      if (scripted !== undefined) return scripted
    }
    const f = this.currentFaults
    if (f.noReply) return null
    // A panel that does not obey power commands answers them as usual and stays as it is
    // (with ignore-standby: it still turns on, but never off).
    const model =
      f.ignorePower || f.ignoreStandby
        ? new Proxy(this.model, {
            get: (target, prop) => {
              if (prop === 'setPower') return (p: PanelState['power']) => (f.ignorePower || p !== 'on' ? undefined : target.setPower(p))
              const v = Reflect.get(target, prop, target)
              return typeof v === 'function' ? v.bind(target) : v
            },
          })
        : this.model
    let reply = f.nak ? this.personality.nak(frame, model) : this.personality.answer(frame, model, f)
    if (reply && f.badChecksum) reply = this.personality.corrupt(reply)
    return reply
  }
}

/** One host connection. Frames are answered one after another, in order. */
export class PanelSession {
  private readonly framer: Framer | null
  private readonly raw: RawReplyCollector | null
  private rawTimer: unknown = null
  private queue: Promise<void> = Promise.resolve()
  private closed = false
  private readonly timers = new Map<unknown, () => void>()

  constructor(
    private readonly panel: SimulatedPanel,
    readonly link: PanelLink,
  ) {
    const p = panel.personality
    this.framer = p.createFramer ? p.createFramer() : null
    this.raw = this.framer ? null : new RawReplyCollector({ kind: 'raw', silenceMs: p.silenceMs ?? 30, maxBytes: 4096 })
  }

  /** Bytes read from the host. */
  feed(chunk: Buffer): void {
    if (this.closed || chunk.length === 0) return
    this.panel.trace('rx', this.link, chunk)
    if (this.framer) {
      for (const frame of this.framer.push(chunk)) this.enqueue(frame)
      return
    }
    const full = this.raw!.push(chunk, this.panel.clock.now().getTime())
    if (full) this.enqueue(full)
    else this.armRawTimer()
  }

  /** Sends bytes to the host now (greeting, or a reply after faults). */
  send(bytes: Buffer): void {
    if (this.closed || bytes.length === 0) return
    this.panel.trace('tx', this.link, bytes)
    try {
      this.link.write(bytes)
    } catch (err) {
      this.panel.reportError(err)
    }
  }

  close(): void {
    if (this.closed) return
    this.closed = true
    for (const [t, resolve] of this.timers) {
      this.panel.clock.clearTimer(t)
      resolve()
    }
    this.timers.clear()
    if (this.rawTimer !== null) this.panel.clock.clearTimer(this.rawTimer)
    this.panel.detach(this)
  }

  /** Resolves when every frame received so far has been answered. */
  idle(): Promise<void> {
    return this.queue
  }

  private armRawTimer(): void {
    const clock = this.panel.clock
    if (this.rawTimer !== null) clock.clearTimer(this.rawTimer)
    const deadline = this.raw!.deadline()
    if (deadline === null) return
    this.rawTimer = clock.setTimer(
      () => {
        this.rawTimer = null
        const frame = this.raw!.poll(clock.now().getTime())
        if (frame) this.enqueue(frame)
        else this.armRawTimer()
      },
      Math.max(0, deadline - clock.now().getTime()),
    )
  }

  private enqueue(frame: Buffer): void {
    this.queue = this.queue.then(() => this.handle(frame)).catch((err: unknown) => this.panel.reportError(err))
  }

  private async handle(frame: Buffer): Promise<void> {
    if (this.closed) return
    const reply = await this.panel.respond(frame, this.link)
    this.panel.emit('frame', { link: this.link.label, frame, reply })
    if (!reply) return
    const f = this.panel.faults
    await this.wait(f.delayMs ?? 0)
    if (f.garbage?.length) this.send(f.garbage)
    if (!f.split) {
      this.send(reply)
      return
    }
    const size = Math.max(1, f.split.chunkSize)
    for (let i = 0; i < reply.length; i += size) {
      if (i > 0) await this.wait(f.split.gapMs)
      this.send(reply.subarray(i, i + size))
    }
  }

  private wait(ms: number): Promise<void> {
    if (ms <= 0 || this.closed) return Promise.resolve()
    return new Promise((resolve) => {
      const t = this.panel.clock.setTimer(() => {
        this.timers.delete(t)
        resolve()
      }, ms)
      this.timers.set(t, resolve)
    })
  }
}
