// Every migration of this release, in version order. A new migration file is added here too
// (the migrate test fails on a file missing from this list): the list is static so that the
// cloud's start-up bundle carries the migrations in it.
import type { Migration } from './Migration.js'
import m0001 from './0001-workspaces-users-nodes-keys.js'
import m0002 from './0002-idempotency-keys.js'
import m0003 from './0003-platform-status.js'
import m0004 from './0004-screens-and-device-registrations.js'
import m0010 from './0010-content-library.js'
import m0020 from './0020-webhooks-and-mail-outbox.js'
import m0021 from './0021-alerts.js'
import m0030 from './0030-serial-templates.js'
import m0031 from './0031-serial-jobs.js'
import m0032 from './0032-screen-panel-profile.js'
import m0040 from './0040-device-link.js'
import m0050 from './0050-assignment.js'
import m0060 from './0060-events-outbox.js'
import m0070 from './0070-play-log.js'
import m0080 from './0080-oauth-tokens.js'
import m0100 from './0100-alert-rule-scope-column.js'
import m0120 from './0120-takeover-delivery.js'
import m0150 from './0150-approvals.js'
import m0170 from './0170-play-log-retention.js'
import m0171 from './0171-screenshots.js'
import m0190 from './0190-work-leases.js'
import m0440 from './0440-takeover-rows-without-fk-checks.js'
import m0450 from './0450-takeover-rows-estimate-per-id.js'
import m0460 from './0460-screenshots-by-sha256.js'
import m0461 from './0461-play-log-ended.js'
import m0470 from './0470-idempotency-keys-per-credential.js'
import m0480 from './0480-screen-agent-version.js'
import m0490 from './0490-play-log-panel-power.js'
import m0500 from './0500-screen-drift.js'
import m0510 from './0510-takeover-reach.js'
import m0520 from './0520-operating-hours.js'
import m0530 from './0530-play-log-totals.js'
import m0540 from './0540-agent-logs.js'
import m0550 from './0550-console-sign-in.js'
import m0560 from './0560-event-stream-replay.js'
import m0570 from './0570-agent-updates.js'
import m0575 from './0575-agent-rollout-downgrades.js'
import m0580 from './0580-sign-in-device-user.js'
import m0590 from './0590-agent-logs-bounds.js'
import m0600 from './0600-tags-and-groups.js'
import m0620 from './0620-cap-feeds.js'
import m0621 from './0621-cap-alert-leases.js'
import m0622 from './0622-content-optional-emergencies.js'
import m0630 from './0630-audit-log.js'
import m0640 from './0640-single-sign-on.js'
import m0641 from './0641-saml-and-scim.js'
import m0643 from './0643-audit-append-trigger.js'
import m0644 from './0644-audit-entries-no-id-index.js'
import m0645 from './0645-audit-append-one-trigger.js'
import m0650 from './0650-screenshot-source.js'
import m0670 from './0670-panel-port-hint.js'
import m0671 from './0671-media-thumbnails.js'
import m0680 from './0680-availability-history.js'
import m0681 from './0681-availability-rollups.js'
import m0682 from './0682-report-subscriptions.js'
import m0690 from './0690-screens-by-status.js'

export const migrations: readonly Migration[] = [
  m0001,
  m0002,
  m0003,
  m0004,
  m0010,
  m0020,
  m0021,
  m0030,
  m0031,
  m0032,
  m0040,
  m0050,
  m0060,
  m0070,
  m0080,
  m0100,
  m0120,
  m0150,
  m0170,
  m0171,
  m0190,
  m0440,
  m0450,
  m0460,
  m0461,
  m0470,
  m0480,
  m0490,
  m0500,
  m0510,
  m0520,
  m0530,
  m0540,
  m0550,
  m0560,
  m0570,
  m0575,
  m0580,
  m0590,
  m0600,
  m0620,
  m0621,
  m0622,
  m0630,
  m0640,
  m0641,
  m0643,
  m0644,
  m0645,
  m0650,
  m0670,
  m0671,
  m0680,
  m0681,
  m0682,
  m0690,
]
