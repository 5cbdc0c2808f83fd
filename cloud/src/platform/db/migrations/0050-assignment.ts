import type { Migration } from './Migration.js'

export default {
  version: 50,
  name: 'assignment: server secrets, desired-state publish time, assignment index',
  statements: [
    // Secrets the server makes for itself (the media URL signing key), shared by every process on the database.
    `CREATE TABLE server_secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL, created_at TEXT NOT NULL)`,
    // When the desired state was last published: signed media URLs in it are refreshed before they expire.
    `ALTER TABLE screens ADD COLUMN desired_published_at TEXT`,
    `CREATE INDEX screens_content ON screens(workspace_id, content_kind, content_id)`,
  ],
} satisfies Migration
