import type { Migration } from './Migration.js'

export default {
  version: 21,
  name: 'alert rules, alert events, screen alert state',
  statements: [
    `CREATE TABLE alert_rules (
      id TEXT PRIMARY KEY,
      workspace_id TEXT NOT NULL REFERENCES workspaces(id),
      name TEXT NOT NULL,
      trigger_code TEXT NOT NULL,
      config TEXT NOT NULL,
      webhook_secret TEXT NOT NULL,
      enabled INTEGER NOT NULL DEFAULT 1,
      node_id TEXT,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      deleted_at TEXT
    )`,
    `CREATE INDEX alert_rules_workspace ON alert_rules(workspace_id, id)`,
    `CREATE TABLE alert_events (
      id TEXT PRIMARY KEY,
      workspace_id TEXT NOT NULL,
      rule_id TEXT NOT NULL,
      code TEXT NOT NULL,
      severity TEXT NOT NULL,
      screen_id TEXT NOT NULL,
      screen_name TEXT NOT NULL,
      node_id TEXT,
      message TEXT NOT NULL,
      next_action TEXT NOT NULL DEFAULT '',
      opened_at TEXT NOT NULL,
      closed_at TEXT,
      detail TEXT
    )`,
    `CREATE INDEX alert_events_workspace ON alert_events(workspace_id, id)`,
    // One open event per rule and screen; closed ones keep history.
    `CREATE UNIQUE INDEX alert_events_open ON alert_events(rule_id, screen_id) WHERE closed_at IS NULL`,
    `CREATE TABLE alert_screen_state (
      workspace_id TEXT NOT NULL,
      screen_id TEXT NOT NULL,
      screen_name TEXT NOT NULL,
      node_id TEXT,
      status TEXT NOT NULL,
      since TEXT NOT NULL,
      flaps TEXT NOT NULL DEFAULT '[]',
      PRIMARY KEY (workspace_id, screen_id)
    )`,
  ],
} satisfies Migration
