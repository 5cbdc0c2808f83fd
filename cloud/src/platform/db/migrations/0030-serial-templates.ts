import type { Migration } from './Migration.js'

export default {
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
} satisfies Migration
