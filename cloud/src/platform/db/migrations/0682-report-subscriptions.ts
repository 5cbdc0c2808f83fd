import type { Migration } from './Migration.js'

export default {
  version: 682,
  name: 'report subscriptions',
  statements: [
    // Files sent with a mail (domains/mail): JSON [{filename, contentType, content}], kept with
    // the message in the outbox like its text, so an unsent mail loses nothing.
    `ALTER TABLE outbox ADD COLUMN attachments TEXT`,
    // Reports mailed on a cadence (domains/reports): which report with which query, to whom,
    // and when it is next due (UTC ISO). Run with the reach of the credential that created it
    // (`scope_node_id`: its pinned location, null = the whole workspace).
    `CREATE TABLE report_subscriptions (
      id TEXT PRIMARY KEY,
      workspace_id TEXT NOT NULL,
      report TEXT NOT NULL,
      params TEXT NOT NULL,
      cadence TEXT NOT NULL,
      recipients TEXT NOT NULL,
      scope_node_id TEXT,
      created_by TEXT NOT NULL,
      created_at TEXT NOT NULL,
      next_run_at TEXT NOT NULL,
      last_sent_at TEXT
    )`,
    `CREATE INDEX report_subscriptions_workspace ON report_subscriptions(workspace_id, id)`,
    `CREATE INDEX report_subscriptions_due ON report_subscriptions(next_run_at)`,
  ],
} satisfies Migration
