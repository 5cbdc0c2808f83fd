// The audit log: appends entries to their workspace's hash chain, lists them, verifies the
// chain and cuts its oldest end. Each entry's `hash` is SHA-256 over the previous entry's
// hash and the entry's own content (every stored field but the hashes), so an entry edited,
// removed or inserted in the database breaks the chain at that point, which verify() finds.
import { hash } from 'node:crypto'
import type { Clock, IdGenerator } from '../../platform/clock.js'
import type { Database, Queryable } from '../../platform/db/Database.js'
import { AuditRepository, contentFields, GENESIS, type AuditRow } from './AuditRepository.js'
import type { AuditActorKind, AuditEntry, AuditFilter, AuditOutcome, AuditRecord, AuditVia, SignInRecord } from './types.js'

const DAY_MS = 86_400_000
/** Rows read per query while verifying or exporting. */
const BATCH = 1000
/** Rows retention removes per transaction. */
const CUT_BATCH = 5000

/** The text an entry's hash covers, after the previous hash: its fields in a fixed order. */
export function contentOf(r: Omit<AuditRow, 'hash' | 'prev_hash'>): string {
  return JSON.stringify(contentFields(r))
}

export function hashOf(prevHash: string, content: string): string {
  // One call over the whole text: no Hash object per entry (the same digest as hashing the parts in turn).
  return hash('sha256', `${prevHash}\n${content}`, 'hex')
}

/** The entry a row holds; `changes` when the caller still has them (no need to parse the stored text again). */
export function entryOf(r: AuditRow, changes?: AuditEntry['changes']): AuditEntry {
  return {
    id: r.id,
    seq: r.seq,
    at: r.at,
    actor: { kind: r.actor_kind as AuditActorKind, id: r.actor_id, name: r.actor_name },
    via: r.via as AuditVia,
    action: r.action,
    resource: { kind: r.resource_kind, id: r.resource_id, name: r.resource_name },
    nodeId: r.node_id,
    changes: changes ?? (JSON.parse(r.changes) as AuditEntry['changes']),
    requestId: r.request_id,
    ip: r.ip,
    outcome: r.outcome as AuditOutcome,
    prevHash: r.prev_hash,
    hash: r.hash,
  }
}

/** At most this many entries per transaction. */
const MAX_BATCH = 1000

interface Pending {
  chain: string
  changes: AuditRecord['changes']
  make(head: { seq: number; hash: string }): AuditRow
  resolve(e: AuditEntry): void
  reject(err: unknown): void
}

/**
 * An entry's row once the head it follows is known. Everything but the seq and the hashes is
 * written when the entry is recorded, before the trail's turn on the writer: the changes'
 * JSON, and the hashed content after the chain and seq (`tail`). The seq and the hash are all
 * that wait for the head; the row is filled in place (made again only when a refused batch
 * is built anew from heads read afresh).
 */
function prepared(r: AuditRecord, chain: string, id: string, at: string): (head: { seq: number; hash: string }) => AuditRow {
  const row: AuditRow = {
    chain,
    seq: 0,
    id,
    at,
    actor_kind: r.actor.kind,
    actor_id: r.actor.id,
    actor_name: r.actor.name,
    via: r.via,
    action: r.action,
    resource_kind: r.resource.kind,
    resource_id: r.resource.id,
    resource_name: r.resource.name,
    node_id: r.nodeId,
    changes: JSON.stringify(r.changes),
    request_id: r.requestId,
    ip: r.ip,
    outcome: r.outcome,
    prev_hash: '',
    hash: '',
  }
  // contentOf(row) is start + seq + tail: JSON.stringify writes an array with no spaces.
  const start = `[${JSON.stringify(chain)},`
  const tail = `,${JSON.stringify(contentFields(row).slice(2)).slice(1)}`
  return (head) => {
    row.seq = head.seq + 1
    row.prev_hash = head.hash
    row.hash = hashOf(head.hash, start + row.seq + tail)
    return row
  }
}

export interface VerifyResult {
  ok: boolean
  /** Entries whose hash and link were checked. */
  checked: number
  /** The first entry where the chain breaks, or null. */
  firstBroken: { id: string | null; seq: number; reason: 'hash' | 'link' | 'missing' | 'head' } | null
}

export class AuditTrail {
  private readonly repo: AuditRepository

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    /** false: record() does nothing (SVC_AUDIT=off, the bench's run beside the recorded one). */
    readonly enabled = true,
  ) {
    this.repo = new AuditRepository(db)
    // SQLite: the queued entries ride in the next transaction that commits (see `ride`).
    if (enabled && db.dialect === 'sqlite') db.beforeCommit((tx) => this.ride(tx))
  }

  /**
   * Appends one entry to its workspace's chain and answers it once it has committed (so a
   * write's answer, sent after this, never goes out with its entry still to be written).
   * Group commit: the entries recorded in one turn of the event loop, and those recorded
   * while a batch is being written, are appended together in one transaction, instead of a
   * transaction each after the write's own (which doubled a write's trips through SQLite's
   * single writer). On SQLite the batch is written by the first of: the next transaction
   * any writer commits (it carries the batch, `ride`), or the trail's own turn on the
   * writer (`drain`), which then finds nothing left when a transaction came first.
   */
  record(r: AuditRecord): Promise<AuditEntry | null> {
    if (!this.enabled) return Promise.resolve(null)
    const chain = r.workspaceId ?? ''
    const at = this.clock.now().toISOString()
    const id = this.ids.next('auditEntry')
    return new Promise((resolve, reject) => {
      this.queue.push({ chain, changes: r.changes, make: prepared(r, chain, id, at), resolve, reject })
      this.schedule()
    })
  }

  /** Entries waiting to be written. */
  private readonly queue: Pending[] = []
  /** SQLite: entries a carrying transaction could not write (refused, or rolled back): the trail's own turn writes them. */
  private readonly alone: Pending[] = []
  private draining = false
  private scheduled = false

  private schedule(): void {
    if (this.draining || this.scheduled) return
    this.scheduled = true
    setImmediate(() => {
      this.scheduled = false
      void this.drain()
    })
  }

  /**
   * Writes the queued entries a batch at a time until none is left. On SQLite, while a
   * transaction is under way the trail waits for it to end (it carries the queue); only
   * when none is does it take its own turn on the writer, and takes its batch once that
   * turn has come.
   */
  private async drain(): Promise<void> {
    if (this.draining) return
    this.draining = true
    try {
      while (this.queue.length > 0 || this.alone.length > 0) {
        if (this.db.dialect === 'sqlite') {
          // A transaction under way (or waiting for the writer) carries the queue when it
          // commits: wait for it rather than take a turn of our own, then look again.
          const ended = this.alone.length === 0 ? this.db.nextTransactionEnd() : null
          if (ended) {
            await ended
            continue
          }
          await this.db.exclusive(async (q) => {
            const batch = [...this.alone.splice(0), ...this.queue.splice(0, MAX_BATCH)]
            if (batch.length > 0) await this.write(batch, (b) => this.repo.appendSqlite(q, b))
          })
        } else await this.write(this.queue.splice(0, MAX_BATCH), (b) => this.repo.appendMany(b))
      }
    } finally {
      this.draining = false
    }
  }

  /** Appends a batch and answers its entries; one entry the database refuses does not take the others with it. */
  private async write(batch: Pending[], append: (b: Pending[]) => Promise<AuditRow[]>): Promise<void> {
    try {
      const rows = await append(batch)
      batch.forEach((p, i) => p.resolve(entryOf(rows[i]!, p.changes)))
    } catch (err) {
      if (batch.length === 1) batch[0]!.reject(err)
      else {
        for (const p of batch) {
          await append([p]).then(
            ([row]) => p.resolve(entryOf(row!, p.changes)),
            (e: unknown) => p.reject(e),
          )
        }
      }
    }
  }

  /**
   * SQLite: the queued entries written inside another writer's transaction, just before its
   * COMMIT (Database.beforeCommit), so that one commit carries both and the entries cost no
   * turn of their own on the single writer. They are answered once that transaction has
   * committed. If it is rolled back after all, or the statement is refused (it is then
   * backed out alone; the transaction's own writes go on), the entries are written by the
   * trail's own turn instead, where a refused entry fails alone.
   */
  private async ride(tx: Queryable): Promise<{ committed(): void; failed(): void } | null> {
    if (this.queue.length === 0) return null
    const batch = this.queue.splice(0, MAX_BATCH)
    let rows: AuditRow[]
    try {
      rows = await this.repo.appendSqlite(tx, batch)
    } catch {
      this.alone.push(...batch)
      this.schedule()
      return null
    }
    return {
      committed: () => batch.forEach((p, i) => p.resolve(entryOf(rows[i]!, p.changes))),
      failed: () => {
        this.repo.forgetHeads(batch)
        this.alone.push(...batch)
        this.schedule()
      },
    }
  }

  /**
   * A sign-in, or a refused one, as the sign-in paths report it (password, invite link, OIDC,
   * SAML): the user as actor and resource, in the user's workspace (the cloud's own chain
   * when the address matched no one).
   */
  recordSignIn(s: SignInRecord): Promise<AuditEntry | null> {
    return this.record({
      workspaceId: s.workspaceId,
      actor: { kind: s.userId ? 'user' : 'anonymous', id: s.userId, name: s.name },
      via: s.via,
      action: s.action ?? 'session.create',
      resource: { kind: 'user', id: s.userId, name: s.name },
      nodeId: null,
      changes: s.reason ? [{ path: 'reason', before: null, after: s.reason }] : [],
      requestId: s.requestId,
      ip: s.ip,
      outcome: s.outcome,
    })
  }

  /** Newest first; `limit + 1` rows are read so the caller knows whether more follow. */
  async list(f: AuditFilter, limit: number): Promise<AuditEntry[]> {
    return (await this.repo.list(f, limit)).map((r) => entryOf(r))
  }

  /** Every entry matching the filter, newest first, read a batch at a time (the CSV export). */
  async *all(f: AuditFilter): AsyncGenerator<AuditEntry> {
    let beforeSeq = f.beforeSeq ?? null
    for (;;) {
      const rows = await this.repo.list({ ...f, beforeSeq }, BATCH)
      for (const r of rows) yield entryOf(r)
      if (rows.length < BATCH) return
      beforeSeq = rows[rows.length - 1]!.seq
    }
  }

  /** Walks the chain from its anchor: each entry's hash, its link to the one before, no gaps, and the head. */
  async verify(workspaceId: string | null): Promise<VerifyResult> {
    const chain = workspaceId ?? ''
    const c = await this.repo.chain(chain)
    if (!c) return { ok: true, checked: 0, firstBroken: null }
    let prevHash = c.anchor_seq === 0 ? GENESIS : c.anchor_hash
    let seq = c.anchor_seq
    let checked = 0
    // The walk ends at the head read above: entries appended while it runs (writes go on
    // meanwhile) are past that head and are checked by the next verification, not reported
    // as a break.
    let end = false
    while (!end) {
      const rows = await this.repo.ascending(chain, seq, BATCH)
      for (const r of rows) {
        if (r.seq > c.head_seq) {
          end = true
          break
        }
        if (r.seq !== seq + 1) return { ok: false, checked, firstBroken: { id: r.id, seq: seq + 1, reason: 'missing' } }
        if (r.prev_hash !== prevHash) return { ok: false, checked, firstBroken: { id: r.id, seq: r.seq, reason: 'link' } }
        if (hashOf(r.prev_hash, contentOf(r)) !== r.hash) return { ok: false, checked, firstBroken: { id: r.id, seq: r.seq, reason: 'hash' } }
        prevHash = r.hash
        seq = r.seq
        checked++
      }
      if (rows.length < BATCH) end = true
    }
    // Entries removed from the newest end leave the head pointing past the last one.
    if (seq !== c.head_seq || prevHash !== c.head_hash) return { ok: false, checked, firstBroken: { id: null, seq: seq + 1, reason: 'head' } }
    return { ok: true, checked, firstBroken: null }
  }

  /** Retention: removes entries recorded more than `days` days ago, each chain from its oldest end. */
  async purge(days: number): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - days * DAY_MS).toISOString()
    let removed = 0
    for (const { chain, seq } of await this.repo.cutPoints(cutoff)) {
      for (;;) {
        const n = await this.repo.cut(chain, seq, CUT_BATCH)
        removed += n
        if (n < CUT_BATCH) break
      }
    }
    return removed
  }
}
