// Proof of play, sending: while the link is up, the play log is sent in batches on
// `svc/v1/screens/<id>/play-log` (QoS 1, at most PLAY_LOG_LIMITS.maxRecords records, one
// batch per message, one message in flight), and a batch is acknowledged in the play log
// (its cursor stored) only after the broker's PUBACK, which the cloud sends once the batch
// is stored. Offline, or across a restart, nothing is lost: what was not acknowledged is
// read again and sent on the next connect; the cloud stores a re-sent record once.
// Records another screen id wrote (before a re-pairing) or that the contract would refuse
// are skipped with a warning, so one bad line never blocks the rest.
import { PLAY_LOG_LIMITS, validatePlayRecord, type PlayLogBatchMessage, type PlayRecordMessage } from '@svc/shared/mqtt/index'
import type { Logger } from '../runtime/Logger.js'
import { systemTimers, type TimerHandle, type Timers } from '../runtime/time.js'
import type { PlayLog } from './PlayLog.js'

export interface PlayLogPublisher {
  readonly connected: boolean
  publish(kind: 'play-log', message: unknown, retain: boolean): Promise<void>
}

export interface PlayLogSenderOptions {
  playLog: PlayLog
  link: PlayLogPublisher
  screenId: string
  log: Logger
  /** Records per batch (default and maximum PLAY_LOG_LIMITS.maxRecords). */
  maxRecords?: number
  /** The timer of stop()'s bound (default: the real one). */
  timers?: Timers
}

export class PlayLogSender {
  readonly #o: PlayLogSenderOptions
  #running: Promise<void> | null = null
  #again = false
  #stopped = false
  /** Batches acknowledged since start (for tests and logs). */
  sentBatches = 0

  constructor(options: PlayLogSenderOptions) {
    this.#o = options
  }

  /** Sends what is waiting, if connected; a call while sending makes it look again afterwards. */
  kick(): void {
    if (this.#stopped || !this.#o.link.connected) return
    if (this.#running) {
      this.#again = true
      return
    }
    this.#running = this.#drain()
      .catch((err: unknown) => {
        // Not at once again (no hot loop on a failing link): the next connect or play retries.
        this.#again = false
        this.#o.log.warn({ err: err as Error }, 'could not send the play log; it is kept and sent on the next connect')
      })
      .finally(() => {
        this.#running = null
        if (this.#again) {
          this.#again = false
          this.kick()
        }
      })
  }

  /**
   * Stops sending. Resolves once a batch in flight is acknowledged and its cursor written,
   * so a stopped agent writes nothing more into its folder; or after `waitMs`, as a batch
   * published while the link is down waits for a reconnect that will not come.
   */
  async stop(waitMs = 2000): Promise<void> {
    this.#stopped = true
    const running = this.#running
    if (!running) return
    const timers = this.#o.timers ?? systemTimers
    let timer: TimerHandle | undefined
    await Promise.race([running, new Promise<void>((resolve) => (timer = timers.setTimer(resolve, waitMs)))])
    timers.clearTimer(timer)
  }

  /** Resolves when no sending is under way. */
  async idle(): Promise<void> {
    while (this.#running) await this.#running
  }

  async #drain(): Promise<void> {
    const { playLog, link, screenId, log } = this.#o
    const max = Math.min(this.#o.maxRecords ?? PLAY_LOG_LIMITS.maxRecords, PLAY_LOG_LIMITS.maxRecords)
    while (!this.#stopped && link.connected) {
      const batch = await playLog.batch(screenId, max)
      if (batch.cursor === batch.from) return
      const records: PlayRecordMessage[] = []
      for (const r of batch.records) {
        if (r.screenId !== screenId) continue // written under an earlier pairing: not this screen's to report
        const v = validatePlayRecord(r)
        if (v.ok) records.push(v.value)
        else log.warn({ itemId: String(r.itemId).slice(0, 100), errors: v.errors }, 'skipping a play record the cloud would refuse')
      }
      if (records.length) {
        const message: PlayLogBatchMessage = { batchId: `${screenId}:${batch.from}-${batch.cursor}`, records }
        // Resolves on the PUBACK: the cloud has stored the batch.
        await link.publish('play-log', message, false)
        this.sentBatches++
      }
      await playLog.ack(batch.cursor)
    }
  }
}
