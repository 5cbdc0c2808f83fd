// The agentupdates domain's tables, as the migrations (platform/db/migrations) leave them: their
// column types, added to the database's type (`DB` in platform/db/schema.ts) by declaration
// merging, so every query is checked against them while the platform names no domain.

/** Packed agent tarballs with their signatures (domains/agentupdates); the bytes are in the file store by sha256. */
export interface AgentReleasesTable {
  /** `arel_…` */
  id: string
  workspace_id: string
  version: string
  /** `x64` or `arm64`, read from the tarball's serial binding. */
  arch: string
  sha256: string
  size_bytes: number
  /** Ed25519 over the sha256's 32 bytes, base64. */
  signature: string
  /** The signer's public key, SPKI DER base64. */
  public_key: string
  key_fingerprint: string
  created_at: string
  created_by: string | null
}

/** Moves of screens to an agent version in stages (domains/agentupdates). */
export interface AgentRolloutsTable {
  /** `arol_…` */
  id: string
  workspace_id: string
  version: string
  node_id: string | null
  /** JSON array of screen ids, when the rollout named them. */
  screen_ids: string | null
  /** JSON array of cumulative percentages, the last 100. */
  stages: string
  stage_minutes: number
  unhealthy_percent: number
  /** 1 when the rollout may move screens to an older version than they run (allowDowngrade). */
  allow_downgrade: number
  /** running | paused | completed | stopped (by its abort threshold) | aborted (by a person) */
  state: string
  /** Index of the stage under way (or the last one reached). */
  stage: number
  stage_started_at: string
  reason: string | null
  created_at: string
  created_by: string | null
  updated_at: string
  finished_at: string | null
}

/** One screen of a rollout: its stage and its update job. */
export interface AgentRolloutScreensTable {
  rollout_id: string
  screen_id: string
  workspace_id: string
  /** Order within the rollout (stages take the first screens). */
  position: number
  stage: number
  /** `aupd_…`: the update job's id. */
  job_id: string
  /** The release sent (the screen's architecture); null until its stage begins. */
  release_id: string | null
  /** waiting | pending | sent | updated | failed | rolled_back | cancelled */
  state: string
  reason: string | null
  queued_at: string | null
  sent_at: string | null
  result_at: string | null
}

declare module '../../platform/db/schema.js' {
  interface DB {
    agent_releases: AgentReleasesTable
    agent_rollouts: AgentRolloutsTable
    agent_rollout_screens: AgentRolloutScreensTable
  }
}
