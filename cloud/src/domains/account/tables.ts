// The account domain's tables, as the migrations (platform/db/migrations) leave them: their
// column types, added to the database's type (`DB` in platform/db/schema.ts) by declaration
// merging, so every query is checked against them while the platform names no domain.
import type { Defaulted } from '../../platform/db/schema.js'

export interface WorkspacesTable {
  id: string
  name: string
  region: string
  status: Defaulted<string>
  rate_limit: number | null
  licensed_screens: number | null
  billing: Defaulted<string>
  created_at: string
}

declare module '../../platform/db/schema.js' {
  interface DB {
    workspaces: WorkspacesTable
  }
}
