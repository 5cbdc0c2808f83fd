import type { Migration } from './Migration.js'

export default {
  version: 590,
  name: 'agent logs bounds',
  statements: [
    // One open (pending) log request per screen, whichever instance takes the ask
    // (domains/agentlogs). Screens that already hold several keep the newest open; the
    // others close as `expired`.
    `UPDATE agent_logs SET state = 'expired', reason = 'closed: one open request per screen', completed_at = requested_at
      WHERE state = 'pending'
        AND id NOT IN (SELECT MAX(id) FROM agent_logs WHERE state = 'pending' GROUP BY screen_id)`,
    `CREATE UNIQUE INDEX agent_logs_open ON agent_logs(screen_id) WHERE state = 'pending'`,
    // The storage budgets: a workspace's stored lines, oldest upload first (a screen's
    // are read through agent_logs_screen).
    `CREATE INDEX agent_logs_workspace_stored ON agent_logs(workspace_id, uploaded_at)`,
  ],
} satisfies Migration
