// The device credential on disk: `<data>/credentials.json`, mode 0600, written atomically
// (temp file + rename) so a power cut never leaves half a secret. Holds what the first
// poll after pairing answered; the cloud shows the device secret only once.
import { promises as fs } from 'node:fs'
import path from 'node:path'
import type { MqttLinkInfo } from './CloudClient.js'

export interface Credentials {
  screenId: string
  deviceSecret: string
  mqtt: MqttLinkInfo
  /** The cloud that issued it; another --cloud means pairing again. */
  cloudUrl: string
  pairedAt: string
}

export const CREDENTIALS_FILE = 'credentials.json'

function isCredentials(v: unknown): v is Credentials {
  const c = v as Partial<Credentials> | null
  return (
    typeof c === 'object' &&
    c !== null &&
    typeof c.screenId === 'string' &&
    typeof c.deviceSecret === 'string' &&
    typeof c.cloudUrl === 'string' &&
    typeof c.mqtt === 'object' &&
    c.mqtt !== null &&
    typeof c.mqtt.wsUrl === 'string' &&
    (c.mqtt.url === null || typeof c.mqtt.url === 'string')
  )
}

export class CredentialStore {
  readonly file: string

  constructor(readonly dataDir: string) {
    this.file = path.join(dataDir, CREDENTIALS_FILE)
  }

  /** The stored credential; null when there is none. Throws when the file exists but is unreadable or malformed. */
  async load(): Promise<Credentials | null> {
    let text: string
    try {
      text = await fs.readFile(this.file, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw err
    }
    const value = JSON.parse(text) as unknown
    if (!isCredentials(value)) throw new Error(`${this.file} does not hold a credential`)
    return value
  }

  async save(credentials: Credentials): Promise<void> {
    await writeFileAtomic(this.file, `${JSON.stringify(credentials, null, 2)}\n`, 0o600)
  }

  async delete(): Promise<void> {
    await fs.rm(this.file, { force: true })
  }
}

let tmpSeq = 0
const writing = new Map<string, Promise<void>>()

/**
 * Writes through a temp file in the same folder and renames it over `file`. Writes to the
 * same file run one after another, so the last call's data is what stays on disk.
 */
export function writeFileAtomic(file: string, data: string, mode = 0o644): Promise<void> {
  const prev = writing.get(file) ?? Promise.resolve()
  const next = prev.catch(() => undefined).then(() => writeOnce(file, data, mode))
  writing.set(file, next)
  void next
    .finally(() => {
      if (writing.get(file) === next) writing.delete(file)
    })
    .catch(() => undefined)
  return next
}

async function writeOnce(file: string, data: string, mode: number): Promise<void> {
  const tmp = `${file}.${process.pid}.${++tmpSeq}.tmp`
  try {
    // The folder is made only when missing: one file-system call fewer on every later write
    // (the job dedupe record is written before each job runs).
    await fs.writeFile(tmp, data, { mode }).catch(async (err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err
      await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 })
      await fs.writeFile(tmp, data, { mode })
    })
    // writeFile's mode is filtered by the umask and ignored for an existing file.
    await fs.chmod(tmp, mode)
    await fs.rename(tmp, file)
  } catch (err) {
    await fs.rm(tmp, { force: true }).catch(() => undefined)
    throw err
  }
}
