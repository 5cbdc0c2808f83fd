// The nodes domain's tables, as the migrations (platform/db/migrations) leave them: their
// column types, added to the database's type (`DB` in platform/db/schema.ts) by declaration
// merging, so every query is checked against them while the platform names no domain.
import type { Selectable } from 'kysely'
import type { Defaulted } from '../../platform/db/schema.js'

export interface NodesTable {
  id: string
  workspace_id: string
  parent_id: string | null
  kind: string
  name: string
  created_at: string
  updated_at: string
  /** JSON {lat, lon} (WGS 84), or null. */
  geo: Defaulted<string | null>
  /** JSON array of `valueName:value` geocodes (e.g. `SAME:006037`), or null. */
  geocodes: Defaulted<string | null>
}

export type NodeRow = Selectable<NodesTable>

declare module '../../platform/db/schema.js' {
  interface DB {
    nodes: NodesTable
  }
}
