import type { Migration } from './Migration.js'

export default {
  version: 500,
  name: 'screen drift',
  statements: [
    // Drift: whether the screen does what it was told (content, panel power and input).
    // `unknown` until it reports while online; `drift_items` is the JSON array of what differs.
    `ALTER TABLE screens ADD COLUMN drift_state TEXT NOT NULL DEFAULT 'unknown'`,
    `ALTER TABLE screens ADD COLUMN drift_since TEXT`,
    `ALTER TABLE screens ADD COLUMN drift_items TEXT`,
    // GET /v1/screens?drift=drifting pages by id within a workspace's drifting screens.
    `CREATE INDEX screens_drift ON screens (workspace_id, drift_state, id)`,
  ],
} satisfies Migration
