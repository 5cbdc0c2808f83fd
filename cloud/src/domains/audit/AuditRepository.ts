// The audit log's rows. Appending takes the chain's head row under a lock (SELECT … FOR
// UPDATE on PostgreSQL; SQLite runs one write transaction at a time), so the entries of one
// workspace form one chain whichever instance of the cloud records them.
import type { Database, Queryable, SqlValue } from '../../platform/db/Database.js'
import type { AuditChainsTable, AuditEntriesTable } from './tables.js'
import type { AuditFilter } from './types.js'

export type AuditRow = AuditEntriesTable

/** The first entry of a chain links to this. */
export const GENESIS = '0'.repeat(64)

const COLUMNS =
  'chain, seq, id, at, actor_kind, actor_id, actor_name, via, action, resource_kind, resource_id, resource_name, node_id, changes, request_id, ip, outcome, prev_hash, hash'

function num(v: unknown): number {
  return typeof v === 'number' ? v : Number(v)
}

function rowOf(r: AuditRow): AuditRow {
  return { ...r, seq: num(r.seq) }
}

export class AuditRepository {
  constructor(private readonly db: Database) {}

  /**
   * Appends one entry to its chain: `make` receives the chain's head (seq and hash) and
   * returns the row that follows it. One transaction; the head is locked until it commits.
   */
  async append(chain: string, make: (head: { seq: number; hash: string }) => AuditRow): Promise<AuditRow> {
    return this.db.transaction(async (tx) => {
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
      const row = make({ seq: num(head.head_seq), hash: head.head_hash })
      await tx.run(
        `INSERT INTO audit_entries (${COLUMNS}) VALUES (${COLUMNS.split(',')
          .map(() => '?')
          .join(', ')})`,
        [
          row.chain,
          row.seq,
          row.id,
          row.at,
          row.actor_kind,
          row.actor_id,
          row.actor_name,
          row.via,
          row.action,
          row.resource_kind,
          row.resource_id,
          row.resource_name,
          row.node_id,
          row.changes,
          row.request_id,
          row.ip,
          row.outcome,
          row.prev_hash,
          row.hash,
        ],
      )
      await tx.run('UPDATE audit_chains SET head_seq = ?, head_hash = ? WHERE chain = ?', [row.seq, row.hash, chain])
      return row
    })
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
