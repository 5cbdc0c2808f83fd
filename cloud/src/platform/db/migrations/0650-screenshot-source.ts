import type { Migration } from './Migration.js'

// What a screenshot shows: `display` = the compositor's output captured on the player (what
// the glass shows), `page` = the player page rendered in a headless browser. Rows from before
// this column (agents that only rendered the page) read as `page` once `ok`.
export default {
  version: 650,
  name: 'screenshot source',
  statements: [`ALTER TABLE screenshots ADD COLUMN source TEXT`],
} satisfies Migration
