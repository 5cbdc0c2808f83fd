// Delivery of device jobs (serial commands, screenshots) through the embedded broker. The
// jobs are rows of a table; the database, not the broker's in-memory session, is what makes
// them survive a restart. Every open job of a screen is published on
// `svc/v1/screens/<id>/jobs` (QoS 1, not retained):
// - when one is queued for a connected screen (only the jobs not yet published to its
//   current connection go out);
// - once per connection, all of them: at clientReady when the session already holds the
//   jobs subscription (a persistent session), otherwise at the SUBSCRIBE to the jobs topic
//   (the device's own, or the one DeviceSessions restores after a broker restart); a device
//   that subscribes again on the same connection is not sent everything again;
// - on start, for screens already connected.
// The full re-sends starting in one tick share one read (JobSource.pendingForMany).
// Re-sending is safe because the agent dedupes by id. A job is `sent` once the device
// acknowledged the packet (PUBACK). Results come back on `svc/v1/screens/+/job-results`,
// validated with the shared parser; each delivery applies the results of its own kind, and
// only the screen a job was queued for can close it (the source checks). stop() waits for
// the deliveries under way.
// A delivery is built with its source and joins the source's `queued` hook then (the
// module that builds both starts and stops the delivery through the platform's `running`).
import type { Logger } from '@svc/shared'
import { cloudFilters, encodeMessage, parseJobResult, parseScreenTopic, topics, type JobResult } from '@svc/shared/mqtt/index'
import type {
  BrokerMessage,
  ClientEvents,
  DeviceClient as Client,
  DeviceSubscription as Subscription,
  EmbeddedBroker,
} from '../../platform/broker/EmbeddedBroker.js'
import type { Hook } from '../../platform/hooks.js'

/** The table side of one kind of job (a service). */
export interface JobSource<J extends { id: string; kind: string }> {
  /** Jobs were queued for a screen (after they committed): the delivery hands them to its device. */
  readonly queued: Hook<(screenId: string) => void>
  /**
   * The screen's open jobs, oldest first, as the MQTT job message. `expire: false` (a job was
   * just queued) asks for a read without the expiry write; jobs past their TTL stay out.
   */
  pendingFor(screenId: string, opts?: { expire?: boolean }): Promise<J[]>
  /**
   * pendingFor (with the expiry) for several screens at once, by screen (a screen without
   * open jobs may be absent). The once-per-connection re-sends of one tick (a connect storm,
   * the reconnects after a restart) share one call instead of one read per connection.
   */
  pendingForMany?(screenIds: readonly string[]): Promise<Map<string, J[]>>
  markSent(jobId: string): Promise<void>
  applyResult(screenId: string, result: JobResult): Promise<unknown>
  /** Fails open jobs past their TTL (the periodic sweep). */
  expireStale?(): Promise<unknown>
  /** Screens with open jobs (delivery on start). */
  screensWithPending?(): Promise<string[]>
}

export interface JobDeliveryOptions {
  /** The `kind` of this delivery's job messages and results. */
  kind: string
  /** Also apply results that carry no kind (older agents sent serial results without one). */
  untaggedResults?: boolean
  /** Log results that do not parse (one delivery does, so a bad result is logged once). */
  logInvalidResults?: boolean
  /** How often open jobs past their TTL are failed as `expired`; 0 = never (tests call the source). */
  sweepIntervalMs?: number
}

export class JobDelivery<J extends { id: string; kind: string }> {
  private started = false
  private stopFollowing: (() => void)[] = []
  private unsubscribeResults: (() => Promise<void>) | null = null
  private stopNudges: (() => Promise<void>) | null = null
  private sweep: NodeJS.Timeout | null = null
  /** Per screen: the delivery running now, whether another pass is wanted after it, and whether that one re-sends everything. */
  private readonly running = new Map<string, { again: boolean; full: boolean; done: Promise<void> }>()
  /** Per screen: jobs already published to its current connection, so a new job does not resend the rest. */
  private readonly published = new Map<string, Set<string>>()
  /** Screens whose current connection had its full re-send. */
  private readonly connectionServed = new Set<string>()
  /** The full reads waiting for the next batched read (see readAll), and whether one is under way. */
  private fullReads: { screenId: string; resolve: (jobs: J[]) => void; reject: (err: unknown) => void }[] = []
  private readingAll = false

  constructor(
    private readonly broker: EmbeddedBroker,
    private readonly source: JobSource<J>,
    private readonly log: Pick<Logger, 'warn' | 'error'>,
    private readonly opts: JobDeliveryOptions,
  ) {
    // Until start() (and after stop()) a queued job only waits in the table.
    source.queued.add((screenId) => this.deliver(screenId))
  }

  async start(): Promise<void> {
    if (this.started) return
    this.started = true
    this.stopFollowing = [
      this.broker.onClient('clientReady', this.onClientReady),
      this.broker.onClient('subscribe', this.onSubscribe),
      this.broker.onClient('ack', this.onAck),
      this.broker.onClient('clientDisconnect', this.onClientDisconnect),
    ]
    this.unsubscribeResults = await this.broker.follow(cloudFilters.allJobResults, this.onResult)
    // Another instance queued a job for a device connected here (a cluster; see EmbeddedBroker.nudge).
    this.stopNudges = await this.broker.onNudge(`${this.opts.kind}-jobs`, (screenId) => {
      if (this.broker.isConnected(screenId)) this.deliver(screenId)
    })
    const interval = this.opts.sweepIntervalMs ?? 0
    const expire = this.source.expireStale?.bind(this.source)
    if (interval > 0 && expire) {
      this.sweep = setInterval(() => void expire().catch((err) => this.log.error({ err }, `${this.opts.kind} job expiry failed`)), interval)
      this.sweep.unref()
    }
    // Screens already connected (none on a fresh start; kept for a restart of this object).
    for (const screenId of (await this.source.screensWithPending?.()) ?? []) this.deliver(screenId, true)
  }

  /** Stops following the broker and waits for the deliveries under way. */
  async stop(): Promise<void> {
    if (!this.started) return
    this.started = false
    if (this.sweep) clearInterval(this.sweep)
    this.sweep = null
    for (const stop of this.stopFollowing) stop()
    this.stopFollowing = []
    await this.unsubscribeResults?.()
    this.unsubscribeResults = null
    await this.stopNudges?.()
    this.stopNudges = null
    await Promise.all([...this.running.values()].map((r) => r.done))
  }

  /**
   * Publishes the screen's open jobs not yet published to its current connection, if its
   * client is connected; otherwise they wait in the database. `fresh` forgets what was
   * published, so every open job goes out again, and fails the jobs past their TTL first
   * (once per connection); a job just queued needs only a read.
   */
  deliver(screenId: string, fresh = false): void {
    if (fresh) this.published.delete(screenId)
    if (!this.started) return
    if (!this.broker.isConnected(screenId)) {
      // Connected to another instance of the cloud, perhaps: that one publishes.
      if (!fresh) this.broker.nudge(`${this.opts.kind}-jobs`, screenId)
      return
    }
    const current = this.running.get(screenId)
    if (current) {
      current.again = true
      current.full ||= fresh
      return
    }
    const entry = { again: false, full: fresh, done: Promise.resolve() }
    this.running.set(screenId, entry)
    entry.done = (async () => {
      try {
        do {
          const full = entry.full
          entry.again = false
          entry.full = false
          await this.publishPending(screenId, full)
        } while (entry.again && this.started)
      } catch (err) {
        this.log.error({ err, screenId }, `${this.opts.kind} job delivery failed`)
      } finally {
        this.running.delete(screenId)
      }
    })()
  }

  private async publishPending(screenId: string, full: boolean): Promise<void> {
    const pending = full && this.source.pendingForMany ? await this.readAll(screenId) : await this.source.pendingFor(screenId, { expire: full })
    // A set only for a screen that had a job: most screens have none, and a connected
    // fleet would otherwise hold an empty set per screen.
    let done = this.published.get(screenId)
    for (const job of pending) {
      if (!this.started || this.broker.closed) return
      if (done?.has(job.id)) continue
      if (!done) this.published.set(screenId, (done = new Set()))
      done.add(job.id)
      // QoS 1, not retained: the PUBACK marks the job sent (onAck).
      await this.broker.publish(topics.jobs(screenId), encodeMessage(job), false)
    }
  }

  /**
   * A screen's open jobs (with the expiry), read together with those of every screen asking
   * in the same tick or while the previous batched read is under way: one read at a time,
   * each for everything that waited (so a storm's batches grow with the load).
   */
  private readAll(screenId: string): Promise<J[]> {
    return new Promise((resolve, reject) => {
      this.fullReads.push({ screenId, resolve, reject })
      if (this.fullReads.length === 1 && !this.readingAll) setImmediate(() => void this.nextReadAll())
    })
  }

  private async nextReadAll(): Promise<void> {
    const reads = this.fullReads
    this.fullReads = []
    if (!reads.length) return
    this.readingAll = true
    try {
      const jobs = await this.source.pendingForMany!(reads.map((r) => r.screenId))
      for (const r of reads) r.resolve(jobs.get(r.screenId) ?? [])
    } catch (err) {
      for (const r of reads) r.reject(err)
    } finally {
      this.readingAll = false
      if (this.fullReads.length) setImmediate(() => void this.nextReadAll())
    }
  }

  /** The once-per-connection re-send of every open job. */
  private serveConnection(screenId: string): void {
    if (this.connectionServed.has(screenId)) return
    this.connectionServed.add(screenId)
    this.deliver(screenId, true)
  }

  private readonly onClientReady = (client: Client): void => {
    this.published.delete(client.id)
    this.connectionServed.delete(client.id)
    // aedes restores a persistent session's subscriptions before clientReady.
    const subs = (client as Client & { subscriptions?: Record<string, unknown> }).subscriptions
    if (subs?.[topics.jobs(client.id)] !== undefined) this.serveConnection(client.id)
  }

  private readonly onClientDisconnect = (client: Client): void => {
    this.published.delete(client.id)
    this.connectionServed.delete(client.id)
  }

  private readonly onSubscribe = (subs: Subscription[], client: Client): void => {
    if (client && subs.some((s) => s.topic === topics.jobs(client.id))) this.serveConnection(client.id)
  }

  /** PUBACK of a jobs packet of this kind: the device holds the job. */
  private readonly onAck: ClientEvents['ack'] = (ackPacket, client) => {
    const packet = ackPacket as { topic?: unknown; payload?: unknown } | undefined
    if (!packet || !client || typeof packet.topic !== 'string') return
    const parsed = parseScreenTopic(packet.topic)
    if (parsed?.kind !== 'jobs' || parsed.screenId !== client.id) return
    let job: { id?: unknown; kind?: unknown }
    try {
      const payload = packet.payload
      job = JSON.parse(Buffer.isBuffer(payload) ? payload.toString('utf8') : String(payload)) as { id?: unknown; kind?: unknown }
    } catch {
      return // not one of ours
    }
    if (job?.kind !== this.opts.kind || typeof job.id !== 'string') return
    void this.source.markSent(job.id).catch((err) => this.log.error({ err }, `marking a ${this.opts.kind} job sent failed`))
  }

  private readonly onResult = (packet: BrokerMessage): void => {
    const parsed = parseScreenTopic(packet.topic)
    if (parsed?.kind !== 'job-results') return
    const r = parseJobResult(packet.payload)
    if (!r.ok) {
      if (this.opts.logInvalidResults) this.log.warn({ screenId: parsed.screenId, errors: r.errors }, 'invalid job result ignored')
      return
    }
    const kind = r.value.kind
    if (kind !== this.opts.kind && !(kind === undefined && this.opts.untaggedResults)) return
    void this.source.applyResult(parsed.screenId, r.value).catch((err) => this.log.error({ err }, `applying a ${this.opts.kind} job result failed`))
  }
}
