// Versioned schema migrations, applied in order once each and recorded in
// schema_migrations. Portable SQL only: TEXT ids and ISO timestamps, INTEGER booleans,
// JSON kept as TEXT. Never edit a released migration: add the next one.
import type { Database } from './Database.js'

export interface Migration {
  version: number
  name: string
  statements: string[]
}

export const migrations: Migration[] = [
  {
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
  },
  {
    version: 2,
    name: 'idempotency keys',
    statements: [
      `CREATE TABLE idempotency_keys (
        workspace_id TEXT NOT NULL,
        route TEXT NOT NULL,
        idem_key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        state TEXT NOT NULL,
        status_code INTEGER,
        body TEXT,
        created_at TEXT NOT NULL,
        PRIMARY KEY (workspace_id, route, idem_key)
      )`,
      `CREATE INDEX idempotency_created ON idempotency_keys(created_at)`,
    ],
  },
  {
    version: 3,
    name: 'platform status',
    statements: [
      `CREATE TABLE status_measurements (
        id TEXT PRIMARY KEY,
        measured_at TEXT NOT NULL,
        state TEXT NOT NULL,
        db_ok INTEGER NOT NULL,
        db_latency_ms REAL,
        broker_ok INTEGER NOT NULL,
        broker_latency_ms REAL,
        detail TEXT
      )`,
      `CREATE INDEX status_measurements_at ON status_measurements(measured_at)`,
      `CREATE TABLE incidents (
        id TEXT PRIMARY KEY,
        title TEXT NOT NULL,
        status TEXT NOT NULL,
        impact TEXT NOT NULL,
        screens_playing INTEGER,
        started_at TEXT NOT NULL,
        resolved_at TEXT
      )`,
      `CREATE TABLE incident_updates (
        id TEXT PRIMARY KEY,
        incident_id TEXT NOT NULL REFERENCES incidents(id),
        at TEXT NOT NULL,
        status TEXT NOT NULL,
        message TEXT NOT NULL
      )`,
    ],
  },
  {
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
  },
  // 40–49: the device link (casts, emergencies, desired-state versions, reported state).
  {
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
  },
  // 30–39: serial templates, serial jobs and the screen's panel profile (serial branch).
  {
    version: 30,
    name: 'serial templates',
    statements: [
      // items is a JSON array of {id, name, value, encoding, eol}: always read and written whole.
      `CREATE TABLE serial_templates (
        id TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        node_id TEXT REFERENCES nodes(id),
        name TEXT NOT NULL,
        model TEXT,
        items TEXT NOT NULL DEFAULT '[]',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      )`,
      `CREATE INDEX serial_templates_workspace ON serial_templates(workspace_id, id)`,
      `CREATE INDEX serial_templates_node ON serial_templates(workspace_id, node_id)`,
    ],
  },
  {
    version: 31,
    name: 'serial jobs',
    statements: [
      // The database is the source of truth for delivery: a job without a result is
      // (re)published whenever its screen connects, so it survives a cloud restart.
      `CREATE TABLE serial_jobs (
        id TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        screen_id TEXT NOT NULL,
        bytes_hex TEXT NOT NULL,
        protocol TEXT,
        timeout_ms INTEGER,
        template_id TEXT,
        item_id TEXT,
        status TEXT NOT NULL DEFAULT 'queued',
        reply_hex TEXT,
        sent_hex TEXT,
        reason TEXT,
        created_at TEXT NOT NULL,
        sent_at TEXT,
        completed_at TEXT
      )`,
      `CREATE INDEX serial_jobs_screen ON serial_jobs(screen_id, id)`,
      `CREATE INDEX serial_jobs_open ON serial_jobs(status, screen_id)`,
    ],
  },
  {
    version: 32,
    name: 'screen panel profile',
    statements: [
      `ALTER TABLE screens ADD COLUMN panel_protocol TEXT`,
      `ALTER TABLE screens ADD COLUMN panel_set_id INTEGER`,
      `ALTER TABLE screens ADD COLUMN panel_poll_seconds INTEGER`,
    ],
  },
  // 10–19: the content library (media, folders, playlists, schedules and the other kinds).
  {
    version: 10,
    name: 'content library: media, generic content items, shares, references, multipart uploads',
    statements: [
      `CREATE TABLE media (
        id TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        mime_type TEXT NOT NULL,
        size_bytes INTEGER NOT NULL,
        sha256 TEXT NOT NULL,
        state TEXT NOT NULL,
        failure_reason TEXT,
        width INTEGER,
        height INTEGER,
        duration_ms INTEGER,
        folder_id TEXT,
        node_id TEXT REFERENCES nodes(id),
        recalled_at TEXT,
        recall_reason TEXT,
        recalled_by TEXT,
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      )`,
      `CREATE INDEX media_workspace ON media(workspace_id, id)`,
      `CREATE INDEX media_sha256 ON media(sha256)`,
      `CREATE INDEX media_state ON media(state)`,
      `CREATE TABLE content_items (
        id TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        node_id TEXT REFERENCES nodes(id),
        body TEXT NOT NULL,
        recalled_at TEXT,
        recall_reason TEXT,
        recalled_by TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      )`,
      `CREATE INDEX content_items_kind ON content_items(workspace_id, kind, id)`,
      `CREATE TABLE content_shares (
        workspace_id TEXT NOT NULL,
        content_kind TEXT NOT NULL,
        content_id TEXT NOT NULL,
        node_id TEXT NOT NULL REFERENCES nodes(id),
        created_at TEXT NOT NULL,
        PRIMARY KEY (content_kind, content_id, node_id)
      )`,
      `CREATE INDEX content_shares_node ON content_shares(workspace_id, node_id)`,
      `CREATE TABLE content_refs (
        workspace_id TEXT NOT NULL,
        from_kind TEXT NOT NULL,
        from_id TEXT NOT NULL,
        to_kind TEXT NOT NULL,
        to_id TEXT NOT NULL
      )`,
      `CREATE INDEX content_refs_to ON content_refs(workspace_id, to_kind, to_id)`,
      `CREATE INDEX content_refs_from ON content_refs(from_id)`,
      `CREATE TABLE media_uploads (
        id TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        name TEXT NOT NULL,
        folder_id TEXT,
        node_id TEXT REFERENCES nodes(id),
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL
      )`,
      `CREATE TABLE media_upload_parts (
        upload_id TEXT NOT NULL REFERENCES media_uploads(id),
        part_number INTEGER NOT NULL,
        size_bytes INTEGER NOT NULL,
        sha256 TEXT NOT NULL,
        received_at TEXT NOT NULL,
        PRIMARY KEY (upload_id, part_number)
      )`,
    ],
  },
  // Versions 20-29: webhooks, mail outbox, alerts.
  {
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
  },
  {
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
  },
  // 50–59: screen assignment (assign, bulk-assign), signed media URLs for devices.
  {
    version: 50,
    name: 'assignment: server secrets, desired-state publish time, assignment index',
    statements: [
      // Secrets the server makes for itself (the media URL signing key), shared by every process on the database.
      `CREATE TABLE server_secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL, created_at TEXT NOT NULL)`,
      // When the desired state was last published: signed media URLs in it are refreshed before they expire.
      `ALTER TABLE screens ADD COLUMN desired_published_at TEXT`,
      `CREATE INDEX screens_content ON screens(workspace_id, content_kind, content_id)`,
    ],
  },
]

export async function migrate(db: Database, list: Migration[] = migrations): Promise<number[]> {
  await db.run(`CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`)
  const done = new Set((await db.all<{ version: number }>('SELECT version FROM schema_migrations')).map((r) => r.version))
  const applied: number[] = []
  for (const m of [...list].sort((a, b) => a.version - b.version)) {
    if (done.has(m.version)) continue
    await db.transaction(async (tx) => {
      // A concurrent process (bootstrap beside a running server) may have applied it meanwhile.
      if (await tx.get('SELECT version FROM schema_migrations WHERE version = ?', [m.version])) return
      for (const s of m.statements) await tx.run(s)
      await tx.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [m.version, m.name, new Date().toISOString()])
      applied.push(m.version)
    })
  }
  return applied
}
