// Which job ids this screen has already taken, persisted (`<data>/jobs-seen.json`) so a
// QoS 1 redelivery after a restart does not write the same bytes to the panel twice. An id
// is recorded before the job runs: for a panel command, at most once is the safer side.
// The result is kept with the id so a duplicate is answered with the same result.
import { promises as fs } from 'node:fs'
import path from 'node:path'
import type { JobResult } from '@svc/shared/mqtt/index'
import { writeFileAtomic } from '../pairing/CredentialStore.js'

export const SEEN_JOBS_FILE = 'jobs-seen.json'

export interface SeenJob {
  id: string
  /** When it arrived (ISO). */
  at: string
  result?: JobResult
}

export interface SeenJobsOptions {
  dataDir: string
  /** Most ids kept (default 500); the oldest go first. */
  limit?: number
}

export class SeenJobs {
  readonly file: string
  readonly #limit: number
  #entries = new Map<string, SeenJob>()
  #writing: Promise<void> = Promise.resolve()

  constructor(options: SeenJobsOptions) {
    this.file = path.join(options.dataDir, SEEN_JOBS_FILE)
    this.#limit = options.limit ?? 500
  }

  /** Reads the file; a missing or damaged file starts empty. */
  async load(): Promise<void> {
    this.#entries.clear()
    try {
      const list = JSON.parse(await fs.readFile(this.file, 'utf8')) as unknown
      if (!Array.isArray(list)) return
      for (const e of list as SeenJob[]) if (e && typeof e.id === 'string') this.#entries.set(e.id, e)
    } catch {
      // nothing seen yet
    }
  }

  get size(): number {
    return this.#entries.size
  }

  get(id: string): SeenJob | undefined {
    return this.#entries.get(id)
  }

  /** Records an id; false when it was already there (a duplicate). Persists before answering. */
  async add(id: string, at: string): Promise<boolean> {
    if (this.#entries.has(id)) return false
    this.#entries.set(id, { id, at })
    while (this.#entries.size > this.#limit) this.#entries.delete(this.#entries.keys().next().value as string)
    await this.#persist()
    return true
  }

  async setResult(id: string, result: JobResult): Promise<void> {
    const e = this.#entries.get(id)
    if (!e) return
    e.result = result
    await this.#persist()
  }

  async delete(): Promise<void> {
    this.#entries.clear()
    await this.#writing
    await fs.rm(this.file, { force: true })
  }

  #persist(): Promise<void> {
    const snapshot = JSON.stringify([...this.#entries.values()])
    this.#writing = this.#writing.then(() => writeFileAtomic(this.file, `${snapshot}\n`, 0o600))
    return this.#writing
  }
}
