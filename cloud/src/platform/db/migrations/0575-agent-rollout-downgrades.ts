import type { Migration } from './Migration.js'

export default {
  version: 575,
  name: 'agent rollout downgrades',
  statements: [
    // 1 when the rollout was created with allowDowngrade: it may move screens to an older
    // version than they run (otherwise such screens are refused).
    `ALTER TABLE agent_rollouts ADD COLUMN allow_downgrade INTEGER NOT NULL DEFAULT 0`,
  ],
} satisfies Migration
