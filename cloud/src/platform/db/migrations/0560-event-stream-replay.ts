import type { Migration } from './Migration.js'

export default {
  version: 560,
  name: 'event stream replay index',
  statements: [
    // A reconnecting event stream reads its workspace's events after the last id it had.
    `CREATE INDEX events_outbox_workspace_id ON events_outbox(workspace_id, id)`,
  ],
} satisfies Migration
