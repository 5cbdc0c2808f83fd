import type { Migration } from './Migration.js'

// The metrics scrape counts the screens by status (svc_screens, ScreenRepository.countByStatus):
// without this index that count read every screen's whole row (its last report with it) on
// every scrape; with it, the count reads the index alone.
export default {
  version: 690,
  name: 'screens by status',
  statements: [`CREATE INDEX screens_status ON screens(status)`],
} satisfies Migration
