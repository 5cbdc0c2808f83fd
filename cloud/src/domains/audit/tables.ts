// The audit domain's tables (migration 0630): the entries of each chain and each chain's head and anchor.
export interface AuditEntriesTable {
  /** The workspace id; '' for what happened outside any workspace. */
  chain: string
  /** 1, 2, 3… within the chain. */
  seq: number
  id: string
  at: string
  actor_kind: string
  actor_id: string | null
  actor_name: string | null
  via: string
  action: string
  resource_kind: string
  resource_id: string | null
  resource_name: string | null
  node_id: string | null
  /** JSON: [{path, before, after}], secrets masked. */
  changes: string
  request_id: string | null
  ip: string | null
  outcome: string
  /** The previous entry's hash (or the chain's anchor). */
  prev_hash: string
  hash: string
}

export interface AuditChainsTable {
  chain: string
  head_seq: number
  head_hash: string
  /** The last entry retention removed: the first kept entry links to it. */
  anchor_seq: number
  anchor_hash: string
}

declare module '../../platform/db/schema.js' {
  interface DB {
    audit_entries: AuditEntriesTable
    audit_chains: AuditChainsTable
  }
}
