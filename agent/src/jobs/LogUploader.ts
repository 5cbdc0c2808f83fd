// `logs` jobs: the agent's recent log lines and its kiosk page's console messages (the rings
// in memory, runtime/LogRing.ts), those at or after the job's `since`, the newest `lines` of
// them within the upload's byte bound, PUT as JSON `{lines, truncated}` to the job's URL on
// the cloud with the device credential, like a screenshot's PNG.
import { AGENT_LOG_LIMITS, type JobResult, type LogsJob } from '@svc/shared/mqtt/index'
import { collectLogs, type LogRing } from '../runtime/LogRing.js'
import type { Logger } from '../runtime/Logger.js'
import type { Clock } from '../runtime/time.js'
import { onOwnCloud, putDeviceUpload } from './deviceUpload.js'

export interface LogUploaderOptions {
  cloudUrl: string
  screenId: string
  deviceSecret: string
  /** Where the lines are: the agent's own log and the kiosk console. */
  rings: readonly LogRing[]
  fetch?: (input: string, init?: RequestInit) => Promise<Response>
  log: Logger
  clock: Clock
}

export class LogUploader {
  readonly #o: LogUploaderOptions

  constructor(options: LogUploaderOptions) {
    this.#o = options
  }

  async run(job: LogsJob): Promise<JobResult> {
    const { log, clock } = this.#o
    const done = (outcome: 'ok' | 'failed', reason?: string): JobResult => ({
      jobId: job.id,
      kind: 'logs',
      sentHex: '',
      replyHex: '',
      outcome,
      ...(reason ? { reason } : {}),
      at: clock.now().toISOString(),
    })
    const since = job.since ? Date.parse(job.since) : null
    const { lines, truncated } = collectLogs(this.#o.rings, since, Math.min(job.lines, AGENT_LOG_LIMITS.maxLines))
    const refused = await putDeviceUpload({
      url: onOwnCloud(job.uploadUrl ?? `/v1/devices/agent-logs/${encodeURIComponent(job.id)}`, this.#o.cloudUrl),
      screenId: this.#o.screenId,
      deviceSecret: this.#o.deviceSecret,
      contentType: 'application/json',
      body: JSON.stringify({ lines, truncated }),
      ...(this.#o.fetch ? { fetch: this.#o.fetch } : {}),
    })
    if (refused) return done('failed', refused)
    log.info({ jobId: job.id, lines: lines.length, truncated }, 'log lines uploaded')
    return done('ok')
  }
}
