import type { Migration } from './Migration.js'

export default {
  version: 480,
  name: 'screen agent version',
  statements: [
    // The agent's version from its reports (`reported.agentVersion`), a column so that the
    // screen list can show it without reading the reported JSON.
    `ALTER TABLE screens ADD COLUMN agent_version TEXT`,
  ],
} satisfies Migration
