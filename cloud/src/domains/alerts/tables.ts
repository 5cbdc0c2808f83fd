// The alerts domain's tables, as the migrations (platform/db/migrations) leave them: their
// column types, added to the database's type (`DB` in platform/db/schema.ts) by declaration
// merging, so every query is checked against them while the platform names no domain.
import type { Selectable } from 'kysely'
import type { Defaulted } from '../../platform/db/schema.js'

export interface AlertRulesTable {
  id: string
  workspace_id: string
  name: string
  trigger_code: string
  config: string
  webhook_secret: string
  enabled: Defaulted<number>
  node_id: string | null
  /** `config.scopeId` as a column (migration 0100), so a node's rules are found by a plain query. */
  scope_id: string | null
  created_at: string
  updated_at: string
  deleted_at: string | null
}

export interface AlertEventsTable {
  id: string
  workspace_id: string
  rule_id: string
  code: string
  severity: string
  screen_id: string
  screen_name: string
  node_id: string | null
  message: string
  next_action: Defaulted<string>
  opened_at: string
  closed_at: string | null
  detail: string | null
}

export interface AlertScreenStateTable {
  workspace_id: string
  screen_id: string
  screen_name: string
  node_id: string | null
  status: string
  since: string
  flaps: Defaulted<string>
}

export type AlertRuleRow = Selectable<AlertRulesTable>
export type AlertEventRow = Selectable<AlertEventsTable>
export type AlertScreenStateRow = Selectable<AlertScreenStateTable>

declare module '../../platform/db/schema.js' {
  interface DB {
    alert_rules: AlertRulesTable
    alert_events: AlertEventsTable
    alert_screen_state: AlertScreenStateTable
  }
}
