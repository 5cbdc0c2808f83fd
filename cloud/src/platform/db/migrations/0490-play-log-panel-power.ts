import type { Migration } from './Migration.js'

export default {
  version: 490,
  name: 'play log panel power',
  statements: [
    // Proof of display: the panel's power as the agent last read it when the play started.
    // Plays stored before, and plays from agents that do not send it, are `unknown`.
    `ALTER TABLE play_log ADD COLUMN panel_power TEXT NOT NULL DEFAULT 'unknown'`,
  ],
} satisfies Migration
