// The content domain's tables, as the migrations (platform/db/migrations) leave them: their
// column types, added to the database's type (`DB` in platform/db/schema.ts) by declaration
// merging, so every query is checked against them while the platform names no domain.

export interface ContentItemsTable {
  id: string
  workspace_id: string
  kind: string
  name: string
  node_id: string | null
  body: string
  recalled_at: string | null
  recall_reason: string | null
  recalled_by: string | null
  created_at: string
  updated_at: string
}

export interface ContentSharesTable {
  workspace_id: string
  content_kind: string
  content_id: string
  node_id: string
  created_at: string
}

export interface ContentRefsTable {
  workspace_id: string
  from_kind: string
  from_id: string
  to_kind: string
  to_id: string
}

declare module '../../platform/db/schema.js' {
  interface DB {
    content_items: ContentItemsTable
    content_shares: ContentSharesTable
    content_refs: ContentRefsTable
  }
}
