// What an uploaded agent tarball is: its version (svc-agent/package.json) and architecture
// (the serial binding's prebuilt folder, svc-agent/lib/prebuilds/linux-<arch>/), read with
// node-tar without unpacking it. A file that is not a gzipped tar, or not a packed agent
// (no svc-agent/bin/svc-agent, lib/svc-agent.mjs or package.json), is refused.
//
// An upload is hostile until read: a small gzip can unpack to gigabytes, or to hundreds of
// thousands of empty entries. The file is read from disk in small chunks, inflated by
// Node's zlib stream (in the thread pool, a chunk at a time, so other requests are answered
// between chunks) and handed to node-tar's parser; reading stops, and the upload is refused,
// as soon as the unpacked bytes, the entries or the time spent pass their limits. Nothing
// but the package.json's text (at most 64 KiB) is kept.
//
// A packed agent (`agent pack`) holds only folders and regular files, each path once. An
// archive where a path comes twice (`svc-agent/package.json` and `./svc-agent//package.json`
// unpack to the same file: the last one wins), a link, an absolute path or a `..` is refused:
// the version recorded here must be the one a player installs.
import path from 'node:path'
import zlib from 'node:zlib'
import { Parser, type ReadEntry } from 'tar'
import { AGENT_ARCHES, AGENT_VERSION_PATTERN, type AgentArch } from '@svc/shared/mqtt/index'

export interface PackedAgent {
  version: string
  arch: AgentArch
}

/** How far an upload is read before it is refused. */
export interface TarballLimits {
  /** Bytes the tar may unpack to (its entries' headers and contents). */
  maxUnpackedBytes: number
  /** Entries (files, folders, …) the tar may hold. */
  maxEntries: number
  /** Time the reading may take, in ms. */
  maxMs: number
}

export const DEFAULT_TARBALL_LIMITS: TarballLimits = { maxUnpackedBytes: 512 * 1024 * 1024, maxEntries: 10_000, maxMs: 60_000 }

const PACKAGE_JSON = 'svc-agent/package.json'
const PACKAGE_JSON_MAX_BYTES = 64 * 1024
const NEEDED = ['svc-agent/bin/svc-agent', 'svc-agent/lib/svc-agent.mjs', PACKAGE_JSON]
/** Entry types a packed agent holds (ustar '0' and its old '\0' spelling, '7', '5'). */
const KINDS = new Set(['File', 'OldFile', 'ContiguousFile', 'Directory'])
const READ_CHUNK = 64 * 1024

/** Why an upload is not a packed agent; the message is the client's. */
export class TarballRefusal extends Error {}

/** The path an entry unpacks to, as node-tar's extraction resolves it (`./a//b/` → `a/b`); null for an absolute path or one with `..`. */
function unpackedPath(p: string): string | null {
  if (p.startsWith('/') || /^[a-zA-Z]:/.test(p) || p.split('/').includes('..')) return null
  return path.posix.normalize(p).replace(/\/+$/, '').replace(/^\.$/, '')
}

/**
 * Reads a gzipped tar as its bytes come (write them in order, then `end`): the upload is
 * inspected while it is received, and refused as soon as a limit is passed. `write` and
 * `end` throw the TarballRefusal that says what is wrong; once refused it reads no more.
 */
export class TarballReader {
  /** Each path read, with whether it is a folder (a folder may come twice: it unpacks to the same folder). */
  private readonly seen = new Map<string, boolean>()
  private readonly arches = new Set<string>()
  private pkg = ''
  private refusal: TarballRefusal | null = null
  private entries = 0
  private unpacked = 0
  private readonly parser: Parser
  private readonly gunzip = zlib.createGunzip({ chunkSize: READ_CHUNK })
  /** The inflating loop: settles when the gzip stream ended, broke or was refused. */
  private readonly inflated: Promise<void>
  private readonly timer: NodeJS.Timeout
  /** Settles when the reading is refused: every wait races it. */
  private readonly stopped: Promise<void>
  private stop: () => void = () => undefined

  constructor(private readonly limits: TarballLimits = DEFAULT_TARBALL_LIMITS) {
    this.stopped = new Promise<void>((resolve) => {
      this.stop = resolve
    })
    this.parser = new Parser({ strict: true, onReadEntry: (entry: ReadEntry) => this.entry(entry) })
    this.parser.on('error', (e: Error) => this.refuse(`not a gzipped tar file (${e.message})`))
    this.timer = setTimeout(() => this.refuse(`took more than ${Math.round(limits.maxMs / 1000)} s to read`), limits.maxMs)
    this.timer.unref()
    this.inflated = this.inflate()
  }

  /** The bytes read so far once unpacked (for the bench and the refusals). */
  get unpackedBytes(): number {
    return this.unpacked
  }

  private refuse(message: string): void {
    if (this.refusal) return
    this.refusal = new TarballRefusal(message)
    clearTimeout(this.timer)
    this.gunzip.destroy()
    this.stop()
  }

  private async inflate(): Promise<void> {
    try {
      for await (const chunk of this.gunzip as AsyncIterable<Buffer>) {
        if (this.refusal) return
        this.unpacked += chunk.length
        if (this.unpacked > this.limits.maxUnpackedBytes)
          return this.refuse(`unpacks to more than ${this.limits.maxUnpackedBytes} bytes; a packed agent is far smaller`)
        if (!this.parser.write(chunk) && !this.refusal) await Promise.race([new Promise((resolve) => this.parser.once('drain', resolve)), this.stopped])
      }
    } catch (e) {
      this.refuse(`not a gzipped tar file (${(e as Error).message})`)
    }
  }

  private entry(entry: ReadEntry): void {
    entry.resume()
    if (this.refusal) return
    const refuse = (m: string) => this.refuse(m)
    if (++this.entries > this.limits.maxEntries) return refuse(`holds more than ${this.limits.maxEntries} entries; a packed agent holds a few dozen`)
    const p = unpackedPath(entry.path)
    if (p === null) return refuse(`holds ${JSON.stringify(entry.path.slice(0, 200))}: an absolute path or one with "..", which \`agent pack\` never writes`)
    if (!KINDS.has(entry.type))
      return refuse(`holds ${JSON.stringify(p.slice(0, 200))} as a ${entry.type}; a packed agent holds only folders and regular files`)
    const folder = entry.type === 'Directory'
    const before = this.seen.get(p)
    if (before !== undefined && !(before && folder))
      return refuse(
        p === PACKAGE_JSON
          ? `holds ${PACKAGE_JSON} twice: the version is ambiguous (the recorded one and the installed one could differ)`
          : `holds ${JSON.stringify(p.slice(0, 200))} twice: which one unpacks is ambiguous`,
      )
    this.seen.set(p, folder)
    const m = /^svc-agent\/lib\/prebuilds\/linux-([a-z0-9]+)(\/|$)/.exec(p)
    if (m) this.arches.add(m[1]!)
    if (p === PACKAGE_JSON) {
      if (folder) return refuse(`${PACKAGE_JSON} is a folder`)
      if (entry.size > PACKAGE_JSON_MAX_BYTES) return refuse(`${PACKAGE_JSON} is over ${PACKAGE_JSON_MAX_BYTES} bytes`)
      entry.on('data', (d: Buffer) => {
        this.pkg += d.toString('utf8')
      })
    }
  }

  /** The next bytes of the gzipped tar; resolves when they are taken (inflated as far as they go), throws once refused. */
  async write(chunk: Buffer): Promise<void> {
    if (!this.refusal && !this.gunzip.write(chunk))
      await Promise.race([new Promise((resolve) => this.gunzip.once('drain', resolve)), this.inflated, this.stopped])
    if (this.refusal) throw this.refusal
  }

  /** Stops reading (the upload went wrong elsewhere). */
  abandon(): void {
    this.refuse('abandoned')
  }

  /** The end of the file: what the packed agent is, or the TarballRefusal saying why it is not one. */
  async end(): Promise<PackedAgent> {
    if (!this.refusal) {
      this.gunzip.end()
      await this.inflated
    }
    if (!this.refusal) {
      const ended = new Promise((resolve) => this.parser.once('end', resolve))
      this.parser.end()
      await Promise.race([ended, this.stopped])
    }
    clearTimeout(this.timer)
    if (this.refusal) throw this.refusal
    if (!this.entries) throw new TarballRefusal('not a gzipped tar file (no entries)')
    const missing = NEEDED.filter((f) => !this.seen.has(f))
    if (missing.length) throw new TarballRefusal(`not a packed agent (\`agent pack\`): ${missing.join(', ')} missing`)
    let version: unknown
    try {
      version = (JSON.parse(this.pkg) as { version?: unknown }).version
    } catch {
      throw new TarballRefusal(`${PACKAGE_JSON} is not JSON`)
    }
    if (typeof version !== 'string' || version.length > 64 || !new RegExp(AGENT_VERSION_PATTERN).test(version))
      throw new TarballRefusal(`${PACKAGE_JSON} has no usable version (letters, digits, . + _ -)`)
    const known = [...this.arches].filter((a): a is AgentArch => (AGENT_ARCHES as readonly string[]).includes(a))
    if (known.length !== 1)
      throw new TarballRefusal(
        `the tarball must hold the serial binding of exactly one architecture (${AGENT_ARCHES.join(' or ')}) under svc-agent/lib/prebuilds/; found ${[...this.arches].join(', ') || 'none'}`,
      )
    return { version, arch: known[0]! }
  }
}

/** Passes `source` on as it is read, each chunk first given to `reader` (which throws its refusal). */
export async function* readThrough(source: AsyncIterable<Buffer>, reader: TarballReader): AsyncGenerator<Buffer> {
  let whole = false
  try {
    for await (const chunk of source) {
      await reader.write(chunk)
      yield chunk
    }
    whole = true
  } finally {
    // Cut short (a refusal, a broken upload, a file over its limit): the reader stops too.
    if (!whole) reader.abandon()
  }
}
