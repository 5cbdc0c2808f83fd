import type { Migration } from './Migration.js'

export default {
  version: 40,
  name: 'device link: desired versions, reported state, casts, emergencies',
  statements: [
    // Strictly increasing per screen, so a restarted cloud never republishes an old number.
    `ALTER TABLE screens ADD COLUMN desired_version INTEGER NOT NULL DEFAULT 0`,
    `ALTER TABLE screens ADD COLUMN status_since TEXT`,
    `ALTER TABLE screens ADD COLUMN reported TEXT`,
    `ALTER TABLE screens ADD COLUMN reported_at TEXT`,
    `CREATE TABLE casts (
      id TEXT PRIMARY KEY,
      workspace_id TEXT NOT NULL REFERENCES workspaces(id),
      node_id TEXT REFERENCES nodes(id),
      content_kind TEXT NOT NULL,
      content_id TEXT NOT NULL,
      content_name TEXT,
      scope_kind TEXT NOT NULL,
      scope_node_id TEXT,
      status TEXT NOT NULL,
      screen_count INTEGER NOT NULL,
      triggered_at TEXT NOT NULL,
      expires_at TEXT,
      ended_at TEXT,
      replaced_by TEXT,
      created_by TEXT NOT NULL
    )`,
    `CREATE INDEX casts_workspace ON casts(workspace_id, id)`,
    `CREATE INDEX casts_expiry ON casts(status, expires_at)`,
    // Which screens a cast holds; state 'active' while it still plays there ('replaced' or 'ended' after).
    `CREATE TABLE cast_screens (
      cast_id TEXT NOT NULL REFERENCES casts(id),
      screen_id TEXT NOT NULL,
      state TEXT NOT NULL,
      PRIMARY KEY (cast_id, screen_id)
    )`,
    `CREATE INDEX cast_screens_screen ON cast_screens(screen_id, state)`,
    `CREATE TABLE emergencies (
      id TEXT PRIMARY KEY,
      workspace_id TEXT NOT NULL REFERENCES workspaces(id),
      node_id TEXT REFERENCES nodes(id),
      content_kind TEXT NOT NULL,
      content_id TEXT NOT NULL,
      content_name TEXT,
      message TEXT,
      scope_kind TEXT NOT NULL,
      scope_node_id TEXT,
      status TEXT NOT NULL,
      screen_count INTEGER NOT NULL,
      screens_released INTEGER,
      started_at TEXT NOT NULL,
      cleared_at TEXT,
      created_by TEXT NOT NULL,
      cleared_by TEXT
    )`,
    `CREATE INDEX emergencies_workspace ON emergencies(workspace_id, id)`,
    `CREATE TABLE emergency_screens (
      emergency_id TEXT NOT NULL REFERENCES emergencies(id),
      screen_id TEXT NOT NULL,
      active INTEGER NOT NULL,
      PRIMARY KEY (emergency_id, screen_id)
    )`,
    `CREATE INDEX emergency_screens_screen ON emergency_screens(screen_id, active)`,
  ],
} satisfies Migration
