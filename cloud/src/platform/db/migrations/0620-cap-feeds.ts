import type { Migration } from './Migration.js'

export default {
  version: 620,
  name: 'cap feeds',
  statements: [
    // Common Alerting Protocol feeds (domains/cap): push (a secret, stored as its SHA-256) or
    // pull (a URL fetched every interval_seconds; next_fetch_at is claimed by one instance).
    // accept, target and presentation are JSON.
    `CREATE TABLE cap_feeds (
      id TEXT PRIMARY KEY,
      workspace_id TEXT NOT NULL,
      node_id TEXT,
      name TEXT NOT NULL,
      mode TEXT NOT NULL,
      url TEXT,
      interval_seconds INTEGER NOT NULL,
      accept TEXT NOT NULL,
      target TEXT NOT NULL,
      content_kind TEXT NOT NULL,
      content_id TEXT NOT NULL,
      area_match TEXT NOT NULL,
      presentation TEXT NOT NULL,
      language TEXT NOT NULL,
      push_secret_hash TEXT,
      etag TEXT,
      last_modified TEXT,
      next_fetch_at TEXT,
      last_fetched_at TEXT,
      last_error TEXT,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    )`,
    `CREATE INDEX cap_feeds_workspace ON cap_feeds(workspace_id, id)`,
    `CREATE INDEX cap_feeds_due ON cap_feeds(mode, next_fetch_at)`,
    // One row per CAP document a feed received, keyed by (feed, sender, identifier): the
    // unique key is what makes each document handled once per cloud. holding = 1 on the row
    // whose emergency is still active (its expires ends it).
    `CREATE TABLE cap_alerts (
      id TEXT PRIMARY KEY,
      feed_id TEXT NOT NULL,
      workspace_id TEXT NOT NULL,
      sender TEXT NOT NULL,
      identifier TEXT NOT NULL,
      sent TEXT NOT NULL,
      status TEXT NOT NULL,
      msg_type TEXT NOT NULL,
      event TEXT,
      severity TEXT,
      urgency TEXT,
      certainty TEXT,
      headline TEXT,
      expires TEXT,
      source_url TEXT,
      state TEXT NOT NULL,
      reason TEXT,
      emergency_id TEXT,
      screens_targeted INTEGER,
      holding INTEGER NOT NULL DEFAULT 0,
      received_at TEXT NOT NULL
    )`,
    `CREATE UNIQUE INDEX cap_alerts_key ON cap_alerts(feed_id, sender, identifier)`,
    `CREATE INDEX cap_alerts_feed ON cap_alerts(feed_id, id)`,
    `CREATE INDEX cap_alerts_holding ON cap_alerts(holding, expires)`,
    `CREATE INDEX cap_alerts_source_url ON cap_alerts(feed_id, source_url)`,
    // A Cancel (or Update) naming an alert this feed has not received yet: remembered, so the
    // alert is ignored when it arrives.
    `CREATE TABLE cap_cancels (
      feed_id TEXT NOT NULL,
      sender TEXT NOT NULL,
      identifier TEXT NOT NULL,
      cancel_alert_id TEXT NOT NULL,
      PRIMARY KEY (feed_id, sender, identifier)
    )`,
    // A location's point (JSON {lat, lon}) and geocodes (JSON ["SAME:006037", …]): a CAP
    // feed with areaMatch "geo" reaches a screen whose nearest location with them is in the area.
    `ALTER TABLE nodes ADD COLUMN geo TEXT`,
    `ALTER TABLE nodes ADD COLUMN geocodes TEXT`,
    // Emergencies: full screen or a banner over the running content, and the CAP alert that
    // started one.
    `ALTER TABLE emergencies ADD COLUMN presentation TEXT NOT NULL DEFAULT 'fullscreen'`,
    `ALTER TABLE emergencies ADD COLUMN source_cap_feed_id TEXT`,
    `ALTER TABLE emergencies ADD COLUMN source_cap_alert_id TEXT`,
  ],
} satisfies Migration
