// Delivery of screenshot jobs through the embedded broker, the same way serial jobs go
// (see SerialJobDelivery): every open job is published on `svc/v1/screens/<id>/jobs`
// (QoS 1, not retained) when it is queued for a connected screen, when the screen's client
// becomes ready and when it subscribes to its jobs topic; the agent dedupes by id. A job is
// `sent` once the device acknowledged it. The PNG comes back over HTTP (the job's
// `uploadUrl`); a `job-results` message of kind `screenshot` closes a job the agent could
// not do. The database is what makes jobs survive a restart.
import { cloudFilters, encodeMessage, parseJobResult, parseScreenTopic, topics } from '@svc/shared/mqtt/index'
import type { BrokerMessage, ClientEvents, DeviceClient as Client, DeviceSubscription as Subscription, EmbeddedBroker } from './EmbeddedBroker.js'
import type { ScreenshotDeliverer, ScreenshotService } from '../services/ScreenshotService.js'

type Log = { warn(obj: unknown, msg: string): void; error(obj: unknown, msg: string): void }

export class ScreenshotJobDelivery implements ScreenshotDeliverer {
  private started = false
  private stopFollowing: (() => void)[] = []
  private unsubscribeResults: (() => Promise<void>) | null = null
  private stopNudges: (() => Promise<void>) | null = null
  /** Per screen: a delivery under way, and whether another pass is wanted after it. */
  private readonly running = new Map<string, { again: boolean }>()
  /** Per screen: jobs already published to its current session, so a new job does not resend the rest. */
  private readonly published = new Map<string, Set<string>>()

  constructor(
    private readonly broker: EmbeddedBroker,
    private readonly shots: ScreenshotService,
    private readonly log: Log,
  ) {}

  async start(): Promise<void> {
    if (this.started) return
    this.started = true
    this.shots.setDeliverer(this)
    this.stopFollowing = [
      this.broker.onClient('clientReady', this.onClientReady),
      this.broker.onClient('subscribe', this.onSubscribe),
      this.broker.onClient('ack', this.onAck),
      this.broker.onClient('clientDisconnect', this.onClientDisconnect),
    ]
    this.unsubscribeResults = await this.broker.follow(cloudFilters.allJobResults, this.onResult)
    // Another instance queued a job for a device connected here (a cluster; see EmbeddedBroker.nudge).
    this.stopNudges = await this.broker.onNudge('screenshot-jobs', (screenId) => {
      if (this.broker.isConnected(screenId)) this.deliver(screenId)
    })
  }

  async stop(): Promise<void> {
    if (!this.started) return
    this.started = false
    this.shots.setDeliverer(null)
    for (const stop of this.stopFollowing) stop()
    this.stopFollowing = []
    await this.unsubscribeResults?.()
    this.unsubscribeResults = null
    await this.stopNudges?.()
    this.stopNudges = null
  }

  /** Publishes open jobs not yet published to the screen's session; `fresh` (a new connection or subscription) forgets that. */
  deliver(screenId: string, fresh = false): void {
    if (fresh) this.published.delete(screenId)
    if (!this.started) return
    if (!this.broker.isConnected(screenId)) {
      // Connected to another instance of the cloud, perhaps: that one publishes.
      if (!fresh) this.broker.nudge('screenshot-jobs', screenId)
      return
    }
    const current = this.running.get(screenId)
    if (current) {
      current.again = true
      return
    }
    const entry = { again: false }
    this.running.set(screenId, entry)
    void (async () => {
      try {
        do {
          entry.again = false
          let done = this.published.get(screenId)
          if (!done) this.published.set(screenId, (done = new Set()))
          for (const job of await this.shots.pendingFor(screenId)) {
            if (!this.started || this.broker.closed) return
            if (done.has(job.id)) continue
            done.add(job.id)
            // QoS 1, not retained: the PUBACK marks the job sent (onAck).
            await this.broker.publish(topics.jobs(screenId), encodeMessage(job), false)
          }
        } while (entry.again && this.started)
      } catch (err) {
        this.log.error({ err, screenId }, 'screenshot job delivery failed')
      } finally {
        this.running.delete(screenId)
      }
    })()
  }

  private readonly onClientReady = (client: Client): void => {
    this.deliver(client.id, true)
  }

  private readonly onClientDisconnect = (client: Client): void => {
    this.published.delete(client.id)
  }

  private readonly onSubscribe = (subs: Subscription[], client: Client): void => {
    if (client && subs.some((s) => s.topic === topics.jobs(client.id))) this.deliver(client.id, true)
  }

  private readonly onAck: ClientEvents['ack'] = (ackPacket, client) => {
    const packet = ackPacket as { topic?: unknown; payload?: unknown } | undefined
    if (!packet || !client || typeof packet.topic !== 'string') return
    const parsed = parseScreenTopic(packet.topic)
    if (parsed?.kind !== 'jobs' || parsed.screenId !== client.id) return
    try {
      const payload = packet.payload
      const job = JSON.parse(Buffer.isBuffer(payload) ? payload.toString('utf8') : String(payload)) as { id?: unknown; kind?: unknown }
      if (job.kind === 'screenshot' && typeof job.id === 'string')
        void this.shots.markSent(job.id).catch((err) => this.log.error({ err }, 'marking a screenshot job sent failed'))
    } catch {
      /* not one of ours */
    }
  }

  private readonly onResult = (packet: BrokerMessage): void => {
    const parsed = parseScreenTopic(packet.topic)
    if (parsed?.kind !== 'job-results') return
    const r = parseJobResult(packet.payload)
    if (!r.ok || r.value.kind !== 'screenshot') return
    void this.shots.applyResult(parsed.screenId, r.value).catch((err) => this.log.error({ err }, 'applying a screenshot job result failed'))
  }
}
