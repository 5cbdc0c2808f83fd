import type { Migration } from './Migration.js'

export default {
  version: 20,
  name: 'webhook endpoints, deliveries (durable queue), mail outbox',
  statements: [
    // secret is kept as-is: an HMAC key must be readable to sign (see docs/decisions.md).
    `CREATE TABLE webhook_endpoints (
      id TEXT PRIMARY KEY,
      workspace_id TEXT NOT NULL REFERENCES workspaces(id),
      url TEXT NOT NULL,
      description TEXT,
      secret TEXT NOT NULL,
      events TEXT NOT NULL,
      enabled INTEGER NOT NULL DEFAULT 1,
      auto_disabled_at TEXT,
      auto_disabled_reason TEXT,
      consecutive_failures INTEGER NOT NULL DEFAULT 0,
      last_delivery_at TEXT,
      last_status INTEGER,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    )`,
    `CREATE INDEX webhook_endpoints_workspace ON webhook_endpoints(workspace_id, id)`,
    `CREATE TABLE webhook_deliveries (
      id TEXT PRIMARY KEY,
      workspace_id TEXT NOT NULL,
      endpoint_id TEXT NOT NULL,
      event TEXT NOT NULL,
      status TEXT NOT NULL,
      attempts INTEGER NOT NULL DEFAULT 0,
      occurred_at TEXT NOT NULL,
      created_at TEXT NOT NULL,
      next_attempt_at TEXT,
      claimed_until TEXT,
      claim_token TEXT,
      delivered_at TEXT,
      response_status INTEGER,
      error TEXT,
      replay_of TEXT,
      data TEXT NOT NULL,
      payload TEXT
    )`,
    `CREATE INDEX webhook_deliveries_due ON webhook_deliveries(status, next_attempt_at)`,
    `CREATE INDEX webhook_deliveries_workspace ON webhook_deliveries(workspace_id, id)`,
    `CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries(endpoint_id, status)`,
    `CREATE INDEX webhook_deliveries_created ON webhook_deliveries(created_at)`,
    `CREATE TABLE outbox (
      id TEXT PRIMARY KEY,
      workspace_id TEXT,
      to_addresses TEXT NOT NULL,
      subject TEXT NOT NULL,
      body TEXT NOT NULL,
      created_at TEXT NOT NULL,
      sent_at TEXT,
      error TEXT
    )`,
  ],
} satisfies Migration
