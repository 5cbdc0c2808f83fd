import type { Migration } from './Migration.js'

export default {
  version: 170,
  name: 'play log retention index',
  statements: [
    // The housekeeper deletes plays older than the retention period across all workspaces.
    `CREATE INDEX play_log_started ON play_log(started_at)`,
  ],
} satisfies Migration
