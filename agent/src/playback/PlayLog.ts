// Proof of play, device half: what the page actually showed, one JSON line per play in
// `<data>/play-log.jsonl` (append-only, kept while offline and across restarts). A play
// starts on the page's own `load` (image, web page) or `playing` (video) event and ends
// when the page moves on (`ended`, the item's duration, a new view) or the agent stops.
// `batch()` reads records after a cursor, ready to be sent; `ack()` stores the cursor.
import { promises as fs } from 'node:fs'
import path from 'node:path'
import type { Logger } from '../runtime/Logger.js'
import type { Clock } from '../runtime/time.js'

export const PLAY_LOG_FILE = 'play-log.jsonl'
const CURSOR_FILE = 'play-log.cursor'

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
}

type Open = Omit<PlayRecord, 'endedAt' | 'durationMs'> & { startMs: number }

export class PlayLog {
  readonly file: string
  readonly #o: PlayLogOptions
  /** Plays in progress, by page slot (the whole screen or a layout zone). */
  readonly #open = new Map<string, Open>()
  #chain: Promise<void> = Promise.resolve()
  readonly #listeners: Array<() => void> = []

  constructor(options: PlayLogOptions) {
    this.#o = options
    this.file = path.join(options.dataDir, PLAY_LOG_FILE)
  }

  /** A play began in `slot`; one already open there ends now. */
  start(slot: string, play: Omit<PlayRecord, 'startedAt' | 'endedAt' | 'durationMs'>): void {
    this.end(slot)
    const now = this.#o.clock.now()
    this.#open.set(slot, { ...play, startedAt: now.toISOString(), startMs: now.getTime() })
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

  #append(r: PlayRecord): void {
    this.#chain = this.#chain
      .then(() => fs.appendFile(this.file, `${JSON.stringify(r)}\n`, { mode: 0o600 }))
      .then(() => {
        for (const l of this.#listeners) l()
      })
      .catch((err: unknown) => this.#o.log.warn('could not append to the play log', { err: err as Error }))
  }

  /** Every stored record, in order (damaged lines are skipped). */
  async all(): Promise<PlayRecord[]> {
    await this.flush()
    return (await this.#read(0, Infinity)).records
  }

  /** Up to `max` records after the acknowledged cursor. */
  async batch(screenId: string, max = 500): Promise<PlayLogBatch> {
    await this.flush()
    const from = await this.#cursor()
    const { records, end } = await this.#read(from, max)
    return { screenId, records, from, cursor: end }
  }

  /** Marks everything before `cursor` as delivered. */
  async ack(cursor: number): Promise<void> {
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
        this.#o.log.warn('skipping a damaged play log line', { at: pos })
      }
    }
    return { records, end: pos }
  }
}
