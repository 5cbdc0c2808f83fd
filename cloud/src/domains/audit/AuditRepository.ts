// The audit log's rows. Appending takes the chain's head row under a lock (SELECT … FOR
// UPDATE on PostgreSQL), so the entries of one workspace form one chain whichever instance
// of the cloud records them. Entries are appended a batch at a time (AuditTrail's group
// commit): on PostgreSQL one transaction per batch; on SQLite one INSERT statement per batch
// (inside another writer's transaction that carries it, or alone: AuditTrail) whose
// trigger (migration 0645) refuses a row that does not follow its chain's head and moves the
// head with each row, the head kept in memory between batches and read again when another
// writer moved it.
import type { Database, Queryable, SqlValue } from '../../platform/db/Database.js'
import type { AuditChainsTable, AuditEntriesTable } from './tables.js'
import type { AuditFilter } from './types.js'

export type AuditRow = AuditEntriesTable

/** The first entry of a chain links to this. */
export const GENESIS = '0'.repeat(64)

const COLUMNS =
  'chain, seq, id, at, actor_kind, actor_id, actor_name, via, action, resource_kind, resource_id, resource_name, node_id, changes, request_id, ip, outcome, prev_hash, hash'

const COLUMN_LIST = COLUMNS.split(', ') as (keyof AuditRow)[]
/**
 * The fields an entry's hash covers, in their fixed order: every column but the two hashes,
 * in COLUMNS' order (AuditTrail's contentOf is this array's JSON).
 */
export function contentFields(r: Omit<AuditRow, 'hash' | 'prev_hash'>): SqlValue[] {
  return [
    r.chain,
    r.seq,
    r.id,
    r.at,
    r.actor_kind,
    r.actor_id,
    r.actor_name,
    r.via,
    r.action,
    r.resource_kind,
    r.resource_id,
    r.resource_name,
    r.node_id,
    r.changes,
    r.request_id,
    r.ip,
    r.outcome,
  ]
}

/** A row's values in COLUMNS' order (named, not looked up by each column's name). */
function pushValues(params: SqlValue[], r: AuditRow): void {
  params.push(...contentFields(r), r.prev_hash, r.hash)
}

/** Rows per INSERT statement (19 parameters each: well under either engine's limit). */
const INSERT_ROWS = 200

function num(v: unknown): number {
  return typeof v === 'number' ? v : Number(v)
}

function rowOf(r: AuditRow): AuditRow {
  return { ...r, seq: num(r.seq) }
}

/** An entry to append: its chain, and its row once the head it follows is known. */
export interface Appended {
  chain: string
  make: (head: { seq: number; hash: string }) => AuditRow
}

/** The positions in `batch` of each chain's entries, in order. */
function chainsOf(batch: readonly Appended[]): Map<string, number[]> {
  const byChain = new Map<string, number[]>()
  batch.forEach((e, i) => {
    const list = byChain.get(e.chain)
    if (list) list.push(i)
    else byChain.set(e.chain, [i])
  })
  return byChain
}

/** The message of migration 0645's trigger: a row that does not follow its chain's head. */
const NOT_NEXT = 'audit_entries: not the next entry of its chain'

/** SQLite: a batch's rows from one JSON array of arrays (each row's values in COLUMN_LIST's order), in that order. */
const INSERT_FROM_JSON = `INSERT INTO audit_entries (${COLUMNS}) SELECT ${COLUMN_LIST.map((_, i) => `value ->> ${i}`).join(', ')} FROM json_each(?) ORDER BY key`

/**
 * SQLite: batches of at most this many entries are inserted with their values bound (one
 * statement text per size, each kept prepared by the connection), larger ones from JSON.
 * Binding spares SQLite parsing each row's JSON again for every value taken from it; it
 * costs the main thread more (each value converted for the driver). Under 50 concurrent
 * writers the trail's own turns carry one entry or nearly fifty (the writers fall into
 * step): at 49 entries, bound values cost about 3 µs less CPU per entry in all
 * (`C=50 bench/audit-trail.ts`). Beyond this size (more writers than fit) the batch goes
 * as one JSON parameter.
 */
export const BOUND_ROWS = 64
const INSERT_BOUND = Array.from(
  { length: BOUND_ROWS + 1 },
  (_, n) => `INSERT INTO audit_entries (${COLUMNS}) VALUES ${Array.from({ length: n }, () => `(${COLUMN_LIST.map(() => '?').join(', ')})`).join(', ')}`,
)

export class AuditRepository {
  /** SQLite: each chain's head as this repository last wrote or read it (checked by the triggers on every append). */
  private readonly heads = new Map<string, { seq: number; hash: string }>()

  constructor(private readonly db: Database) {}

  /**
   * Appends entries to their chains at once (a group commit). SQLite: appendSqlite.
   * PostgreSQL: in ONE transaction, for each chain, in
   * the order of the chain names (so two instances appending to the same chains lock their
   * heads in the same order and never wait on each other in a cycle), the head is locked,
   * `make` is asked for each of the chain's entries in turn with the head it follows, the
   * rows are inserted and the head moved once. Answers the rows in the order of `batch`.
   */
  async appendMany(batch: readonly Appended[]): Promise<AuditRow[]> {
    if (this.db.dialect === 'sqlite') return this.appendSqlite(this.db, batch)
    const byChain = chainsOf(batch)
    const out = new Array<AuditRow>(batch.length)
    await this.db.transaction(async (tx) => {
      for (const chain of [...byChain.keys()].sort()) {
        let head = await this.lockHead(tx, chain)
        if (!head) {
          await tx.run('INSERT INTO audit_chains (chain, head_seq, head_hash, anchor_seq, anchor_hash) VALUES (?, 0, ?, 0, ?) ON CONFLICT (chain) DO NOTHING', [
            chain,
            GENESIS,
            GENESIS,
          ])
          head = await this.lockHead(tx, chain)
          if (!head) throw new Error(`audit chain ${chain} has no head`)
        }
        let at = { seq: num(head.head_seq), hash: head.head_hash }
        const rows: AuditRow[] = []
        for (const i of byChain.get(chain)!) {
          const row = batch[i]!.make(at)
          out[i] = row
          rows.push(row)
          at = { seq: row.seq, hash: row.hash }
        }
        for (let k = 0; k < rows.length; k += INSERT_ROWS) await this.insert(tx, rows.slice(k, k + INSERT_ROWS))
        await tx.run('UPDATE audit_chains SET head_seq = ?, head_hash = ? WHERE chain = ?', [at.seq, at.hash, chain])
      }
    })
    return out
  }

  /**
   * SQLite: the batch in ONE statement through `q` (one trip through the single writer
   * instead of five: BEGIN, head, insert, head, COMMIT): outside any transaction, or inside
   * another writer's transaction that carries it (AuditTrail). Its text depends only on the
   * batch's size up to BOUND_ROWS (the values bound), and beyond it never changes (the rows
   * are one JSON parameter), so the connection keeps it prepared. Each chain continues
   * from the head this repository last wrote, or read; the trigger refuses the whole
   * statement when that head is no longer the chain's (another instance, or a hand, moved
   * it), and the batch is then built again from the heads read afresh, once. A refused
   * statement is backed out alone: a transaction carrying it goes on.
   */
  async appendSqlite(q: Queryable, batch: readonly Appended[], retried = false): Promise<AuditRow[]> {
    const byChain = chainsOf(batch)
    const out = new Array<AuditRow>(batch.length)
    const bound = batch.length <= BOUND_ROWS
    const values: SqlValue[][] = []
    const params: SqlValue[] = []
    const heads = new Map<string, { seq: number; hash: string }>()
    for (const chain of [...byChain.keys()].sort()) {
      let at = this.heads.get(chain) ?? (await this.readHead(q, chain))
      for (const i of byChain.get(chain)!) {
        const row = batch[i]!.make(at)
        out[i] = row
        if (bound) pushValues(params, row)
        else values.push(COLUMN_LIST.map((c) => row[c]))
        at = { seq: row.seq, hash: row.hash }
      }
      heads.set(chain, at)
    }
    try {
      if (bound) await q.run(INSERT_BOUND[batch.length]!, params)
      else await q.run(INSERT_FROM_JSON, [JSON.stringify(values)])
    } catch (err) {
      this.forgetHeads(batch)
      if (!retried && String((err as Error)?.message).includes(NOT_NEXT)) return this.appendSqlite(q, batch, true)
      throw err
    }
    for (const [chain, head] of heads) this.heads.set(chain, head)
    return out
  }

  /**
   * SQLite: the heads of the batch's chains are read again at the next append (the
   * transaction that carried the batch was rolled back after all, so the heads it moved
   * are not the chains').
   */
  forgetHeads(batch: readonly Appended[]): void {
    for (const e of batch) this.heads.delete(e.chain)
  }

  /** A chain's head as stored (made, at the genesis, when the chain has none yet). */
  private async readHead(q: Queryable, chain: string): Promise<{ seq: number; hash: string }> {
    let head = await this.lockHead(q, chain)
    if (!head) {
      await q.run('INSERT INTO audit_chains (chain, head_seq, head_hash, anchor_seq, anchor_hash) VALUES (?, 0, ?, 0, ?) ON CONFLICT (chain) DO NOTHING', [
        chain,
        GENESIS,
        GENESIS,
      ])
      head = await this.lockHead(q, chain)
      if (!head) throw new Error(`audit chain ${chain} has no head`)
    }
    return { seq: num(head.head_seq), hash: head.head_hash }
  }

  /** One INSERT of several rows. */
  private async insert(tx: Queryable, rows: readonly AuditRow[]): Promise<void> {
    const one = `(${COLUMN_LIST.map(() => '?').join(', ')})`
    const params: SqlValue[] = []
    for (const row of rows) pushValues(params, row)
    await tx.run(`INSERT INTO audit_entries (${COLUMNS}) VALUES ${rows.map(() => one).join(', ')}`, params)
  }

  private lockHead(tx: Queryable, chain: string): Promise<Pick<AuditChainsTable, 'head_seq' | 'head_hash'> | undefined> {
    const lock = tx.dialect === 'postgres' ? ' FOR UPDATE' : ''
    return tx.get(`SELECT head_seq, head_hash FROM audit_chains WHERE chain = ?${lock}`, [chain])
  }

  async chain(chain: string): Promise<AuditChainsTable | null> {
    const r = await this.db.get<AuditChainsTable>('SELECT chain, head_seq, head_hash, anchor_seq, anchor_hash FROM audit_chains WHERE chain = ?', [chain])
    return r ? { ...r, head_seq: num(r.head_seq), anchor_seq: num(r.anchor_seq) } : null
  }

  /** Newest first, at most `limit` entries matching the filter. */
  async list(f: AuditFilter, limit: number): Promise<AuditRow[]> {
    const where = ['chain = ?']
    const params: SqlValue[] = [f.chain]
    if (f.actorId) {
      where.push('actor_id = ?')
      params.push(f.actorId)
    }
    if (f.resourceId) {
      where.push('resource_id = ?')
      params.push(f.resourceId)
    }
    if (f.action) {
      where.push('action = ?')
      params.push(f.action)
    }
    if (f.from) {
      where.push('at >= ?')
      params.push(f.from)
    }
    if (f.to) {
      where.push('at < ?')
      params.push(f.to)
    }
    if (f.beforeSeq !== null && f.beforeSeq !== undefined) {
      where.push('seq < ?')
      params.push(f.beforeSeq)
    }
    params.push(limit)
    const rows = await this.db.all<AuditRow>(`SELECT ${COLUMNS} FROM audit_entries WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT ?`, params)
    return rows.map(rowOf)
  }

  /** Oldest first from seq `after` (exclusive): the order verification walks. */
  async ascending(chain: string, after: number, limit: number): Promise<AuditRow[]> {
    const rows = await this.db.all<AuditRow>(`SELECT ${COLUMNS} FROM audit_entries WHERE chain = ? AND seq > ? ORDER BY seq ASC LIMIT ?`, [chain, after, limit])
    return rows.map(rowOf)
  }

  /** Per chain, the newest entry recorded before `cutoff` (what retention cuts up to). */
  async cutPoints(cutoff: string): Promise<{ chain: string; seq: number }[]> {
    const rows = await this.db.all<{ chain: string; seq: unknown }>('SELECT chain, MAX(seq) AS seq FROM audit_entries WHERE at < ? GROUP BY chain', [cutoff])
    return rows.map((r) => ({ chain: r.chain, seq: num(r.seq) }))
  }

  /**
   * Removes a chain's entries up to `seq` (at most `batch` of them, oldest first) and moves
   * its anchor to the last one removed, so the first kept entry still links to something
   * known. Returns how many went.
   */
  async cut(chain: string, seq: number, batch: number): Promise<number> {
    return this.db.transaction(async (tx) => {
      const head = await this.lockHead(tx, chain)
      if (!head) return 0
      const last = await tx.get<{ seq: unknown; hash: string }>(
        'SELECT seq, hash FROM audit_entries WHERE chain = ? AND seq <= ? ORDER BY seq ASC LIMIT 1 OFFSET ?',
        [chain, seq, batch - 1],
      )
      const upTo = last ? num(last.seq) : seq
      const anchor = last ?? (await tx.get<{ seq: unknown; hash: string }>('SELECT seq, hash FROM audit_entries WHERE chain = ? AND seq = ?', [chain, upTo]))
      if (!anchor) return 0
      const { changes } = await tx.run('DELETE FROM audit_entries WHERE chain = ? AND seq <= ?', [chain, upTo])
      await tx.run('UPDATE audit_chains SET anchor_seq = ?, anchor_hash = ? WHERE chain = ?', [num(anchor.seq), anchor.hash, chain])
      return changes
    })
  }
}
