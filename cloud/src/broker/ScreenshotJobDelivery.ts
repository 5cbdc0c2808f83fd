// Delivery of screenshot jobs through the embedded broker, the same way serial jobs go
// (see SerialJobDelivery): every open job is published on `svc/v1/screens/<id>/jobs`
// (QoS 1, not retained) when it is queued for a connected screen, when the screen's client
// becomes ready and when it subscribes to its jobs topic; the agent dedupes by id. A job is
// `sent` once the device acknowledged it. The PNG comes back over HTTP (the job's
// `uploadUrl`); a `job-results` message of kind `screenshot` closes a job the agent could
// not do. The database is what makes jobs survive a restart.
import type { AedesPublishPacket, Client, PublishPacket, PubrelPacket, Subscription } from 'aedes'
import { cloudFilters, encodeMessage, parseJobResult, parseScreenTopic, QOS, topics } from '@svc/shared/mqtt/index'
import type { EmbeddedBroker } from './EmbeddedBroker.js'
import type { ScreenshotDeliverer, ScreenshotService } from '../services/ScreenshotService.js'

type Log = { warn(obj: unknown, msg: string): void; error(obj: unknown, msg: string): void }

export class ScreenshotJobDelivery implements ScreenshotDeliverer {
  private started = false
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
    const aedes = this.broker.aedes
    this.shots.setDeliverer(this)
    aedes.on('clientReady', this.onClientReady)
    aedes.on('subscribe', this.onSubscribe)
    aedes.on('ack', this.onAck)
    aedes.on('clientDisconnect', this.onClientDisconnect)
    await new Promise<void>((resolve) => aedes.subscribe(cloudFilters.allJobResults, this.onResult, resolve))
  }

  async stop(): Promise<void> {
    if (!this.started) return
    this.started = false
    this.shots.setDeliverer(null)
    const aedes = this.broker.aedes
    aedes.off('clientReady', this.onClientReady)
    aedes.off('subscribe', this.onSubscribe)
    aedes.off('ack', this.onAck)
    aedes.off('clientDisconnect', this.onClientDisconnect)
    if (!aedes.closed) await new Promise<void>((resolve) => aedes.unsubscribe(cloudFilters.allJobResults, this.onResult, resolve))
  }

  /** Publishes open jobs not yet published to the screen's session; `fresh` (a new connection or subscription) forgets that. */
  deliver(screenId: string, fresh = false): void {
    if (fresh) this.published.delete(screenId)
    if (!this.started || !this.broker.isConnected(screenId)) return
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
            if (!this.started || this.broker.aedes.closed) return
            if (done.has(job.id)) continue
            done.add(job.id)
            const packet: PublishPacket = { cmd: 'publish', topic: topics.jobs(screenId), payload: encodeMessage(job), qos: QOS, retain: false, dup: false }
            await new Promise<void>((resolve, reject) => this.broker.aedes.publish(packet, (err) => (err ? reject(err) : resolve())))
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

  private readonly onAck = (ackPacket: PublishPacket | PubrelPacket, client: Client): void => {
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

  private readonly onResult = (packet: AedesPublishPacket, cb: () => void): void => {
    cb()
    const parsed = parseScreenTopic(packet.topic)
    if (parsed?.kind !== 'job-results') return
    const r = parseJobResult(packet.payload)
    if (!r.ok || r.value.kind !== 'screenshot') return
    void this.shots.applyResult(parsed.screenId, r.value).catch((err) => this.log.error({ err }, 'applying a screenshot job result failed'))
  }
}
