import type { Migration } from './Migration.js'

export default {
  version: 32,
  name: 'screen panel profile',
  statements: [
    `ALTER TABLE screens ADD COLUMN panel_protocol TEXT`,
    `ALTER TABLE screens ADD COLUMN panel_set_id INTEGER`,
    `ALTER TABLE screens ADD COLUMN panel_poll_seconds INTEGER`,
  ],
} satisfies Migration
