import type { Migration } from './Migration.js'

export default {
  version: 120,
  name: 'takeover delivery',
  statements: [
    // How far a cast or an emergency has reached each of its screens (GET …/<id> `delivery`):
    // `published_version` = the first desired version published to the screen that carried
    // it, `applied_at` = when the screen's reported state first showed it playing.
    `ALTER TABLE cast_screens ADD COLUMN published_version INTEGER`,
    `ALTER TABLE cast_screens ADD COLUMN applied_at TEXT`,
    `ALTER TABLE emergency_screens ADD COLUMN published_version INTEGER`,
    `ALTER TABLE emergency_screens ADD COLUMN applied_at TEXT`,
  ],
} satisfies Migration
