import type { Migration } from './Migration.js'

export default {
  version: 10,
  name: 'content library: media, generic content items, shares, references, multipart uploads',
  statements: [
    // size_bytes is BIGINT: files reach 10 GiB, past PostgreSQL's INTEGER (SQLite stores both alike).
    `CREATE TABLE media (
      id TEXT PRIMARY KEY,
      workspace_id TEXT NOT NULL REFERENCES workspaces(id),
      name TEXT NOT NULL,
      kind TEXT NOT NULL,
      mime_type TEXT NOT NULL,
      size_bytes BIGINT NOT NULL,
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
      size_bytes BIGINT NOT NULL,
      sha256 TEXT NOT NULL,
      received_at TEXT NOT NULL,
      PRIMARY KEY (upload_id, part_number)
    )`,
  ],
} satisfies Migration
