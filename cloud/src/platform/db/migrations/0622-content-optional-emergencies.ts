import type { Migration } from './Migration.js'

// An emergency may have no content: a CAP feed that names none starts emergencies whose
// alert message alone takes the screens. content_kind / content_id of emergencies and of
// cap_feeds become nullable. PostgreSQL drops the NOT NULL; SQLite cannot, so both tables are
// rebuilt with the same columns (in their order after 0040 … 0621), rows copied, indexes made
// again. emergency_screens references emergencies and foreign keys are on (and cannot be
// switched off inside the migration's transaction): its rows are set aside in a temporary
// table while the parent is swapped, then put back.
const EMERGENCY_COLUMNS =
  'id, workspace_id, node_id, content_kind, content_id, content_name, message, scope_kind, scope_node_id, status, screen_count, screens_released, started_at, cleared_at, created_by, cleared_by, reach_at, scope_group_id, presentation, source_cap_feed_id, source_cap_alert_id, alert'
const FEED_COLUMNS =
  'id, workspace_id, node_id, name, mode, url, interval_seconds, accept, target, content_kind, content_id, area_match, presentation, language, push_secret_hash, etag, last_modified, next_fetch_at, last_fetched_at, last_error, created_at, updated_at'

export default {
  version: 622,
  name: 'emergencies and cap feeds without content',
  statements: (dialect) =>
    dialect === 'postgres'
      ? [
          `ALTER TABLE emergencies ALTER COLUMN content_kind DROP NOT NULL`,
          `ALTER TABLE emergencies ALTER COLUMN content_id DROP NOT NULL`,
          `ALTER TABLE cap_feeds ALTER COLUMN content_kind DROP NOT NULL`,
          `ALTER TABLE cap_feeds ALTER COLUMN content_id DROP NOT NULL`,
        ]
      : [
          `CREATE TEMP TABLE emergency_screens_0622 AS SELECT * FROM emergency_screens`,
          `DELETE FROM emergency_screens`,
          `CREATE TABLE emergencies_0622 (
            id TEXT PRIMARY KEY,
            workspace_id TEXT NOT NULL REFERENCES workspaces(id),
            node_id TEXT REFERENCES nodes(id),
            content_kind TEXT,
            content_id TEXT,
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
            cleared_by TEXT,
            reach_at TEXT,
            scope_group_id TEXT,
            presentation TEXT NOT NULL DEFAULT 'fullscreen',
            source_cap_feed_id TEXT,
            source_cap_alert_id TEXT,
            alert TEXT
          )`,
          `INSERT INTO emergencies_0622 (${EMERGENCY_COLUMNS}) SELECT ${EMERGENCY_COLUMNS} FROM emergencies`,
          `DROP TABLE emergencies`,
          `ALTER TABLE emergencies_0622 RENAME TO emergencies`,
          `CREATE INDEX emergencies_workspace ON emergencies(workspace_id, id)`,
          `CREATE INDEX emergencies_cap_alert ON emergencies(source_cap_alert_id)`,
          `INSERT INTO emergency_screens SELECT * FROM emergency_screens_0622 WHERE emergency_id IN (SELECT id FROM emergencies)`,
          `DROP TABLE emergency_screens_0622`,
          `CREATE TABLE cap_feeds_0622 (
            id TEXT PRIMARY KEY,
            workspace_id TEXT NOT NULL,
            node_id TEXT,
            name TEXT NOT NULL,
            mode TEXT NOT NULL,
            url TEXT,
            interval_seconds INTEGER NOT NULL,
            accept TEXT NOT NULL,
            target TEXT NOT NULL,
            content_kind TEXT,
            content_id TEXT,
            area_match TEXT NOT NULL,
            presentation TEXT NOT NULL,
            language TEXT NOT NULL,
            push_secret_hash TEXT,
            etag TEXT,
            last_modified TEXT,
            next_fetch_at TEXT,
            last_fetched_at TEXT,
            last_error TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
          )`,
          `INSERT INTO cap_feeds_0622 (${FEED_COLUMNS}) SELECT ${FEED_COLUMNS} FROM cap_feeds`,
          `DROP TABLE cap_feeds`,
          `ALTER TABLE cap_feeds_0622 RENAME TO cap_feeds`,
          `CREATE INDEX cap_feeds_workspace ON cap_feeds(workspace_id, id)`,
          `CREATE INDEX cap_feeds_due ON cap_feeds(mode, next_fetch_at)`,
        ],
} satisfies Migration
