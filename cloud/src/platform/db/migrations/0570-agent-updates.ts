import type { Migration } from './Migration.js'

export default {
  version: 570,
  name: 'agent updates',
  statements: [
    // Packed agent tarballs uploaded with their Ed25519 signature (domains/agentupdates). The
    // bytes live in the content-addressed file store by sha256, like media; one release per
    // workspace, version and architecture.
    `CREATE TABLE agent_releases (
      id TEXT PRIMARY KEY,
      workspace_id TEXT NOT NULL,
      version TEXT NOT NULL,
      arch TEXT NOT NULL,
      sha256 TEXT NOT NULL,
      size_bytes INTEGER NOT NULL,
      signature TEXT NOT NULL,
      public_key TEXT NOT NULL,
      key_fingerprint TEXT NOT NULL,
      created_at TEXT NOT NULL,
      created_by TEXT
    )`,
    `CREATE UNIQUE INDEX agent_releases_version ON agent_releases(workspace_id, version, arch)`,
    `CREATE INDEX agent_releases_sha256 ON agent_releases(sha256)`,
    // A move of screens to a version in stages. stages: JSON array of cumulative percentages
    // ending at 100; stage: the index of the stage under way; screen_ids: JSON array when the
    // rollout named its screens, else node_id (a location and everything under it).
    `CREATE TABLE agent_rollouts (
      id TEXT PRIMARY KEY,
      workspace_id TEXT NOT NULL,
      version TEXT NOT NULL,
      node_id TEXT,
      screen_ids TEXT,
      stages TEXT NOT NULL,
      stage_minutes INTEGER NOT NULL,
      unhealthy_percent INTEGER NOT NULL,
      state TEXT NOT NULL,
      stage INTEGER NOT NULL,
      stage_started_at TEXT NOT NULL,
      reason TEXT,
      created_at TEXT NOT NULL,
      created_by TEXT,
      updated_at TEXT NOT NULL,
      finished_at TEXT
    )`,
    `CREATE INDEX agent_rollouts_workspace ON agent_rollouts(workspace_id, state)`,
    // One row per screen a rollout targets: the stage it belongs to and its update job
    // (job_id `aupd_…`), from waiting through pending (its stage began), sent (the device
    // acknowledged the job) to updated, failed, rolled_back, or cancelled (aborted before it went).
    `CREATE TABLE agent_rollout_screens (
      rollout_id TEXT NOT NULL,
      screen_id TEXT NOT NULL,
      workspace_id TEXT NOT NULL,
      position INTEGER NOT NULL,
      stage INTEGER NOT NULL,
      job_id TEXT NOT NULL,
      release_id TEXT,
      state TEXT NOT NULL,
      reason TEXT,
      queued_at TEXT,
      sent_at TEXT,
      result_at TEXT,
      PRIMARY KEY (rollout_id, screen_id)
    )`,
    `CREATE UNIQUE INDEX agent_rollout_screens_job ON agent_rollout_screens(job_id)`,
    // The job delivery: a screen's jobs to send.
    `CREATE INDEX agent_rollout_screens_screen ON agent_rollout_screens(screen_id, state)`,
  ],
} satisfies Migration
