import type { Migration } from './Migration.js'

export default {
  version: 1,
  name: 'workspaces, users, credentials, nodes',
  statements: [
    `CREATE TABLE workspaces (
      id TEXT PRIMARY KEY,
      name TEXT NOT NULL,
      region TEXT NOT NULL,
      status TEXT NOT NULL DEFAULT 'active',
      rate_limit INTEGER,
      licensed_screens INTEGER,
      billing TEXT NOT NULL DEFAULT '{}',
      created_at TEXT NOT NULL
    )`,
    `CREATE TABLE users (
      id TEXT PRIMARY KEY,
      workspace_id TEXT NOT NULL REFERENCES workspaces(id),
      name TEXT,
      email TEXT NOT NULL,
      role TEXT NOT NULL,
      email_verified_at TEXT,
      created_at TEXT NOT NULL,
      UNIQUE (workspace_id, email)
    )`,
    `CREATE TABLE sessions (
      id TEXT PRIMARY KEY,
      workspace_id TEXT NOT NULL REFERENCES workspaces(id),
      user_id TEXT NOT NULL REFERENCES users(id),
      lookup TEXT NOT NULL,
      secret_hash TEXT NOT NULL,
      created_at TEXT NOT NULL,
      expires_at TEXT NOT NULL,
      revoked_at TEXT
    )`,
    `CREATE INDEX sessions_lookup ON sessions(lookup)`,
    `CREATE TABLE nodes (
      id TEXT PRIMARY KEY,
      workspace_id TEXT NOT NULL REFERENCES workspaces(id),
      parent_id TEXT REFERENCES nodes(id),
      kind TEXT NOT NULL,
      name TEXT NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    )`,
    `CREATE INDEX nodes_workspace ON nodes(workspace_id, parent_id)`,
    `CREATE TABLE api_keys (
      id TEXT PRIMARY KEY,
      workspace_id TEXT NOT NULL REFERENCES workspaces(id),
      name TEXT NOT NULL,
      preview TEXT NOT NULL,
      secret_hash TEXT NOT NULL,
      permissions TEXT NOT NULL,
      node_id TEXT REFERENCES nodes(id),
      created_by TEXT NOT NULL,
      expires_at TEXT,
      revoked_at TEXT,
      last_used_at TEXT,
      created_at TEXT NOT NULL
    )`,
    `CREATE INDEX api_keys_preview ON api_keys(preview)`,
    `CREATE INDEX api_keys_workspace ON api_keys(workspace_id, id)`,
  ],
} satisfies Migration
