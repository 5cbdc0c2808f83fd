// The on-disk media cache (`<data>/media/`): every file the desired state needs is
// downloaded here before the player switches to it, and the page plays it from the local
// player server (`/media/<key>`), so content keeps playing with the cloud gone, across
// restarts too. A file is keyed by its sha256 when the cloud sent one (signed URLs change
// on every desired version), else by its URL without the query string. The cache is
// bounded (`maxBytes`): least recently used files go first, never one still needed.
import { createHash } from 'node:crypto'
import { createWriteStream, promises as fs } from 'node:fs'
import path from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { DesiredState, PlayableContent, PlayableItem } from '@svc/shared/mqtt/index'
import type { Logger } from '../runtime/Logger.js'
import type { Clock } from '../runtime/time.js'

/** Default cache bound: 2 GiB. */
export const DEFAULT_CACHE_MAX_BYTES = 2 * 1024 ** 3
export const CACHE_DIR = 'media'
const INDEX_FILE = 'index.json'

export type FetchFn = (url: string, init?: { signal?: AbortSignal }) => Promise<Response>

interface Entry {
  key: string
  url: string
  mimeType: string | null
  bytes: number
  usedAt: number
}

/** A file a desired state needs: where to get it and how to name it. */
export interface Wanted {
  key: string
  url: string
  mimeType: string | null
  sha256: string | null
}

export interface MediaCacheOptions {
  dataDir: string
  /** Absolute base for relative URLs (the cloud's). */
  cloudUrl: string
  maxBytes?: number
  log: Logger
  clock: Clock
  fetch?: FetchFn
  /** Longest wait for one download (default 5 minutes). */
  timeoutMs?: number
}

type Media = Pick<PlayableContent, 'url' | 'mimeType' | 'sha256'> | Pick<PlayableItem, 'url' | 'mimeType' | 'sha256'>

/** Files worth caching: images, video and audio (web pages and apps load live). */
function cacheable(m: Media): boolean {
  if (!m.url) return false
  if (m.mimeType) return /^(image|video|audio)\//.test(m.mimeType)
  return Boolean(m.sha256)
}

export function keyOf(m: Media, cloudUrl: string): string | null {
  if (!m.url || !cacheable(m)) return null
  if (m.sha256 && /^[0-9a-fA-F]{64}$/.test(m.sha256)) return m.sha256.toLowerCase()
  let plain = m.url
  try {
    const u = new URL(m.url, cloudUrl)
    plain = `${u.origin}${u.pathname}`
  } catch {
    // keep it as given
  }
  return createHash('sha256').update(plain).digest('hex')
}

/** Every media piece of one PlayableContent, layouts' zones included. */
export function* mediaOf(content: PlayableContent | null | undefined): Generator<Media> {
  if (!content) return
  if (content.url) yield content
  for (const i of content.items ?? []) if (i.url) yield i
  const zones = (content.config as { zones?: unknown } | undefined)?.zones
  if (Array.isArray(zones)) for (const z of zones) yield* mediaOf((z as { content?: PlayableContent | null })?.content ?? null)
}

/** Every file a desired state can show: assignment, schedule library, casts, emergency. */
export function wantedBy(desired: DesiredState | null, cloudUrl: string): Wanted[] {
  if (!desired) return []
  const out = new Map<string, Wanted>()
  const add = (c: PlayableContent | null | undefined): void => {
    for (const m of mediaOf(c)) {
      const key = keyOf(m, cloudUrl)
      if (key && !out.has(key)) out.set(key, { key, url: new URL(m.url!, cloudUrl).toString(), mimeType: m.mimeType ?? null, sha256: m.sha256 ?? null })
    }
  }
  add(desired.assignment?.content)
  for (const e of desired.library ?? []) add(e.content)
  for (const c of desired.casts) add(c.content)
  add(desired.emergency?.content)
  return [...out.values()]
}

export class MediaCache {
  readonly dir: string
  readonly maxBytes: number
  readonly #o: MediaCacheOptions
  readonly #fetch: FetchFn
  #index = new Map<string, Entry>()
  #loaded: Promise<void> | null = null
  #inflight = new Map<string, Promise<boolean>>()
  #saving: Promise<void> = Promise.resolve()

  constructor(options: MediaCacheOptions) {
    const max = options.maxBytes ?? DEFAULT_CACHE_MAX_BYTES
    if (!(Number.isFinite(max) && max > 0)) throw new TypeError('MediaCache: maxBytes must be a positive number')
    this.#o = options
    this.maxBytes = max
    this.dir = path.join(options.dataDir, CACHE_DIR)
    this.#fetch = options.fetch ?? ((url, init) => fetch(url, init))
  }

  /** Bytes held now. */
  get usedBytes(): number {
    let n = 0
    for (const e of this.#index.values()) n += e.bytes
    return n
  }

  has(key: string): boolean {
    return this.#index.has(key)
  }

  /** Reads the index (once; concurrent callers share it); entries whose file is gone are dropped. */
  load(): Promise<void> {
    this.#loaded ??= this.#load()
    return this.#loaded
  }

  async #load(): Promise<void> {
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 })
    let list: Entry[] = []
    try {
      list = JSON.parse(await fs.readFile(path.join(this.dir, INDEX_FILE), 'utf8')) as Entry[]
    } catch {
      list = []
    }
    for (const e of Array.isArray(list) ? list : []) {
      if (!e || typeof e.key !== 'string' || !/^[0-9a-f]{64}$/.test(e.key)) continue
      try {
        const st = await fs.stat(this.file(e.key))
        this.#index.set(e.key, { ...e, bytes: st.size })
      } catch {
        // file gone
      }
    }
  }

  file(key: string): string {
    return path.join(this.dir, key)
  }

  /** The cached entry for a key (and marks it used), or null. */
  lookup(key: string): { file: string; mimeType: string | null; bytes: number } | null {
    const e = this.#index.get(key)
    if (!e) return null
    e.usedAt = this.#o.clock.now().getTime()
    return { file: this.file(key), mimeType: e.mimeType, bytes: e.bytes }
  }

  /**
   * Downloads whatever of `wanted` is missing (in parallel, one download per key), then
   * evicts down to the bound, keeping `wanted`. Answers the keys that are on disk.
   */
  async ensure(wanted: Wanted[]): Promise<Set<string>> {
    await this.load()
    const results = await Promise.all(wanted.map(async (w) => [w.key, await this.#get(w)] as const))
    await this.#evict(new Set(wanted.map((w) => w.key)))
    return new Set(results.filter(([, ok]) => ok).map(([k]) => k))
  }

  #get(w: Wanted): Promise<boolean> {
    if (this.#index.has(w.key)) {
      this.#index.get(w.key)!.usedAt = this.#o.clock.now().getTime()
      return Promise.resolve(true)
    }
    let p = this.#inflight.get(w.key)
    if (!p) {
      p = this.#download(w).finally(() => this.#inflight.delete(w.key))
      this.#inflight.set(w.key, p)
    }
    return p
  }

  async #download(w: Wanted): Promise<boolean> {
    const tmp = `${this.file(w.key)}.part-${process.pid}-${Math.random().toString(36).slice(2)}`
    try {
      const res = await this.#fetch(w.url, { signal: AbortSignal.timeout(this.#o.timeoutMs ?? 300_000) })
      if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`)
      const hash = createHash('sha256')
      const body = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream)
      body.on('data', (chunk: Buffer) => hash.update(chunk))
      await pipeline(body, createWriteStream(tmp, { mode: 0o600 }))
      const digest = hash.digest('hex')
      if (w.sha256 && digest !== w.sha256.toLowerCase()) throw new Error(`sha256 mismatch: got ${digest}`)
      await fs.rename(tmp, this.file(w.key))
      const { size } = await fs.stat(this.file(w.key))
      const mimeType = w.mimeType ?? res.headers.get('content-type')
      this.#index.set(w.key, { key: w.key, url: w.url.replace(/\?.*$/, ''), mimeType, bytes: size, usedAt: this.#o.clock.now().getTime() })
      await this.#save()
      this.#o.log.info({ key: w.key, bytes: size }, 'media cached')
      return true
    } catch (err) {
      await fs.rm(tmp, { force: true })
      this.#o.log.warn({ url: w.url.replace(/\?.*$/, ''), err: err as Error }, 'media download failed')
      return false
    }
  }

  /** Least recently used first, until under the bound; `keep` is never evicted. */
  async #evict(keep: Set<string>): Promise<void> {
    let used = this.usedBytes
    if (used <= this.maxBytes) return
    const victims = [...this.#index.values()].filter((e) => !keep.has(e.key)).sort((a, b) => a.usedAt - b.usedAt)
    for (const v of victims) {
      if (used <= this.maxBytes) break
      this.#index.delete(v.key)
      await fs.rm(this.file(v.key), { force: true })
      used -= v.bytes
      this.#o.log.info({ key: v.key, bytes: v.bytes }, 'media evicted')
    }
    if (used > this.maxBytes) this.#o.log.warn({ usedBytes: used, maxBytes: this.maxBytes }, 'the media the desired state needs exceeds the cache bound')
    await this.#save()
  }

  #save(): Promise<void> {
    this.#saving = this.#saving
      .then(async () => {
        const tmp = path.join(this.dir, `${INDEX_FILE}.tmp`)
        await fs.writeFile(tmp, JSON.stringify([...this.#index.values()]), { mode: 0o600 })
        await fs.rename(tmp, path.join(this.dir, INDEX_FILE))
      })
      .catch((err: unknown) => this.#o.log.warn({ err: err as Error }, 'could not write the media cache index'))
    return this.#saving
  }
}
