import type { Migration } from './Migration.js'

export default {
  version: 670,
  name: 'panel port hint',
  statements: [
    // Where the installer wired the panel (`/dev/ttyUSB0`, `192.168.1.50:1515`): a note kept
    // with the screen's panel profile for whoever services it; not part of the desired state.
    `ALTER TABLE screens ADD COLUMN panel_port_hint TEXT`,
  ],
} satisfies Migration
