// The approvals domain's tables, as the migrations (platform/db/migrations) leave them: their
// column types, added to the database's type (`DB` in platform/db/schema.ts) by declaration
// merging, so every query is checked against them while the platform names no domain.
import type { Defaulted } from '../../platform/db/schema.js'

export interface ApprovalPoliciesTable {
  workspace_id: string
  node_id: string
  required: Defaulted<number>
  inherit_from_parent: Defaulted<number>
  escalate_up_tiers: Defaulted<number>
  allow_shared_exemptions: Defaulted<number>
  approvers: Defaulted<string>
  updated_at: string
}

export interface ApprovalRequestsTable {
  id: string
  workspace_id: string
  content_kind: string
  content_id: string
  content_name: string
  action: string
  proposal: string | null
  changes: string
  node_id: string
  node_name: string
  requested_by_id: string
  requested_by_name: string
  requested_at: string
  note: string | null
  state: string
  levels: string
  current_level: Defaulted<number>
  decisions: Defaulted<string>
  updated_at: string
}

declare module '../../platform/db/schema.js' {
  interface DB {
    approval_policies: ApprovalPoliciesTable
    approval_requests: ApprovalRequestsTable
  }
}
