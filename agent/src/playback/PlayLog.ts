// Proof of play, device half: what the page actually showed, one JSON line per play in
// `<data>/play-log.jsonl` (append-only, kept while offline and across restarts). A play
// starts on the page's own `load` (image, web page) or `playing` (video) event and ends
// when the page moves on (`ended`, the item's duration, a new view) or the agent stops.
// `batch()` reads records after a cursor, ready to be sent; `ack()` stores the cursor.
// Bounded: when the file passes `maxBytes`, or once an hour, the oldest records are cut
// from its front (those older than `maxAgeMs`, then acknowledged ones, then, with a
// warning, unsent ones) until it is at most half of `maxBytes`. The cursor is rewritten
// before the file is replaced, so a crash in between re-sends (the cloud stores a record
// once) rather than skipping anything.
import { promises as fs } from 'node:fs'
import path from 'node:path'
import type { Logger } from '../runtime/Logger.js'
import type { Clock } from '../runtime/time.js'
import type { PanelPower } from '@svc/shared/mqtt/index'

export const PLAY_LOG_FILE = 'play-log.jsonl'
const CURSOR_FILE = 'play-log.cursor'
/** Default bound of the play log file (a play is ~300 bytes: about 50 000 plays). */
export const DEFAULT_PLAY_LOG_MAX_BYTES = 16 * 1024 ** 2
/** Default age after which a record is cut, sent or not (the cloud has long had it). */
export const DEFAULT_PLAY_LOG_MAX_AGE_MS = 30 * 86_400_000
const AGE_CHECK_MS = 3_600_000

/** One record of the play log (also the shape of a batch entry). */
export interface PlayRecord {
  screenId: string
  /** What was assigned/cast (a playlist, a layout…) and why it played. */
  source: string
  contentKind: string
  contentId: string
  castId: string | null
  emergencyId: string | null
  /** The piece that was on screen: a playlist's item, a layout's zone content, or the content itself. */
  itemKind: string
  itemId: string
  /** The layout zone it played in, when any. */
  zone: string | null
  startedAt: string
  endedAt: string
  durationMs: number
  /** The panel's power as last read back when the play started (proof of display); absent in records of older agents. */
  panelPower?: PanelPower
}

/** A batch ready to send: records in order, and the cursor to acknowledge once stored. */
export interface PlayLogBatch {
  screenId: string
  records: PlayRecord[]
  /** Byte offset where this batch starts (the acknowledged cursor it was read from). */
  from: number
  /** Byte offset just after the last record; pass to ack(). */
  cursor: number
}

export interface PlayLogOptions {
  dataDir: string
  log: Logger
  clock: Clock
  /** Bound of the file in bytes (default DEFAULT_PLAY_LOG_MAX_BYTES). */
  maxBytes?: number
  /** Records that ended longer ago than this are cut (default DEFAULT_PLAY_LOG_MAX_AGE_MS). */
  maxAgeMs?: number
  /** The panel's power as last read back (default: always `unknown`), stamped on each play as it starts. */
  panelPower?: () => PanelPower
}

type Open = Omit<PlayRecord, 'endedAt' | 'durationMs'> & { startMs: number }

export class PlayLog {
  readonly file: string
  readonly #o: PlayLogOptions
  /** Plays in progress, by page slot (the whole screen or a layout zone). */
  readonly #open = new Map<string, Open>()
  #chain: Promise<void> = Promise.resolve()
  readonly #listeners: Array<() => void> = []
  /** Bytes cut from the front since this object was made: batch cursors are file offsets plus this. */
  #shift = 0
  /** The file's size, once known. */
  #size: number | null = null
  #checkedAt = Number.NEGATIVE_INFINITY
  /** Records dropped unsent by the size bound since start (for tests and logs). */
  droppedUnsent = 0

  constructor(options: PlayLogOptions) {
    this.#o = options
    this.file = path.join(options.dataDir, PLAY_LOG_FILE)
  }

  /** A play began in `slot`; one already open there ends now. */
  start(slot: string, play: Omit<PlayRecord, 'startedAt' | 'endedAt' | 'durationMs' | 'panelPower'>): void {
    this.end(slot)
    const now = this.#o.clock.now()
    this.#open.set(slot, { ...play, startedAt: now.toISOString(), panelPower: this.#o.panelPower?.() ?? 'unknown', startMs: now.getTime() })
  }

  /** The play in `slot` ended now (no-op when none is open). */
  end(slot: string): void {
    const open = this.#open.get(slot)
    if (!open) return
    this.#open.delete(slot)
    const now = this.#o.clock.now()
    const { startMs, ...rest } = open
    this.#append({ ...rest, endedAt: now.toISOString(), durationMs: Math.max(0, now.getTime() - startMs) })
  }

  /** Ends every open play whose slot starts with `prefix` (a page went away; the agent stops). */
  endAll(prefix = ''): void {
    for (const slot of [...this.#open.keys()]) if (slot.startsWith(prefix)) this.end(slot)
  }

  /** Calls `listener` after each record is written (the sender starts a batch then). */
  onWritten(listener: () => void): void {
    this.#listeners.push(listener)
  }

  /** Waits for pending writes. */
  flush(): Promise<void> {
    return this.#chain
  }

  /** Runs `fn` after every earlier write, trim and cursor change. */
  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#chain.then(fn)
    this.#chain = run.then(
      () => undefined,
      () => undefined,
    )
    return run
  }

  #append(r: PlayRecord): void {
    const line = `${JSON.stringify(r)}\n`
    this.#serial(async () => {
      await fs.appendFile(this.file, line, { mode: 0o600 })
      this.#size = (this.#size ?? (await this.#statSize())) + Buffer.byteLength(line)
      for (const l of this.#listeners) l()
      const now = this.#o.clock.now().getTime()
      if (this.#size > this.#maxBytes || now - this.#checkedAt >= AGE_CHECK_MS) await this.#trim()
    }).catch((err: unknown) => this.#o.log.warn({ err: err as Error }, 'could not append to the play log'))
  }

  get #maxBytes(): number {
    return this.#o.maxBytes ?? DEFAULT_PLAY_LOG_MAX_BYTES
  }

  async #statSize(): Promise<number> {
    try {
      return (await fs.stat(this.file)).size
    } catch {
      return 0
    }
  }

  /**
   * Applies the bounds now (the agent calls it on start; appends call it past the size
   * bound and hourly). Resolves to the number of records cut.
   */
  trim(): Promise<number> {
    return this.#serial(() => this.#trim())
  }

  async #trim(): Promise<number> {
    const now = this.#o.clock.now().getTime()
    this.#checkedAt = now
    let buf: Buffer
    try {
      buf = await fs.readFile(this.file)
    } catch {
      this.#size = 0
      return 0
    }
    this.#size = buf.length
    const cursor = Math.min(await this.#cursor(), buf.length)
    const cutoff = now - (this.#o.maxAgeMs ?? DEFAULT_PLAY_LOG_MAX_AGE_MS)
    const target = Math.floor(this.#maxBytes / 2)
    const over = buf.length > this.#maxBytes
    let cut = 0
    let records = 0
    let unsent = 0
    for (;;) {
      const nl = buf.indexOf(0x0a, cut)
      if (nl < 0) break
      let ended = Number.NaN
      try {
        ended = Date.parse((JSON.parse(buf.subarray(cut, nl).toString('utf8')) as PlayRecord).endedAt)
      } catch {
        /* a damaged line goes with its neighbours */
      }
      const old = !(ended >= cutoff)
      if (!old && !(over && buf.length - cut > target)) break
      if (cut >= cursor) unsent++
      cut = nl + 1
      records++
    }
    if (cut === 0) return 0
    // Cursor first: a crash before the rename re-sends a little instead of skipping.
    await this.#writeCursor(Math.max(0, cursor - cut))
    const tmp = `${this.file}.tmp`
    await fs.writeFile(tmp, buf.subarray(cut), { mode: 0o600 })
    await fs.rename(tmp, this.file)
    this.#shift += cut
    this.#size = buf.length - cut
    if (unsent) {
      this.droppedUnsent += unsent
      this.#o.log.warn({ dropped: unsent, maxBytes: this.#maxBytes }, 'plays never sent were cut from the play log (over its size or age bound)')
    }
    this.#o.log.info({ records, bytes: cut }, 'play log trimmed')
    return records
  }

  /** Every stored record, in order (damaged lines are skipped). */
  all(): Promise<PlayRecord[]> {
    return this.#serial(async () => (await this.#read(0, Infinity)).records)
  }

  /** Up to `max` records after the acknowledged cursor. */
  batch(screenId: string, max = 500): Promise<PlayLogBatch> {
    return this.#serial(async () => {
      const from = await this.#cursor()
      const { records, end } = await this.#read(from, max)
      return { screenId, records, from: from + this.#shift, cursor: end + this.#shift }
    })
  }

  /** Marks everything before `cursor` (from batch(), even if the file was trimmed since) as delivered. */
  ack(cursor: number): Promise<void> {
    return this.#serial(() => this.#writeCursor(Math.max(0, cursor - this.#shift)))
  }

  async #writeCursor(cursor: number): Promise<void> {
    const tmp = path.join(this.#o.dataDir, `${CURSOR_FILE}.tmp`)
    await fs.writeFile(tmp, String(cursor), { mode: 0o600 })
    await fs.rename(tmp, path.join(this.#o.dataDir, CURSOR_FILE))
  }

  async #cursor(): Promise<number> {
    try {
      const n = Number(await fs.readFile(path.join(this.#o.dataDir, CURSOR_FILE), 'utf8'))
      return Number.isInteger(n) && n >= 0 ? n : 0
    } catch {
      return 0
    }
  }

  async #read(from: number, max: number): Promise<{ records: PlayRecord[]; end: number }> {
    let buf: Buffer
    try {
      buf = await fs.readFile(this.file)
    } catch {
      return { records: [], end: from }
    }
    const records: PlayRecord[] = []
    let pos = Math.min(from, buf.length)
    while (records.length < max) {
      const nl = buf.indexOf(0x0a, pos)
      if (nl < 0) break // an unfinished last line waits for its newline
      const line = buf.subarray(pos, nl).toString('utf8')
      pos = nl + 1
      try {
        const r = JSON.parse(line) as PlayRecord
        if (r && typeof r.itemId === 'string' && typeof r.startedAt === 'string') records.push(r)
      } catch {
        this.#o.log.warn({ at: pos }, 'skipping a damaged play log line')
      }
    }
    return { records, end: pos }
  }
}
