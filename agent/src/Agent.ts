// The screen-player agent: pairs once, then keeps an MQTT link to the cloud, plays what
// the desired state says (decided on the device, so it keeps working offline), runs jobs,
// and drives the local player page. Every part is an object with start()/stop(); this
// class wires them and owns the life cycle: pairing → session → (revoked) → pairing.
import { EventEmitter } from 'node:events'
import { promises as fs } from 'node:fs'
import type { VideoReport } from '@svc/shared/mqtt/index'
import type { BackoffOptions } from './runtime/Backoff.js'
import { JsonLogger, type Logger, type LogLevel } from './runtime/Logger.js'
import { AGENT_LOG_RING_LINES, KIOSK_CONSOLE_RING_LINES, LogRing, RingLogger } from './runtime/LogRing.js'
import { systemClock, systemTimers, type Clock, type Timers } from './runtime/time.js'
import { CloudClient, type FetchLike, type Registration } from './pairing/CloudClient.js'
import { CredentialStore, type Credentials } from './pairing/CredentialStore.js'
import { Pairing } from './pairing/Pairing.js'
import { MqttLink, type MqttConnect } from './link/MqttLink.js'
import { chooseBrokerUrl } from './link/brokerUrl.js'
import { fetchTrusting, trustedCas, type ClosableFetch } from './pairing/trust.js'
import { DesiredStore } from './state/DesiredStore.js'
import { StateReconciler } from './state/StateReconciler.js'
import type { StorageProbe } from './state/storage.js'
import { JobDispatcher } from './jobs/JobDispatcher.js'
import { SeenJobs } from './jobs/SeenJobs.js'
import { ScreenshotRunner, findChromium, waylandSocket } from './jobs/Screenshotter.js'
import { LogUploader } from './jobs/LogUploader.js'
import { UpdateInstaller, type UpdateSetup } from './jobs/UpdateInstaller.js'
import { UpdateReporter } from './releases/UpdateReporter.js'
import { AGENT_VERSION } from './version.js'
import { UnavailableSerialRunner, type SerialJobRunner } from './jobs/SerialJobRunner.js'
import { PlayerServer } from './player/PlayerServer.js'
import { localView, playingView } from './player/PlayerView.js'
import { DEFAULT_CACHE_MAX_BYTES, MediaCache, keyOf, mediaOf, wantedBy } from './playback/MediaCache.js'
import { PlayLog } from './playback/PlayLog.js'
import { PlayLogSender } from './playback/PlayLogSender.js'
import type { DisplayDriver } from './serial/DisplayDriver.js'
import { PanelSupervisor } from './serial/PanelSupervisor.js'
import { PowerScheduler, withPowerStatus } from './serial/PowerScheduler.js'

export const DEFAULT_PLAYER_PORT = 7070

export interface AgentOptions {
  /** Base URL of the cloud's HTTP API, e.g. `https://signage.example.com`. */
  cloudUrl: string
  /** Folder for credentials.json, desired.json and jobs-seen.json. */
  dataDir: string
  /** Bound of the on-disk media cache in bytes (default 2 GiB; least recently used files go first). */
  cacheMaxBytes?: number
  /** Bounds of the on-disk play log (defaults: 16 MiB, 30 days). */
  playLog?: { maxBytes?: number; maxAgeMs?: number }
  /**
   * Screenshot jobs: the browser that captures the page (default CHROME_PATH, else Chromium
   * on PATH; null = none, the jobs fail saying so) and the capture size (default 1920×1080);
   * the compositor's Wayland socket for display captures (default from the environment:
   * SVC_AGENT_WAYLAND_DISPLAY, else WAYLAND_DISPLAY; null = render the page) and the capture
   * program (default `grim` on PATH).
   */
  screenshot?: {
    executablePath?: string | null
    width?: number
    height?: number
    waylandDisplay?: string | null
    grim?: string
    /** A display capture taking longer falls back to the page render (default 15 s). */
    displayTimeoutMs?: number
  }
  /** Player page port (default 7070; 0 picks one). */
  playerPort?: number
  playerHost?: string
  /** What the device tells the cloud when it registers. */
  device?: { model?: string; serialNumber?: string }
  /** Runs serial jobs; absent = every serial job fails with "no serial port configured". */
  serialRunner?: SerialJobRunner
  /** The panel's driver, for polling power state when the desired state carries a panel profile. */
  panelDriver?: Pick<DisplayDriver, 'send'>
  log?: Logger
  /**
   * The recent lines kept in memory for the cloud's `logs` jobs: the least level recorded
   * (default `info`; the CLI passes its --log-level), how many of the agent's own lines
   * (default 5000) and of the kiosk page's console messages (default 1000).
   */
  logRing?: { level?: LogLevel; lines?: number; consoleLines?: number }
  clock?: Clock
  /** Timers for polling and reconnect backoff. */
  timers?: Timers
  /** Timers for playback re-decisions (default: `timers`). */
  playbackTimers?: Timers
  /** Uniform [0, 1) for backoff jitter (default Math.random). */
  random?: () => number
  fetch?: FetchLike
  mqttConnect?: MqttConnect
  /**
   * An extra CA (PEM text, --ca) trusted beside the system's roots, on the cloud's HTTPS
   * calls (unless `fetch` is given) and on the MQTT link over TLS (mqtts://, wss://).
   */
  caPem?: string
  /** Lets an agent whose cloud is https use a plaintext broker address (mqtt://, ws://) when no TLS one is offered (--allow-insecure-mqtt, labs). */
  allowInsecureMqtt?: boolean
  storage?: StorageProbe
  pairing?: { pollIntervalMs?: number; pollIntervalCapMs?: number }
  /** Backoff windows for an unreachable cloud and for broker reconnects. */
  backoff?: Omit<BackoffOptions, 'random'>
  revokeAfterRefusals?: number
  /** `reported` is also sent this often when nothing changed (default 5 minutes; 0 = never). */
  reportEveryMs?: number
  /**
   * Agent updates (`update` jobs): the supervisor's state file, the release key, how to
   * restart into an update. Absent = not supervised: update jobs are refused saying so.
   */
  update?: UpdateSetup
  /** Shows the pairing code to a person (the CLI prints it on stdout). */
  announce?: (text: string) => void
}

export type AgentPhase = 'stopped' | 'pairing' | 'running'

export interface AgentEvents {
  code: [registration: Registration]
  paired: [credentials: Credentials]
  connected: []
  disconnected: []
  revoked: []
  phase: [phase: AgentPhase]
}

interface Session {
  credentials: Credentials
  link: MqttLink
  state: StateReconciler
  jobs: JobDispatcher
  seen: SeenJobs
  panel: PanelSupervisor | null
  /** Operating hours on the panel; null without a panel driver. */
  power: PowerScheduler | null
  playLogSender: PlayLogSender
}

export class Agent extends EventEmitter<AgentEvents> {
  /** Writes to the given logger (stdout by default) and records in `logLines`. */
  readonly log: Logger
  /** The agent's recent log lines, for the cloud's `logs` jobs. */
  readonly logLines: LogRing
  /** The kiosk page's recent console messages, for the same. */
  readonly consoleLines: LogRing
  readonly player: PlayerServer
  readonly cache: MediaCache
  readonly playLog: PlayLog
  readonly #o: AgentOptions
  readonly #clock: Clock
  readonly #timers: Timers
  readonly #cloud: CloudClient
  readonly #credentials: CredentialStore
  readonly #desired: DesiredStore
  /** The CAs for TLS, when --ca adds one to the system's roots. */
  readonly #ca: string[] | undefined
  /** The fetch that trusts #ca, whose connections close when the agent stops. */
  readonly #trustingFetch: ClosableFetch | null = null
  #pairing: Pairing | null = null
  #session: Session | null = null
  #phase: AgentPhase = 'stopped'
  #busy: Promise<void> = Promise.resolve()
  /** Video frame counts of the kiosk pages connected now, and of those gone since the agent started. */
  readonly #frames = new Map<number, VideoReport>()
  readonly #framesGone: VideoReport = { decoded: 0, dropped: 0 }

  constructor(options: AgentOptions) {
    super()
    this.#clock = options.clock ?? systemClock
    this.#timers = options.timers ?? systemTimers
    this.logLines = new LogRing('agent', options.logRing?.lines ?? AGENT_LOG_RING_LINES)
    this.consoleLines = new LogRing('kiosk', options.logRing?.consoleLines ?? KIOSK_CONSOLE_RING_LINES)
    this.log = new RingLogger(options.log ?? new JsonLogger({ write: (l) => process.stdout.write(l), clock: this.#clock }), this.logLines, {
      clock: this.#clock,
      ...(options.logRing?.level ? { level: options.logRing.level } : {}),
    })
    this.#ca = options.caPem ? trustedCas(options.caPem) : undefined
    // Every HTTPS call to the cloud (pairing, media, screenshot uploads) trusts --ca too.
    if (this.#ca && !options.fetch) {
      this.#trustingFetch = fetchTrusting(this.#ca)
      options = { ...options, fetch: this.#trustingFetch }
    }
    this.#o = options
    this.cache = new MediaCache({
      dataDir: options.dataDir,
      cloudUrl: options.cloudUrl,
      maxBytes: options.cacheMaxBytes ?? DEFAULT_CACHE_MAX_BYTES,
      log: this.log.child({ part: 'cache' }),
      clock: this.#clock,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    })
    this.playLog = new PlayLog({
      dataDir: options.dataDir,
      log: this.log.child({ part: 'play-log' }),
      clock: this.#clock,
      // Proof of display: each play carries the panel's power as last read back (none without a session or a panel).
      panelPower: () => this.#session?.state.panel?.power ?? 'unknown',
      ...options.playLog,
    })
    this.player = new PlayerServer({
      port: options.playerPort ?? DEFAULT_PLAYER_PORT,
      host: options.playerHost,
      log: this.log.child({ part: 'player' }),
      media: (key) => this.cache.lookup(key),
      clock: this.#clock,
    })
    this.player.on('page', (e) => {
      const screenId = this.screenId
      const slot = `${e.page}:${e.slot}`
      if (e.event === 'end') this.playLog.end(slot)
      else if (e.event === 'error') {
        this.playLog.end(slot)
        this.log.warn({ itemKind: e.itemKind, itemId: e.itemId, contentId: e.contentId, slot: e.slot }, 'an item failed to load on the page and was skipped')
      } else if (screenId)
        this.playLog.start(slot, {
          screenId,
          source: String(e.source ?? ''),
          contentKind: String(e.contentKind ?? ''),
          contentId: String(e.contentId ?? ''),
          castId: e.castId ?? null,
          emergencyId: e.emergencyId ?? null,
          itemKind: e.itemKind!,
          itemId: e.itemId!,
          zone: e.slot.includes('/') ? e.slot.slice(e.slot.indexOf('/') + 1) : null,
        })
    })
    this.player.on('pageGone', (page) => this.playLog.endAll(`${page}:`))
    this.player.on('console', (e) => this.consoleLines.add(this.#clock.now(), e.level, e.message))
    // Video frame counts, per kiosk page as last told; reported as their sum.
    this.player.on('frames', (e) => this.#frames.set(e.page, { decoded: e.decoded, dropped: e.dropped }))
    this.player.on('pageGone', (page) => {
      const gone = this.#frames.get(page)
      if (!gone) return
      this.#frames.delete(page)
      this.#framesGone.decoded += gone.decoded
      this.#framesGone.dropped += gone.dropped
    })
    // A written play goes out at once when connected (one batch in flight at a time).
    this.playLog.onWritten(() => this.#session?.playLogSender.kick())
    this.#cloud = new CloudClient({ cloudUrl: options.cloudUrl, ...(options.fetch ? { fetch: options.fetch } : {}) })
    this.#credentials = new CredentialStore(options.dataDir)
    this.#desired = new DesiredStore(options.dataDir)
  }

  /** Video frames the kiosk pages decoded and dropped since the agent started; null before a page told any. */
  videoFrames(): VideoReport | null {
    if (!this.#frames.size && !this.#framesGone.decoded && !this.#framesGone.dropped) return null
    const out = { ...this.#framesGone }
    for (const f of this.#frames.values()) {
      out.decoded += f.decoded
      out.dropped += f.dropped
    }
    return out
  }

  get phase(): AgentPhase {
    return this.#phase
  }

  /** The running session's state reconciler (null while pairing or stopped). */
  get state(): StateReconciler | null {
    return this.#session?.state ?? null
  }

  get link(): MqttLink | null {
    return this.#session?.link ?? null
  }

  /** The running session's play-log sender (null while pairing or stopped). */
  get playLogSender(): PlayLogSender | null {
    return this.#session?.playLogSender ?? null
  }

  get screenId(): string | null {
    return this.#session?.credentials.screenId ?? null
  }

  /** The code on screen while pairing. */
  get pairingCode(): string | null {
    return this.#pairing?.registration?.pairingCode ?? null
  }

  /** Starts the page, then pairs or connects with the stored credential. */
  start(): Promise<void> {
    return this.#serial(async () => {
      if (this.#phase !== 'stopped') return
      await this.#begin()
    })
  }

  async #begin(): Promise<void> {
    await fs.mkdir(this.#o.dataDir, { recursive: true, mode: 0o700 })
    await this.player.start()
    await this.playLog.trim().catch((err: unknown) => this.log.warn({ err: err as Error }, 'could not trim the play log'))
    let credentials: Credentials | null = null
    try {
      credentials = await this.#credentials.load()
    } catch (err) {
      this.log.error({ file: this.#credentials.file, err: err as Error }, 'the stored credential cannot be read; pairing again')
    }
    if (credentials && credentials.cloudUrl !== this.#cloud.cloudUrl) {
      this.log.warn({ stored: credentials.cloudUrl, cloud: this.#cloud.cloudUrl }, 'the stored credential belongs to another cloud; pairing with this one')
      credentials = null
    }
    if (credentials) await this.#startSession(credentials)
    else await this.#startPairing()
  }

  /** Stops everything: the link publishes `offline` first; the page server closes last. */
  async stop(): Promise<void> {
    await this.#serial(async () => {
      if (this.#phase === 'stopped') return
      await this.#stopPairing()
      await this.#stopSession()
      await this.player.stop()
      this.playLog.endAll()
      await this.playLog.flush()
      await this.#trustingFetch?.close()
      this.#setPhase('stopped')
    })
  }

  #serial(fn: () => Promise<void>): Promise<void> {
    this.#busy = this.#busy.then(fn, fn)
    return this.#busy
  }

  #setPhase(phase: AgentPhase): void {
    this.#phase = phase
    this.emit('phase', phase)
  }

  async #startPairing(): Promise<void> {
    this.#setPhase('pairing')
    const pairing = new Pairing({
      client: this.#cloud,
      store: this.#credentials,
      log: this.log.child({ part: 'pairing' }),
      clock: this.#clock,
      timers: this.#timers,
      device: this.#o.device ?? {},
      ...this.#o.pairing,
      backoff: { ...this.#o.backoff, ...(this.#o.random ? { random: this.#o.random } : {}) },
    })
    this.#pairing = pairing
    pairing.on('code', (reg) => {
      this.player.show({ type: 'pairing', pairingCode: reg.pairingCode, expiresAt: reg.expiresAt, cloud: this.#cloud.cloudUrl })
      this.#o.announce?.(`Pairing code: ${reg.pairingCode}   (enter it in the console to pair this screen; valid until ${reg.expiresAt})`)
      this.emit('code', reg)
    })
    pairing.on('paired', (credentials) => {
      this.emit('paired', credentials)
      void this.#serial(async () => {
        if (this.#pairing !== pairing) return
        await this.#stopPairing()
        await this.#startSession(credentials)
      })
    })
    pairing.start()
  }

  async #stopPairing(): Promise<void> {
    const pairing = this.#pairing
    this.#pairing = null
    await pairing?.stop()
  }

  async #startSession(credentials: Credentials): Promise<void> {
    const { screenId } = credentials
    const log = this.log.child({ screenId })
    const broker = chooseBrokerUrl(credentials.mqtt, this.#o.cloudUrl, this.#o.allowInsecureMqtt === true)
    const url = 'url' in broker ? broker.url : (credentials.mqtt.url ?? credentials.mqtt.wsUrl)
    const backoff = { ...this.#o.backoff, ...(this.#o.random ? { random: this.#o.random } : {}) }
    const link = new MqttLink({
      url,
      screenId,
      deviceSecret: credentials.deviceSecret,
      log: log.child({ part: 'link' }),
      clock: this.#clock,
      timers: this.#timers,
      backoff,
      ...(this.#o.revokeAfterRefusals !== undefined ? { revokeAfterRefusals: this.#o.revokeAfterRefusals } : {}),
      ...(this.#o.mqttConnect ? { connect: this.#o.mqttConnect } : {}),
      ...(this.#ca ? { ca: this.#ca } : {}),
    })
    const state = new StateReconciler({
      screenId,
      store: this.#desired,
      publisher: link,
      log: log.child({ part: 'state' }),
      clock: this.#clock,
      timers: this.#o.playbackTimers ?? this.#timers,
      heartbeatMs: this.#o.reportEveryMs ?? 300_000,
      heartbeatTimers: this.#timers,
      video: () => this.videoFrames(),
      ...(this.#o.storage ? { storage: this.#o.storage } : {}),
    })
    const seen = new SeenJobs({ dataDir: this.#o.dataDir })
    const runner: SerialJobRunner = this.#o.serialRunner ?? new UnavailableSerialRunner(this.#clock)
    let panel: PanelSupervisor | null = null
    const shots = new ScreenshotRunner({
      cloudUrl: this.#o.cloudUrl,
      screenId,
      deviceSecret: credentials.deviceSecret,
      pageUrl: () => this.#pageUrl(),
      capture: {
        executablePath: this.#o.screenshot?.executablePath !== undefined ? this.#o.screenshot.executablePath : findChromium(),
        ...(this.#o.screenshot?.width ? { width: this.#o.screenshot.width } : {}),
        ...(this.#o.screenshot?.height ? { height: this.#o.screenshot.height } : {}),
      },
      display: {
        waylandDisplay: this.#o.screenshot?.waylandDisplay !== undefined ? this.#o.screenshot.waylandDisplay : waylandSocket(),
        ...(this.#o.screenshot?.grim ? { grim: this.#o.screenshot.grim } : {}),
        ...(this.#o.screenshot?.displayTimeoutMs ? { timeoutMs: this.#o.screenshot.displayTimeoutMs } : {}),
      },
      ...(this.#o.fetch ? { fetch: this.#o.fetch } : {}),
      log: log.child({ part: 'screenshot' }),
      clock: this.#clock,
    })
    const logs = new LogUploader({
      cloudUrl: this.#o.cloudUrl,
      screenId,
      deviceSecret: credentials.deviceSecret,
      rings: [this.logLines, this.consoleLines],
      ...(this.#o.fetch ? { fetch: this.#o.fetch } : {}),
      log: log.child({ part: 'logs' }),
      clock: this.#clock,
    })
    const updateSetup: UpdateSetup = this.#o.update ?? {
      stateFile: null,
      installedVersion: AGENT_VERSION,
      releaseKeyPem: null,
      releaseKeySource: 'none',
      restart: () => undefined,
    }
    const update = new UpdateInstaller({
      setup: updateSetup,
      cloudUrl: this.#o.cloudUrl,
      screenId,
      deviceSecret: credentials.deviceSecret,
      runningVersion: AGENT_VERSION,
      ...(this.#o.fetch ? { fetch: this.#o.fetch } : {}),
      log: log.child({ part: 'update' }),
      clock: this.#clock,
    })
    const jobs = new JobDispatcher({
      seen,
      screenshot: shots,
      logs,
      update,
      // A command the panel accepted may have changed it (power, input, volume): read it
      // back at once so `reported.panel` is current, not one poll interval late.
      serial: {
        run: async (job) => {
          const result = await runner.run(job)
          if (result.outcome === 'ok') void panel?.pollSoon().catch(() => undefined)
          return result
        },
        start: () => runner.start?.(),
        stop: () => runner.stop?.(),
      },
      publisher: link,
      log: log.child({ part: 'jobs' }),
      clock: this.#clock,
    })
    // Operating hours: the panel is switched at their times, read back and retried; what it
    // was told and whether it obeyed go out with each reading.
    const driver = this.#o.panelDriver
    const power = driver
      ? new PowerScheduler({
          driver,
          readBack: () => panel?.readNow() ?? Promise.resolve(null),
          clock: this.#clock,
          timers: this.#o.playbackTimers ?? this.#timers,
          onStatus: (s) => {
            if (state.panel) state.setPanel(withPowerStatus(state.panel, s))
          },
          log: log.child({ part: 'operating-hours' }),
        })
      : null
    // A CEC TV that acknowledges nothing is said once in the log when it starts and when it ends.
    let problem: string | undefined
    const panelLog = log.child({ part: 'panel' })
    panel = driver
      ? new PanelSupervisor(driver, (r) => {
          if (r?.problem !== problem) {
            const setId = state.panelSettings?.setId
            if (r?.problem === 'no-cec')
              panelLog.info(
                { problem: 'no-cec', setId },
                "the TV answers no CEC: nothing on the HDMI line acknowledged the player (power reads unknown, not off); turn the TV's CEC setting on (Anynet+, SimpLink, BRAVIA Sync, EasyLink, VIERA Link …), check that the cable or an HDMI switch passes CEC, and that the TV has mains power",
              )
            else if (problem === 'no-cec') panelLog.info({ setId }, 'the TV answers CEC again')
            problem = r?.problem
          }
          power?.observed(r)
          state.setPanel(r && power ? withPowerStatus(r, power.status) : r)
        })
      : null
    const playLogSender = new PlayLogSender({ playLog: this.playLog, link, screenId, log: log.child({ part: 'play-log' }) })
    const session: Session = { credentials, link, state, jobs, seen, panel, power, playLogSender }
    this.#session = session
    this.#setPhase('running')

    // Files come first: the page switches only once what it will show is on disk (the rest
    // of the desired state downloads behind it), then plays them from the local server.
    let shows = 0
    const cloudUrl = this.#o.cloudUrl
    const cachedKey = (url: string, m: { mimeType?: string; sha256?: string }): string | null => {
      const key = keyOf({ url, ...m }, cloudUrl)
      return key && this.cache.has(key) ? key : null
    }
    const show = (): void => {
      const seq = ++shows
      const decision = state.decision
      const wanted = wantedBy(state.desired, cloudUrl)
      const needed = [...mediaOf(decision.content)].map((m) => keyOf(m, cloudUrl)).filter((k): k is string => k !== null)
      void (async () => {
        await this.cache.load()
        const fetched = this.cache.ensure(wanted)
        if (!needed.every((k) => this.cache.has(k))) await fetched
        if (seq !== shows || this.#session !== session) return
        this.player.show(localView(playingView(screenId, link.connected, state.version, decision, cloudUrl), cachedKey))
      })().catch((err: unknown) => log.warn({ err: err as Error }, 'could not prepare the player view'))
    }
    state.on('change', show)
    const plan = (): void =>
      power?.update({
        hours: state.desired?.operatingHours ?? null,
        timezone: state.desired?.timezone ?? 'UTC',
        panel: state.panelSettings,
        takeover: state.decision.source === 'cast' || state.decision.source === 'emergency',
      })
    if (panel) {
      const follow = (): void => {
        void panel
          .configure(state.panelSettings)
          .then(plan)
          .catch((err: unknown) => log.warn({ err: err as Error }, 'could not reconfigure the panel poller'))
      }
      state.on('change', follow)
    }
    link.on('message', (kind, payload) => {
      if (kind === 'desired') void state.handleDesired(payload)
      else void jobs.handle(payload)
    })
    // Supervised: the last update's outcome goes out once connected and reported.
    const stateFile = updateSetup.stateFile
    const updates = stateFile
      ? new UpdateReporter({
          stateFile,
          runningVersion: AGENT_VERSION,
          publish: (result) => link.publish('job-results', result, false),
          log: log.child({ part: 'update' }),
          clock: this.#clock,
        })
      : null
    link.on('connected', () => {
      show()
      void state.report(true).then(() => updates?.report())
      // What was recorded offline (or before a restart) and not yet acknowledged.
      playLogSender.kick()
      this.emit('connected')
    })
    link.on('disconnected', () => {
      show()
      this.emit('disconnected')
    })
    link.on('revoked', () => {
      void this.#serial(async () => {
        if (this.#session !== session) return
        await this.#stopSession()
        await Promise.all([this.#credentials.delete(), this.#desired.delete(), seen.delete()])
        this.log.warn({ screenId, credentials: this.#credentials.file }, 'device credential deleted; pairing again')
        this.emit('revoked')
        await this.#startPairing()
      })
    })

    log.info({ url }, 'starting with the stored credential')
    await state.start()
    if (panel) await panel.configure(state.panelSettings)
    plan()
    await jobs.start()
    // Refused: the screen plays what it has, offline, and the log says what to change.
    if ('refused' in broker) log.error({ cloud: this.#o.cloudUrl, offered: broker.offered }, broker.refused)
    else {
      if (broker.plaintext && /^https:/i.test(this.#o.cloudUrl))
        log.warn(
          { url },
          'using a plaintext broker address although the cloud is https (--allow-insecure-mqtt): the device secret crosses the network unencrypted',
        )
      link.start()
    }
  }

  /** The player page as this machine reaches it (a wildcard listen address means loopback). */
  #pageUrl(): string | null {
    const port = this.player.port
    if (port === null) return null
    const host = this.#o.playerHost && !['0.0.0.0', '::', ''].includes(this.#o.playerHost) ? this.#o.playerHost : '127.0.0.1'
    return `http://${host.includes(':') ? `[${host}]` : host}:${port}/`
  }

  async #stopSession(): Promise<void> {
    const session = this.#session
    this.#session = null
    if (!session) return
    // While the link is still up, so a batch in flight gets its PUBACK and its cursor is written now.
    await session.playLogSender.stop()
    session.power?.stop()
    await session.panel?.stop()
    await session.jobs.stop()
    await session.link.stop()
    await session.state.stop()
  }
}
