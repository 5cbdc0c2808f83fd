/**
 * Runs serial jobs from the cloud (`screens/<id>/jobs`, kind `serial`) on the
 * panel through a DisplayDriver and turns the outcome into the job result the
 * agent publishes on `job-results`. The agent's job handler calls run(); it
 * never throws, so every job gets exactly one result.
 */
import { isPanelProtocolName } from '@svc/shared/panels/index'
import type { JobResult, SerialJob } from '@svc/shared/mqtt/index'
import type { DisplayDriver } from './DisplayDriver.js'
import type { SerialJobRunner as JobRunnerPort } from '../jobs/SerialJobRunner.js'

export class SerialJobRunner implements JobRunnerPort {
  constructor(
    /** The driver; when it has start/stop, the runner opens and closes it with the job dispatcher. */
    private readonly driver: Pick<DisplayDriver, 'send'> & Partial<Pick<DisplayDriver, 'start' | 'stop'>>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async start(): Promise<void> {
    await this.driver.start?.()
  }

  async stop(): Promise<void> {
    await this.driver.stop?.()
  }

  async run(job: SerialJob): Promise<JobResult> {
    const base = { jobId: job.id, kind: 'serial' as const }
    if (!/^([0-9a-fA-F]{2})+$/.test(job.bytesHex)) {
      return { ...base, sentHex: '', replyHex: '', outcome: 'failed', reason: 'bytesHex is not hex byte pairs', at: this.now().toISOString() }
    }
    // A protocol this agent does not know is read raw rather than refused: the bytes are still right.
    const protocol = isPanelProtocolName(job.protocol) ? job.protocol : null
    try {
      const r = await this.driver.send(Buffer.from(job.bytesHex, 'hex'), { protocol, ...(job.timeoutMs !== undefined ? { timeoutMs: job.timeoutMs } : {}) })
      return {
        ...base,
        sentHex: r.sentHex,
        replyHex: r.replyHex,
        outcome: r.outcome,
        ...(r.reason !== undefined ? { reason: r.reason } : r.outcome === 'failed' ? { reason: 'failed' } : {}),
        at: this.now().toISOString(),
      }
    } catch (err) {
      return { ...base, sentHex: '', replyHex: '', outcome: 'failed', reason: err instanceof Error ? err.message : String(err), at: this.now().toISOString() }
    }
  }
}
