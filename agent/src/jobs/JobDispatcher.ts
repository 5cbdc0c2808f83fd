// Jobs from `screens/<id>/jobs`: validated with the shared parser, de-duplicated by id
// (QoS 1 can redeliver; a persistent session redelivers after restarts), run one at a
// time (serial jobs through the SerialJobRunner, screenshots through the screenshot
// runner, log requests through the log uploader), and answered on `job-results`.
import { parseJob, type Job, type JobResult, type LogsJob, type ScreenshotJob, type UpdateJob } from '@svc/shared/mqtt/index'
import type { Logger } from '../runtime/Logger.js'
import type { Clock } from '../runtime/time.js'
import type { SeenJobs } from './SeenJobs.js'
import type { SerialJobRunner } from './SerialJobRunner.js'

export interface ResultPublisher {
  publish(kind: 'job-results', message: JobResult, retain: boolean): Promise<void>
}

export interface JobDispatcherOptions {
  seen: SeenJobs
  serial: SerialJobRunner
  /** Captures and uploads the page; absent = screenshot jobs fail as not supported. */
  screenshot?: { run(job: ScreenshotJob): Promise<JobResult> }
  /** Uploads the recent log lines; absent = logs jobs fail as not supported. */
  logs?: { run(job: LogsJob): Promise<JobResult> }
  /** Installs agent releases; null = the agent restarts into the update (its result is sent by the new version or after a rollback). Absent = update jobs fail as not supported. */
  update?: { run(job: UpdateJob): Promise<JobResult | null> }
  publisher: ResultPublisher
  log: Logger
  clock: Clock
}

export class JobDispatcher {
  readonly #o: JobDispatcherOptions
  #queue: Promise<void> = Promise.resolve()
  #running = false

  constructor(options: JobDispatcherOptions) {
    this.#o = options
  }

  async start(): Promise<void> {
    if (this.#running) return
    this.#running = true
    await this.#o.seen.load()
    await this.#o.serial.start?.()
  }

  /** Waits for the job in hand, then stops the serial runner. */
  async stop(): Promise<void> {
    if (!this.#running) return
    this.#running = false
    await this.#queue
    await this.#o.serial.stop?.()
  }

  /** A `jobs` payload from the link; resolves when it was handled (queued behind earlier jobs). */
  handle(payload: Buffer | string): Promise<void> {
    const parsed = parseJob(payload)
    if (!parsed.ok) {
      this.#o.log.warn({ issues: parsed.errors }, 'ignoring an invalid job')
      return Promise.resolve()
    }
    const job = parsed.value
    this.#queue = this.#queue
      .then(() => this.#handle(job))
      .catch((err: unknown) => {
        this.#o.log.error({ jobId: job.id, err: err as Error }, 'job handling failed')
      })
    return this.#queue
  }

  async #handle(job: Job): Promise<void> {
    const { seen, log, clock } = this.#o
    if (!this.#running) return
    const fresh = await seen.add(job.id, clock.now().toISOString())
    if (!fresh) {
      const earlier = seen.get(job.id)?.result
      log.info({ jobId: job.id, answered: Boolean(earlier) }, 'duplicate job ignored')
      // The first answer may have been lost with the connection: say it again.
      if (earlier) this.#publish(earlier)
      return
    }
    log.info({ jobId: job.id, kind: job.kind }, 'job received')
    const result = await this.#run(job)
    if (result === null) {
      log.info({ jobId: job.id, kind: job.kind }, 'job handed over: its result is sent after the restart')
      return
    }
    // The result goes out first and is written down meanwhile (the id was written before the
    // job ran, so a redelivery never runs it again); the next job waits for the write.
    const kept = seen.setResult(job.id, result)
    this.#publish(result)
    log.info({ jobId: job.id, kind: job.kind, outcome: result.outcome, ...(result.reason ? { reason: result.reason } : {}) }, 'job done')
    await kept
  }

  /** Not waiting for the PUBACK: a lost connection must not hold the next job (mqtt.js resends QoS 1). */
  #publish(result: JobResult): void {
    this.#o.publisher.publish('job-results', result, false).catch((err: unknown) => {
      this.#o.log.warn({ jobId: result.jobId, err: err as Error }, 'job result not acknowledged')
    })
  }

  async #run(job: Job): Promise<JobResult | null> {
    const at = () => this.#o.clock.now().toISOString()
    if (job.kind === 'serial') {
      try {
        return await this.#o.serial.run(job)
      } catch (err) {
        return {
          jobId: job.id,
          kind: 'serial',
          sentHex: '',
          replyHex: '',
          outcome: 'failed',
          reason: `serial driver error: ${(err as Error).message}`,
          at: at(),
        }
      }
    }
    if (job.kind === 'screenshot' && this.#o.screenshot) {
      try {
        return await this.#o.screenshot.run(job)
      } catch (err) {
        return {
          jobId: job.id,
          kind: 'screenshot',
          sentHex: '',
          replyHex: '',
          outcome: 'failed',
          reason: `screenshot error: ${(err as Error).message}`,
          at: at(),
        }
      }
    }
    if (job.kind === 'logs' && this.#o.logs) {
      try {
        return await this.#o.logs.run(job)
      } catch (err) {
        return { jobId: job.id, kind: 'logs', sentHex: '', replyHex: '', outcome: 'failed', reason: `logs error: ${(err as Error).message}`, at: at() }
      }
    }
    if (job.kind === 'update' && this.#o.update) {
      try {
        return await this.#o.update.run(job)
      } catch (err) {
        return { jobId: job.id, kind: 'update', sentHex: '', replyHex: '', outcome: 'failed', reason: `update error: ${(err as Error).message}`, at: at() }
      }
    }
    // Reboot needs the player platform's help; this agent does not do it.
    return { jobId: job.id, kind: job.kind, sentHex: '', replyHex: '', outcome: 'failed', reason: `${job.kind} is not supported by this agent`, at: at() }
  }
}
