import type { Migration } from './Migration.js'

export default {
  version: 510,
  name: 'takeover reach',
  statements: [
    // Reach receipts: when a desired state carrying the takeover was handed to the broker for
    // each screen (beside its version), and when the emergency's `emergency.reach` was recorded.
    `ALTER TABLE cast_screens ADD COLUMN published_at TEXT`,
    `ALTER TABLE emergency_screens ADD COLUMN published_at TEXT`,
    `ALTER TABLE emergencies ADD COLUMN reach_at TEXT`,
  ],
} satisfies Migration
