// The last applied desired state on disk (`<data>/desired.json`), so an agent that
// restarts while the cloud is unreachable still plays the right thing. Read back through
// the shared parser: a damaged file is reported and ignored, never trusted.
import { promises as fs } from 'node:fs'
import path from 'node:path'
import { parseDesiredState, type DesiredState, type MessageIssue } from '@svc/shared/mqtt/index'
import { writeFileAtomic } from '../pairing/CredentialStore.js'

export const DESIRED_FILE = 'desired.json'

export type DesiredLoad = { desired: DesiredState | null } | { desired: null; problem: string; issues?: MessageIssue[] }

export class DesiredStore {
  readonly file: string

  constructor(readonly dataDir: string) {
    this.file = path.join(dataDir, DESIRED_FILE)
  }

  async load(): Promise<DesiredLoad> {
    let text: string
    try {
      text = await fs.readFile(this.file, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { desired: null }
      return { desired: null, problem: `cannot read ${this.file}: ${(err as Error).message}` }
    }
    const parsed = parseDesiredState(text)
    if (!parsed.ok) return { desired: null, problem: `${this.file} is not a valid desired state`, issues: parsed.errors }
    return { desired: parsed.value }
  }

  async save(desired: DesiredState): Promise<void> {
    await writeFileAtomic(this.file, `${JSON.stringify(desired)}\n`, 0o600)
  }

  async delete(): Promise<void> {
    await fs.rm(this.file, { force: true })
  }
}
