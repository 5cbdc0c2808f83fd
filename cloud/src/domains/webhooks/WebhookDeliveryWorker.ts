// Sends due webhook deliveries as a pipeline, so one slow receiver or one slow batch never
// holds up the rest:
// - claims: batches of due deliveries taken under a lease (one statement each), one claim
//   at a time, as long as there is room (at most `maxInFlight` deliveries being sent, at
//   most ENDPOINT_QUEUE_PER_SLOT per allowed request waiting or in flight per endpoint: a full endpoint is skipped by
//   the claim, so the others still get theirs). A claim is made on every run (interval,
//   or a kick right after an event queued deliveries) and again whenever room frees up
//   while due deliveries were left behind;
// - sends: each delivery goes out as soon as it is claimed (bounded per endpoint by the
//   service's slots), without waiting for the rest of its batch;
// - writes: outcomes are written together (group commit: one transaction for all that
//   finished while the previous write ran);
// - leases: while a claim still has deliveries unwritten, its lease is renewed every third
//   of its length, so a delivery waiting behind a slow endpoint is never claimed again by
//   this or another process; after a crash the lease runs out within one lease length and
//   the next process sends them again (at least once; receivers de-duplicate on deliveryId).
// Purges the 30-day log once an hour.
import type { Clock } from '../../platform/clock.js'
import { IntervalWorker } from '../../platform/workers/Worker.js'
import { ENDPOINT_CONCURRENCY, type DeliveryRow, type Outcome } from './model.js'
import type { WebhookQueue } from './WebhookQueue.js'
import type { WebhookSender } from './WebhookSender.js'

/** Deliveries of one endpoint waiting or in flight in this process before claims skip that endpoint, per request it may have in flight. */
export const ENDPOINT_QUEUE_PER_SLOT = 4
/** The same with the default concurrency. */
export const ENDPOINT_QUEUE = ENDPOINT_QUEUE_PER_SLOT * ENDPOINT_CONCURRENCY
/** How long finished deliveries wait for others before their outcomes are written (one transaction). */
const WRITE_GATHER_MS = 3

export class WebhookDeliveryWorker extends IntervalWorker {
  private lastPurge = 0
  private kickAgain = false
  private kickLoop: Promise<void> | null = null
  private stopped = false
  /** runOnce() calls waiting for the pipeline to empty (they keep it claiming after stop()). */
  private draining = 0

  /** Claimed and not yet sent (waiting for a slot or in flight). */
  private inFlight = 0
  /** The same per endpoint. */
  private readonly perEndpoint = new Map<string, number>()
  /** Claim token → its deliveries not yet written (their lease is renewed meanwhile). */
  private readonly claims = new Map<string, number>()
  /** True when the last claim may have left due deliveries behind (it was full, or skipped endpoints). */
  private backlog = false
  private pumping: Promise<void> | null = null
  private pumpAgain = false
  private readonly outcomes: Outcome[] = []
  private writing: Promise<void> | null = null
  private renewTimer: NodeJS.Timeout | null = null
  private idleWaiters: (() => void)[] = []

  constructor(
    private readonly queue: WebhookQueue,
    private readonly sender: WebhookSender,
    private readonly clock: Clock,
    intervalMs: number,
    log: { error(obj: unknown, msg: string): void },
    private readonly batchSize = 200,
    /** Runs first on every run: the event outbox's dispatch, so events a killed process left behind become deliveries. */
    private readonly beforeRun: () => Promise<unknown> = async () => undefined,
    private readonly opts: { leaseMs: number; maxInFlight?: number } = { leaseMs: 30_000 },
  ) {
    super(intervalMs, log)
  }

  /** Deliveries of one endpoint waiting or in flight here before claims skip it. */
  private get endpointQueue(): number {
    return ENDPOINT_QUEUE_PER_SLOT * this.sender.endpointConcurrency
  }

  private get maxInFlight(): number {
    return this.opts.maxInFlight ?? 5 * this.batchSize
  }

  /** Runs soon without waiting for the interval (no-op when the worker is driven by hand). */
  kick(): void {
    if (this.intervalMs <= 0 || this.stopped) return
    this.kickAgain = true
    if (this.kickLoop) return
    this.kickLoop = (async () => {
      while (this.kickAgain && !this.stopped) {
        this.kickAgain = false
        await super.runOnce().catch((err) => this.log.error({ err }, 'webhook delivery run failed'))
      }
    })().finally(() => (this.kickLoop = null))
  }

  /** One run: dispatch the outbox, purge hourly, claim what is due and start sending it (not waiting for the sends). */
  protected async tick(): Promise<void> {
    await this.beforeRun()
    const now = this.clock.now().getTime()
    if (now - this.lastPurge >= 3600_000) {
      await this.queue.purge()
      this.lastPurge = now
    }
    await this.pump()
  }

  /** A run, then waits until everything it (and the claims it led to) sent is written: every due delivery has had its attempt. */
  override async runOnce(): Promise<void> {
    this.draining++
    try {
      await super.runOnce()
      await this.idle()
    } finally {
      this.draining--
    }
  }

  /** The timer's run: claims and starts sending, without waiting for the sends (the next tick may claim meanwhile). */
  override async runScheduled(): Promise<boolean> {
    await super.runOnce()
    return true
  }

  override start(): void {
    this.stopped = false
    super.start()
  }

  /** Stops claiming; waits for the deliveries in flight to be answered and written. */
  override async stop(): Promise<void> {
    this.stopped = true
    await super.stop()
    if (this.kickLoop) await this.kickLoop
    await this.idle()
  }

  // ---- the pipeline ----

  private pump(): Promise<void> {
    if (this.pumping) {
      this.pumpAgain = true
      return this.pumping
    }
    this.pumping = (async () => {
      do {
        this.pumpAgain = false
        await this.claimWhileRoom()
      } while (this.pumpAgain)
    })()
      .catch((err) => this.log.error({ err }, 'webhook claim failed'))
      .finally(() => {
        this.pumping = null
        this.checkIdle()
      })
    return this.pumping
  }

  private async claimWhileRoom(): Promise<void> {
    for (;;) {
      const room = this.maxInFlight - this.inFlight
      if (room <= 0) {
        this.backlog = true
        return
      }
      const skip: string[] = []
      for (const [id, n] of this.perEndpoint) if (n >= this.endpointQueue) skip.push(id)
      const ask = Math.min(this.batchSize, room)
      const batch = await this.queue.claimDue(ask, skip)
      this.backlog = batch.length === ask || skip.length > 0
      if (batch.length) await this.startSending(batch)
      if (batch.length < ask) return
    }
  }

  private async startSending(batch: DeliveryRow[]): Promise<void> {
    const token = batch[0]!.claim_token!
    this.claims.set(token, batch.length)
    this.inFlight += batch.length
    for (const d of batch) this.perEndpoint.set(d.endpoint_id, (this.perEndpoint.get(d.endpoint_id) ?? 0) + 1)
    this.renewWhileClaimed()
    let eps: Awaited<ReturnType<WebhookQueue['endpointsOf']>>
    try {
      eps = await this.queue.endpointsOf(batch)
    } catch (err) {
      // Not sent: the lease runs out and a later claim takes them again.
      this.log.error({ err, deliveries: batch.length }, 'webhook endpoints read failed')
      for (const d of batch) this.sendEnded(d, null)
      return
    }
    for (const d of batch) {
      this.sender.send(d, eps.get(d.endpoint_id)).then(
        (o) => this.sendEnded(d, o),
        (err) => {
          this.log.error({ err, deliveryId: d.id }, 'webhook send failed')
          this.sendEnded(d, null)
        },
      )
    }
  }

  /** A delivery's send ended (`o` null: nothing to write, its lease will run out). */
  private sendEnded(d: DeliveryRow, o: Outcome | null): void {
    this.inFlight--
    const left = (this.perEndpoint.get(d.endpoint_id) ?? 1) - 1
    if (left > 0) this.perEndpoint.set(d.endpoint_id, left)
    else this.perEndpoint.delete(d.endpoint_id)
    if (o) {
      this.outcomes.push(o)
      if (!this.writing) this.writing = this.writeLoop()
    } else {
      this.claimDone(d.claim_token!, 1)
    }
    // Room again where the last claim stopped: claim what was left behind.
    if (this.backlog && (!this.stopped || this.draining > 0) && (left === this.endpointQueue - 1 || this.inFlight === Math.floor(this.maxInFlight / 2))) {
      void this.pump()
    }
    this.checkIdle()
  }

  private async writeLoop(): Promise<void> {
    try {
      while (this.outcomes.length) {
        // Let answers arriving close together be written together: one transaction for a
        // few milliseconds' worth (at once when a batch's worth is already waiting).
        if (this.outcomes.length < this.batchSize) await new Promise((r) => setTimeout(r, WRITE_GATHER_MS))
        const batch = this.outcomes.splice(0)
        try {
          await this.sender.record(batch)
        } catch (err) {
          // Left claimed: the lease runs out and the deliveries are sent again.
          this.log.error({ err, deliveries: batch.length }, 'webhook outcomes write failed')
        }
        const byToken = new Map<string, number>()
        for (const o of batch) byToken.set(o.d.claim_token!, (byToken.get(o.d.claim_token!) ?? 0) + 1)
        for (const [token, n] of byToken) this.claimDone(token, n)
      }
    } finally {
      this.writing = null
      this.checkIdle()
    }
  }

  private claimDone(token: string, n: number): void {
    const left = (this.claims.get(token) ?? n) - n
    if (left > 0) this.claims.set(token, left)
    else this.claims.delete(token)
    if (!this.claims.size && this.renewTimer) {
      clearInterval(this.renewTimer)
      this.renewTimer = null
    }
  }

  private renewWhileClaimed(): void {
    if (this.renewTimer) return
    this.renewTimer = setInterval(
      () => {
        if (!this.claims.size) return
        this.queue.renewLeases([...this.claims.keys()]).catch((err) => this.log.error({ err }, 'webhook lease renewal failed'))
      },
      Math.max(10, Math.floor(this.opts.leaseMs / 3)),
    )
    this.renewTimer.unref()
  }

  private isIdle(): boolean {
    return this.inFlight === 0 && !this.outcomes.length && !this.writing && !this.pumping
  }

  private checkIdle(): void {
    if (!this.idleWaiters.length || !this.isIdle()) return
    for (const w of this.idleWaiters.splice(0)) w()
  }

  private idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }
}
