import type { Migration } from './Migration.js'

export default {
  version: 4,
  name: 'screens and device registrations',
  statements: [
    `CREATE TABLE screens (
      id TEXT PRIMARY KEY,
      workspace_id TEXT NOT NULL REFERENCES workspaces(id),
      node_id TEXT REFERENCES nodes(id),
      name TEXT NOT NULL,
      device_secret_hash TEXT,
      model TEXT,
      serial_number TEXT,
      status TEXT NOT NULL DEFAULT 'offline',
      last_seen_at TEXT,
      content_kind TEXT,
      content_id TEXT,
      timezone TEXT NOT NULL DEFAULT 'UTC',
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    )`,
    `CREATE INDEX screens_workspace ON screens(workspace_id, id)`,
    `CREATE INDEX screens_node ON screens(workspace_id, node_id)`,
    // A device asking to be paired. Only hashes of the poll secret are kept; the device
    // secret is made at the first poll after the claim, so it is never stored in clear.
    `CREATE TABLE device_registrations (
      id TEXT PRIMARY KEY,
      pairing_code TEXT NOT NULL,
      poll_secret_hash TEXT NOT NULL,
      model TEXT,
      serial_number TEXT,
      created_at TEXT NOT NULL,
      expires_at TEXT NOT NULL,
      workspace_id TEXT REFERENCES workspaces(id),
      screen_id TEXT REFERENCES screens(id),
      claimed_at TEXT,
      secret_issued_at TEXT
    )`,
    `CREATE INDEX device_registrations_code ON device_registrations(pairing_code, expires_at)`,
    `CREATE INDEX device_registrations_screen ON device_registrations(screen_id)`,
  ],
} satisfies Migration
