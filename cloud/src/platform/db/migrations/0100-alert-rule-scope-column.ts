import type { Migration } from './Migration.js'

// An alert rule's scope (`config.scopeId`) gets its own column, so "which rules watch this
// node" is an indexed equality instead of a text search in the JSON. Existing rows are
// filled from their config; the service writes both from then on.
export default {
  version: 100,
  name: 'alert rules: scope_id column, filled from config',
  statements: (dialect) => [
    `ALTER TABLE alert_rules ADD COLUMN scope_id TEXT`,
    dialect === 'postgres'
      ? `UPDATE alert_rules SET scope_id = (config::jsonb ->> 'scopeId')`
      : `UPDATE alert_rules SET scope_id = json_extract(config, '$.scopeId')`,
    `CREATE INDEX alert_rules_scope ON alert_rules(workspace_id, scope_id)`,
  ],
} satisfies Migration
