// Keeps what the screen plays in line with the cloud's desired state: validates each
// `desired` message with the shared parser, hands newer versions to the PlaybackController
// (which also re-decides on its own when casts expire or schedules turn, even offline),
// persists the applied state, and publishes `reported` whenever the decision, the version
// or the panel reading changes, and again on every (re)connect.
import { EventEmitter } from 'node:events'
import { isDeepStrictEqual } from 'node:util'
import {
  parseDesiredState,
  TOPIC_SPECS,
  type DesiredState,
  type PanelReport,
  type PanelSettings,
  type Reported,
  type VideoReport,
} from '@svc/shared/mqtt/index'
import { toPlaying, type PlaybackDecision } from '@svc/shared/playback/index'
import { PlaybackController } from '../playback/index.js'
import type { Logger } from '../runtime/Logger.js'
import type { Clock, Timers } from '../runtime/time.js'
import type { DesiredStore } from './DesiredStore.js'
import { statfsStorage, type StorageProbe } from './storage.js'
import { AGENT_VERSION } from '../version.js'

/** What the reconciler needs from the link. */
export interface ReportPublisher {
  readonly connected: boolean
  publish(kind: 'reported', message: Reported, retain: boolean): Promise<void>
}

export interface StateReconcilerOptions {
  screenId: string
  store: DesiredStore
  publisher: ReportPublisher
  log: Logger
  clock: Clock
  /** Timers for the playback controller's re-decisions. */
  timers: Timers
  /** Disk use probe (statfs of the data dir by default). */
  storage?: StorageProbe
  /**
   * Sends `reported` at least this often even when nothing changed (fresh storage figures,
   * a sign of life beside the status topic); 0 or absent = only on changes and connects.
   */
  heartbeatMs?: number
  /** Timers for the heartbeat (default: `timers`). */
  heartbeatTimers?: Timers
  /** The player page's video frame counts, carried by each report (not a change of its own). */
  video?: () => VideoReport | null
}

export interface StateReconcilerEvents {
  /** What plays changed (or the version did): the player page must follow. */
  change: [decision: PlaybackDecision, version: number]
}

export class StateReconciler extends EventEmitter<StateReconcilerEvents> {
  readonly #o: StateReconcilerOptions
  readonly #controller: PlaybackController
  #panel: PanelReport | null = null
  /** Counts decision changes, so handleDesired can tell whether one was already announced. */
  #changes = 0
  #lastSent: unknown = null
  #chain: Promise<void> = Promise.resolve()
  #running = false
  #heartbeat: unknown = null

  constructor(options: StateReconcilerOptions) {
    super()
    this.#o = options
    this.#controller = new PlaybackController({ clock: options.clock, setTimer: options.timers.setTimer, clearTimer: options.timers.clearTimer })
  }

  get decision(): PlaybackDecision {
    return this.#controller.decision
  }

  get version(): number {
    return this.#controller.version
  }

  get desired(): DesiredState | null {
    return this.#controller.desired
  }

  /** Loads desired.json (so playback starts before any network) and starts deciding. */
  async start(): Promise<void> {
    if (this.#running) return
    this.#running = true
    const loaded = await this.#o.store.load()
    if ('problem' in loaded) this.#o.log.warn(loaded.issues ? { issues: loaded.issues } : {}, loaded.problem)
    else if (loaded.desired && loaded.desired.screenId !== this.#o.screenId)
      this.#o.log.warn({ stored: loaded.desired.screenId, screenId: this.#o.screenId }, 'ignoring a stored desired state of another screen')
    else if (loaded.desired) {
      this.#controller.apply(loaded.desired)
      this.#o.log.info({ version: loaded.desired.version }, 'playing the stored desired state until the cloud answers')
    }
    this.#controller.on('change', this.#onChange)
    this.#controller.start()
    this.#armHeartbeat()
    this.#o.log.info(describe(this.decision, this.version), 'playback')
    this.emit('change', this.decision, this.version)
  }

  async stop(): Promise<void> {
    this.#running = false
    if (this.#heartbeat !== null) (this.#o.heartbeatTimers ?? this.#o.timers).clearTimer(this.#heartbeat)
    this.#heartbeat = null
    this.#controller.stop()
    this.#controller.off('change', this.#onChange)
    await this.#chain
  }

  /** A `desired` payload from the link. Invalid, foreign and not-newer messages are logged and ignored. */
  async handleDesired(payload: Buffer | string): Promise<boolean> {
    const parsed = parseDesiredState(payload)
    if (!parsed.ok) {
      this.#o.log.warn({ issues: parsed.errors }, 'ignoring an invalid desired state')
      return false
    }
    const desired = parsed.value
    if (desired.screenId !== this.#o.screenId) {
      this.#o.log.warn({ for: desired.screenId }, 'ignoring a desired state for another screen')
      return false
    }
    const changesBefore = this.#changes
    if (!this.#controller.apply(desired)) {
      this.#o.log.debug({ version: desired.version, held: this.version }, 'desired state not newer, ignored')
      return false
    }
    this.#o.log.info({ version: desired.version }, 'applied desired state')
    try {
      await this.#o.store.save(desired)
    } catch (err) {
      this.#o.log.error({ err: err as Error }, 'could not store the desired state')
    }
    // The version moved even when what plays did not: report it (a changed decision was reported by #onChange).
    if (this.#changes === changesBefore) this.emit('change', this.decision, this.version)
    this.report()
    return true
  }

  /** The panel settings of the applied desired state (null = no panel profile). */
  get panelSettings(): PanelSettings | null {
    return this.#controller.desired?.panel ?? null
  }

  /** Latest panel reading (from the serial driver), null before the first or without a panel. */
  get panel(): PanelReport | null {
    return this.#panel
  }

  /** Latest panel reading (from the serial driver); reported when it changes. */
  setPanel(panel: PanelReport | null): void {
    this.#panel = panel
    this.report()
  }

  /** Re-decides now (e.g. after the wall clock jumped). */
  recompute(): PlaybackDecision {
    return this.#controller.recompute()
  }

  /**
   * Publishes `reported` if connected and something changed since the last one; `force`
   * (on connect) sends it regardless. Reports go out one at a time, in order.
   */
  report(force = false): Promise<void> {
    this.#chain = this.#chain
      .then(() => this.#send(force))
      .catch((err: unknown) => {
        this.#o.log.warn({ err: err as Error }, 'could not publish reported state')
      })
    return this.#chain
  }

  readonly #onChange = (decision: PlaybackDecision): void => {
    this.#changes++
    this.#o.log.info(describe(decision, this.version), 'playback')
    this.emit('change', decision, this.version)
    this.report()
  }

  #armHeartbeat(): void {
    const every = this.#o.heartbeatMs ?? 0
    if (every <= 0 || !this.#running) return
    this.#heartbeat = (this.#o.heartbeatTimers ?? this.#o.timers).setTimer(() => {
      this.#heartbeat = null
      void this.report(true)
      this.#armHeartbeat()
    }, every)
  }

  async #send(force: boolean): Promise<void> {
    if (!this.#o.publisher.connected) return
    const key = { version: this.version, playing: toPlaying(this.decision), panel: this.#panel }
    if (!force && isDeepStrictEqual(key, this.#lastSent)) return
    const storage = await (this.#o.storage ?? statfsStorage)(this.#o.store.dataDir)
    const message: Reported = {
      version: key.version,
      playing: key.playing,
      agentVersion: AGENT_VERSION,
      agentArch: process.arch,
      at: this.#o.clock.now().toISOString(),
    }
    if (this.#panel) message.panel = this.#panel
    if (storage) message.storage = storage
    const video = this.#o.video?.()
    if (video) message.video = video
    // Not waiting for the PUBACK: a connection lost in between would hold every later
    // report (and stop()) until it came back; mqtt.js resends unacknowledged QoS 1 itself.
    this.#o.publisher.publish('reported', message, TOPIC_SPECS.reported.retained).catch((err: unknown) => {
      this.#o.log.warn({ err: err as Error }, 'reported state not acknowledged')
    })
    this.#lastSent = key
  }
}

function describe(d: PlaybackDecision, version: number): Record<string, unknown> {
  return { version, source: d.source, contentKind: d.contentKind, contentId: d.contentId, castId: d.castId, emergencyId: d.emergencyId }
}
