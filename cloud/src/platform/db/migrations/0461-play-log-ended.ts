import type { Migration } from './Migration.js'

export default {
  version: 461,
  name: 'play log end index',
  statements: [
    // A new batch is checked against the screen's stored plays that end after its first
    // start (no screen plays more at once than its zones): an index seek, few rows.
    `CREATE INDEX play_log_screen_end ON play_log(workspace_id, screen_id, ended_at)`,
  ],
} satisfies Migration
