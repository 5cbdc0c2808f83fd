import type { Migration } from './Migration.js'

export default {
  version: 150,
  name: 'approvals',
  statements: [
    // A location's own approval policy; a location without a row has the default
    // (required 0, inherit 1). `approvers` is a JSON array of user ids.
    `CREATE TABLE approval_policies (
      workspace_id TEXT NOT NULL REFERENCES workspaces(id),
      node_id TEXT NOT NULL,
      required INTEGER NOT NULL DEFAULT 0,
      inherit_from_parent INTEGER NOT NULL DEFAULT 1,
      escalate_up_tiers INTEGER NOT NULL DEFAULT 0,
      allow_shared_exemptions INTEGER NOT NULL DEFAULT 0,
      approvers TEXT NOT NULL DEFAULT '[]',
      updated_at TEXT NOT NULL,
      PRIMARY KEY (workspace_id, node_id)
    )`,
    // A held change. `action` is 'create' (the item exists but may not play until approved)
    // or 'update' (the item keeps its approved version; `proposal` holds the new one).
    // `levels`, `decisions` and `changes` are JSON; `node_id` is '' for the workspace root.
    `CREATE TABLE approval_requests (
      id TEXT PRIMARY KEY,
      workspace_id TEXT NOT NULL REFERENCES workspaces(id),
      content_kind TEXT NOT NULL,
      content_id TEXT NOT NULL,
      content_name TEXT NOT NULL,
      action TEXT NOT NULL,
      proposal TEXT,
      changes TEXT NOT NULL,
      node_id TEXT NOT NULL,
      node_name TEXT NOT NULL,
      requested_by_id TEXT NOT NULL,
      requested_by_name TEXT NOT NULL,
      requested_at TEXT NOT NULL,
      note TEXT,
      state TEXT NOT NULL,
      levels TEXT NOT NULL,
      current_level INTEGER NOT NULL DEFAULT 0,
      decisions TEXT NOT NULL DEFAULT '[]',
      updated_at TEXT NOT NULL
    )`,
    `CREATE INDEX approval_requests_content ON approval_requests(workspace_id, content_kind, content_id, state)`,
    `CREATE INDEX approval_requests_list ON approval_requests(workspace_id, state, id)`,
  ],
} satisfies Migration
