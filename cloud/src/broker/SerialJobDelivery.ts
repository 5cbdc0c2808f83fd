// Delivery of serial jobs through the embedded broker (DESIGN "MQTT topics"): every job
// without a result is published on `svc/v1/screens/<id>/jobs` (QoS 1, not retained) when
// it is queued for a connected screen, when the screen's client becomes ready, when it
// subscribes to its jobs topic (a fresh session after a broker restart has no subscription
// at clientReady), and on start. The database, not the broker's in-memory session, is
// what makes jobs survive a restart; re-sending is safe because the agent dedupes by id.
// A job is `sent` once the device acknowledged the packet (PUBACK). Results come back on
// `svc/v1/screens/+/job-results`, validated with the shared parser; only the screen a job
// was queued for can close it.
import { cloudFilters, encodeMessage, parseJobResult, parseScreenTopic, topics } from '@svc/shared/mqtt/index'
import type { BrokerMessage, ClientEvents, DeviceClient as Client, DeviceSubscription as Subscription, EmbeddedBroker } from './EmbeddedBroker.js'
import type { SerialJobDeliverer, SerialJobService } from '../services/SerialJobService.js'

export interface SerialJobDeliveryOptions {
  /** How often open jobs past their TTL are failed as `expired`; 0 = never (tests call expire). */
  sweepIntervalMs?: number
}

type Log = { warn(obj: unknown, msg: string): void; error(obj: unknown, msg: string): void }

export class SerialJobDelivery implements SerialJobDeliverer {
  private started = false
  private stopFollowing: (() => void)[] = []
  private unsubscribeResults: (() => Promise<void>) | null = null
  private stopNudges: (() => Promise<void>) | null = null
  private sweep: NodeJS.Timeout | null = null
  /** Per screen: the delivery running now, and whether another pass is wanted after it. */
  private readonly running = new Map<string, { again: boolean; done: Promise<void> }>()
  /** Per screen: jobs already published to its current session, so a new job does not resend the rest. */
  private readonly published = new Map<string, Set<string>>()

  constructor(
    private readonly broker: EmbeddedBroker,
    private readonly jobs: SerialJobService,
    private readonly log: Log,
    private readonly opts: SerialJobDeliveryOptions = {},
  ) {}

  async start(): Promise<void> {
    if (this.started) return
    this.started = true
    this.jobs.setDeliverer(this)
    this.stopFollowing = [
      this.broker.onClient('clientReady', this.onClientReady),
      this.broker.onClient('subscribe', this.onSubscribe),
      this.broker.onClient('ack', this.onAck),
      this.broker.onClient('clientDisconnect', this.onClientDisconnect),
    ]
    this.unsubscribeResults = await this.broker.follow(cloudFilters.allJobResults, this.onResult)
    // Another instance queued a job for a device connected here (a cluster; see EmbeddedBroker.nudge).
    this.stopNudges = await this.broker.onNudge('serial-jobs', (screenId) => {
      if (this.isConnected(screenId)) this.deliver(screenId)
    })
    const interval = this.opts.sweepIntervalMs ?? 60_000
    if (interval > 0) {
      this.sweep = setInterval(() => void this.jobs.expireStale().catch((err) => this.log.error({ err }, 'serial job expiry failed')), interval)
      this.sweep.unref()
    }
    // Screens already connected (none on a fresh start; kept for a restart of this object).
    for (const screenId of await this.jobs.screensWithPending()) this.deliver(screenId)
  }

  async stop(): Promise<void> {
    if (!this.started) return
    this.started = false
    if (this.sweep) clearInterval(this.sweep)
    this.sweep = null
    this.jobs.setDeliverer(null)
    for (const stop of this.stopFollowing) stop()
    this.stopFollowing = []
    await this.unsubscribeResults?.()
    this.unsubscribeResults = null
    await this.stopNudges?.()
    this.stopNudges = null
    await Promise.all([...this.running.values()].map((r) => r.done))
  }

  /**
   * Publishes the screen's open jobs not yet published to its current session, if its client
   * is connected; otherwise they wait in the database. `fresh` forgets what was published
   * (a new connection or subscription), so every open job goes out again.
   */
  deliver(screenId: string, fresh = false): void {
    if (fresh) this.published.delete(screenId)
    if (!this.started) return
    if (!this.isConnected(screenId)) {
      // Connected to another instance of the cloud, perhaps: that one publishes.
      if (!fresh) this.broker.nudge('serial-jobs', screenId)
      return
    }
    const current = this.running.get(screenId)
    if (current) {
      current.again = true
      return
    }
    const entry = { again: false, done: Promise.resolve() }
    entry.done = (async () => {
      try {
        do {
          entry.again = false
          await this.publishPending(screenId)
        } while (entry.again && this.started)
      } catch (err) {
        this.log.error({ err, screenId }, 'serial job delivery failed')
      } finally {
        this.running.delete(screenId)
      }
    })()
    this.running.set(screenId, entry)
  }

  /** The broker's own record of live connections (LiveConnections), which presence follows too. */
  private isConnected(screenId: string): boolean {
    return this.broker.isConnected(screenId)
  }

  private async publishPending(screenId: string): Promise<void> {
    const pending = await this.jobs.pendingFor(screenId)
    let done = this.published.get(screenId)
    if (!done) this.published.set(screenId, (done = new Set()))
    for (const job of pending) {
      if (!this.started || this.broker.closed) return
      if (done.has(job.id)) continue
      done.add(job.id)
      // QoS 1, not retained: the PUBACK marks the job sent (onAck).
      await this.broker.publish(topics.jobs(screenId), encodeMessage(job), false)
    }
  }

  private readonly onClientReady = (client: Client): void => {
    this.deliver(client.id, true)
  }

  private readonly onClientDisconnect = (client: Client): void => {
    this.published.delete(client.id)
  }

  private readonly onSubscribe = (subs: Subscription[], client: Client): void => {
    if (!client) return
    const jobsTopic = topics.jobs(client.id)
    if (subs.some((s) => s.topic === jobsTopic)) this.deliver(client.id, true)
  }

  /** PUBACK of a jobs packet: the device holds the job. */
  private readonly onAck: ClientEvents['ack'] = (ackPacket, client) => {
    const packet = ackPacket as { topic?: unknown; payload?: unknown } | undefined
    if (!packet || !client || typeof packet.topic !== 'string') return
    const parsed = parseScreenTopic(packet.topic)
    if (parsed?.kind !== 'jobs' || parsed.screenId !== client.id) return
    try {
      const payload = packet.payload
      const id = (JSON.parse(Buffer.isBuffer(payload) ? payload.toString('utf8') : String(payload)) as { id?: unknown }).id
      if (typeof id === 'string') void this.jobs.markSent(id).catch((err) => this.log.error({ err }, 'marking a serial job sent failed'))
    } catch {
      /* not one of ours */
    }
  }

  private readonly onResult = (packet: BrokerMessage): void => {
    const parsed = parseScreenTopic(packet.topic)
    if (parsed?.kind !== 'job-results') return
    const r = parseJobResult(packet.payload)
    if (!r.ok) {
      this.log.warn({ screenId: parsed.screenId, errors: r.errors }, 'invalid job result ignored')
      return
    }
    if (r.value.kind !== undefined && r.value.kind !== 'serial') return
    void this.jobs.applyResult(parsed.screenId, r.value).catch((err) => this.log.error({ err }, 'applying a serial job result failed'))
  }
}
