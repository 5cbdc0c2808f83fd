// What a supervised agent tells the cloud about the last update, once connected (after its
// first `reported`):
//   - it is the version on trial: the trial is confirmed in the state (the supervisor stops
//     its clock), then the job's `ok` result goes out;
//   - the supervisor went back to it after a failed trial: the job's `failed` result with
//     `rolledBack: true` and the reason.
// Each record stays in the state file until the broker acknowledged the result, so a
// restart in between sends it again.
import type { JobResult } from '@svc/shared/mqtt/index'
import type { Logger } from '../runtime/Logger.js'
import type { Clock } from '../runtime/time.js'
import { readState, updateState } from './state.js'

export interface UpdateReporterOptions {
  stateFile: string
  runningVersion: string
  publish: (result: JobResult) => Promise<void>
  log: Logger
  clock: Clock
}

export class UpdateReporter {
  readonly #o: UpdateReporterOptions
  #busy: Promise<void> | null = null

  constructor(options: UpdateReporterOptions) {
    this.#o = options
  }

  /** Called once connected and reported; resolves when what there was to say was acknowledged (or failed, logged). */
  report(): Promise<void> {
    this.#busy ??= this.#report()
      .catch((err: unknown) => this.#o.log.warn({ err: err as Error }, 'could not report the last update'))
      .finally(() => {
        this.#busy = null
      })
    return this.#busy
  }

  async #report(): Promise<void> {
    const { stateFile, runningVersion, log, clock } = this.#o
    const state = readState(stateFile)
    if (!state) return
    const trial = state.trial
    if (trial && trial.version === runningVersion && state.active?.version === runningVersion) {
      if (!trial.confirmedAt) {
        updateState(stateFile, (s) => {
          if (s.trial?.jobId === trial.jobId) s.trial.confirmedAt = clock.now().toISOString()
          return s
        })
        log.info({ jobId: trial.jobId, version: runningVersion }, 'update confirmed: this version connected and reported')
      }
      await this.#o.publish({ jobId: trial.jobId, kind: 'update', sentHex: '', replyHex: '', outcome: 'ok', at: clock.now().toISOString() })
      updateState(stateFile, (s) => {
        if (s.trial?.jobId === trial.jobId) s.trial = null
        return s
      })
    }
    const back = state.rolledBack
    if (back) {
      await this.#o.publish({
        jobId: back.jobId,
        kind: 'update',
        sentHex: '',
        replyHex: '',
        outcome: 'failed',
        reason: `rolled back to ${runningVersion}: ${back.reason}`.slice(0, 400),
        rolledBack: true,
        at: clock.now().toISOString(),
      })
      updateState(stateFile, (s) => {
        if (s.rolledBack?.jobId === back.jobId) s.rolledBack = null
        return s
      })
      log.warn({ jobId: back.jobId, version: back.version, reason: back.reason }, 'reported the rolled-back update')
    }
  }
}
