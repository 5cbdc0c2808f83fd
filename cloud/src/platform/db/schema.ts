// Typed tables of the whole schema, as the migrations under ./migrations leave it. Every
// repository's queries are checked against these. Conventions (docs/decisions.md):
// ids and timestamps are TEXT (ISO-8601 UTC with milliseconds, so text order is time
// order on both engines), booleans are INTEGER 0/1, JSON is TEXT parsed in the repository.
import type { ColumnType, Insertable, Kysely, Selectable, Transaction, Updateable } from 'kysely'

/** A column with a DEFAULT in the DDL: optional on insert. */
type Defaulted<T> = ColumnType<T, T | undefined, T>

export interface WorkspacesTable {
  id: string
  name: string
  region: string
  status: Defaulted<string>
  rate_limit: number | null
  licensed_screens: number | null
  billing: Defaulted<string>
  created_at: string
}

export interface UsersTable {
  id: string
  workspace_id: string
  name: string | null
  email: string
  role: string
  email_verified_at: string | null
  created_at: string
  /** scrypt hash of the console password (access/passwords.ts); null until one is set. */
  password_hash: Defaulted<string | null>
  password_set_at: Defaulted<string | null>
}

/** A one-use invite link of a user: `inv_…` kept as a hash, like session tokens. */
export interface UserInvitesTable {
  id: string
  workspace_id: string
  user_id: string
  lookup: string
  secret_hash: string
  created_at: string
  expires_at: string
  used_at: string | null
}

/** A browser that signed in to an address (its device cookie, kept as a hash). */
export interface SignInDevicesTable {
  id: string
  email: string
  lookup: string
  secret_hash: string
  created_at: string
  expires_at: string
}

export interface SessionsTable {
  id: string
  workspace_id: string
  user_id: string
  lookup: string
  secret_hash: string
  created_at: string
  expires_at: string
  revoked_at: string | null
}

export interface NodesTable {
  id: string
  workspace_id: string
  parent_id: string | null
  kind: string
  name: string
  created_at: string
  updated_at: string
}

export interface ApiKeysTable {
  id: string
  workspace_id: string
  name: string
  preview: string
  secret_hash: string
  permissions: string
  node_id: string | null
  created_by: string
  expires_at: string | null
  revoked_at: string | null
  last_used_at: string | null
  created_at: string
}

export interface IdempotencyKeysTable {
  workspace_id: string
  /** The credential that sent the key (`apikey:<id>` or a user id): keys are scoped per credential. */
  credential: string
  route: string
  idem_key: string
  fingerprint: string
  state: string
  status_code: number | null
  body: string | null
  created_at: string
}

export interface StatusMeasurementsTable {
  id: string
  measured_at: string
  state: string
  db_ok: number
  db_latency_ms: number | null
  broker_ok: number
  broker_latency_ms: number | null
  detail: string | null
}

export interface IncidentsTable {
  id: string
  title: string
  status: string
  impact: string
  screens_playing: number | null
  started_at: string
  resolved_at: string | null
}

export interface IncidentUpdatesTable {
  id: string
  incident_id: string
  at: string
  status: string
  message: string
}

export interface ScreensTable {
  id: string
  workspace_id: string
  node_id: string | null
  name: string
  device_secret_hash: string | null
  model: string | null
  serial_number: string | null
  status: Defaulted<string>
  last_seen_at: string | null
  content_kind: string | null
  content_id: string | null
  timezone: Defaulted<string>
  created_at: string
  updated_at: string
  desired_version: Defaulted<number>
  status_since: string | null
  reported: string | null
  reported_at: string | null
  /** `reported.agentVersion` of the last report (null before one that carries it). */
  agent_version: string | null
  panel_protocol: string | null
  panel_set_id: number | null
  panel_poll_seconds: number | null
  desired_published_at: string | null
  /** `in_sync`, `drifting` or `unknown` (domains/drift). */
  drift_state: Defaulted<string>
  drift_since: string | null
  /** JSON array of the drift items (what differs, since when). */
  drift_items: string | null
}

export interface DeviceRegistrationsTable {
  id: string
  pairing_code: string
  poll_secret_hash: string
  model: string | null
  serial_number: string | null
  created_at: string
  expires_at: string
  workspace_id: string | null
  screen_id: string | null
  claimed_at: string | null
  secret_issued_at: string | null
}

export interface CastsTable {
  id: string
  workspace_id: string
  node_id: string | null
  content_kind: string
  content_id: string
  content_name: string | null
  scope_kind: string
  scope_node_id: string | null
  status: string
  screen_count: number
  triggered_at: string
  expires_at: string | null
  ended_at: string | null
  replaced_by: string | null
  created_by: string
}

export interface CastScreensTable {
  cast_id: string
  screen_id: string
  state: string
  published_version: Defaulted<number | null>
  published_at: Defaulted<string | null>
  applied_at: Defaulted<string | null>
}

export interface EmergenciesTable {
  id: string
  workspace_id: string
  node_id: string | null
  content_kind: string
  content_id: string
  content_name: string | null
  message: string | null
  scope_kind: string
  scope_node_id: string | null
  status: string
  screen_count: number
  screens_released: number | null
  started_at: string
  cleared_at: string | null
  created_by: string
  cleared_by: string | null
  /** When `emergency.reach` was recorded (every screen applied it, or 60 s passed); null before. */
  reach_at: Defaulted<string | null>
}

export interface EmergencyScreensTable {
  emergency_id: string
  screen_id: string
  active: number
  published_version: Defaulted<number | null>
  published_at: Defaulted<string | null>
  applied_at: Defaulted<string | null>
}

export interface SerialTemplatesTable {
  id: string
  workspace_id: string
  node_id: string | null
  name: string
  model: string | null
  /** JSON array of items, read and written whole. */
  items: Defaulted<string>
  created_at: string
  updated_at: string
}

export interface SerialJobsTable {
  id: string
  workspace_id: string
  screen_id: string
  bytes_hex: string
  protocol: string | null
  timeout_ms: number | null
  template_id: string | null
  item_id: string | null
  status: Defaulted<string>
  reply_hex: string | null
  sent_hex: string | null
  reason: string | null
  created_at: string
  sent_at: string | null
  completed_at: string | null
}

export interface MediaTable {
  id: string
  workspace_id: string
  name: string
  kind: string
  mime_type: string
  size_bytes: number
  sha256: string
  state: string
  failure_reason: string | null
  width: number | null
  height: number | null
  duration_ms: number | null
  folder_id: string | null
  node_id: string | null
  recalled_at: string | null
  recall_reason: string | null
  recalled_by: string | null
  created_by: string
  created_at: string
  updated_at: string
}

export interface ContentItemsTable {
  id: string
  workspace_id: string
  kind: string
  name: string
  node_id: string | null
  body: string
  recalled_at: string | null
  recall_reason: string | null
  recalled_by: string | null
  created_at: string
  updated_at: string
}

export interface ContentSharesTable {
  workspace_id: string
  content_kind: string
  content_id: string
  node_id: string
  created_at: string
}

export interface ContentRefsTable {
  workspace_id: string
  from_kind: string
  from_id: string
  to_kind: string
  to_id: string
}

export interface MediaUploadsTable {
  id: string
  workspace_id: string
  name: string
  folder_id: string | null
  node_id: string | null
  created_by: string
  created_at: string
  expires_at: string
}

export interface MediaUploadPartsTable {
  upload_id: string
  part_number: number
  size_bytes: number
  sha256: string
  received_at: string
}

export interface WebhookEndpointsTable {
  id: string
  workspace_id: string
  url: string
  description: string | null
  secret: string
  /** JSON array of event names. */
  events: string
  enabled: Defaulted<number>
  auto_disabled_at: string | null
  auto_disabled_reason: string | null
  consecutive_failures: Defaulted<number>
  last_delivery_at: string | null
  last_status: number | null
  created_at: string
  updated_at: string
}

export interface WebhookDeliveriesTable {
  id: string
  workspace_id: string
  endpoint_id: string
  event: string
  status: string
  attempts: Defaulted<number>
  occurred_at: string
  created_at: string
  next_attempt_at: string | null
  claimed_until: string | null
  claim_token: string | null
  delivered_at: string | null
  response_status: number | null
  error: string | null
  replay_of: string | null
  data: string
  payload: string | null
}

/** Mail waiting to be sent (the mail outbox; domain events go to `events_outbox`). */
export interface OutboxTable {
  id: string
  workspace_id: string | null
  to_addresses: string
  subject: string
  body: string
  created_at: string
  sent_at: string | null
  error: string | null
}

export interface AlertRulesTable {
  id: string
  workspace_id: string
  name: string
  trigger_code: string
  config: string
  webhook_secret: string
  enabled: Defaulted<number>
  node_id: string | null
  /** `config.scopeId` as a column (migration 0100), so a node's rules are found by a plain query. */
  scope_id: string | null
  created_at: string
  updated_at: string
  deleted_at: string | null
}

export interface AlertEventsTable {
  id: string
  workspace_id: string
  rule_id: string
  code: string
  severity: string
  screen_id: string
  screen_name: string
  node_id: string | null
  message: string
  next_action: Defaulted<string>
  opened_at: string
  closed_at: string | null
  detail: string | null
}

export interface AlertScreenStateTable {
  workspace_id: string
  screen_id: string
  screen_name: string
  node_id: string | null
  status: string
  since: string
  flaps: Defaulted<string>
}

export interface ServerSecretsTable {
  name: string
  value: string
  created_at: string
}

/** Domain events written in the transaction of the change that causes them, dispatched after commit. */
export interface EventsOutboxTable {
  /** A ULID from the service's IdGenerator: increasing, so id order is write order. */
  id: string
  workspace_id: string
  event: string
  /** JSON object: the event's data. */
  data: string
  occurred_at: string
  /** Set once the event has been handed to webhooks and alerts. */
  dispatched_at: string | null
}

export interface OauthTokensTable {
  id: string
  workspace_id: string
  api_key_id: string
  token_hash: string
  /** The key's secret hash at issue: a rotated key no longer matches. */
  key_secret_hash: string
  created_at: string
  expires_at: string
}

/** Proof of play: one completed play a screen reported (see PlayLogRepository). */
export interface PlayLogTable {
  /** `play_` + a hash of the screen and the record: the same record always gets the same id. */
  id: string
  workspace_id: string
  screen_id: string
  source: string
  content_kind: string
  content_id: string
  cast_id: string | null
  emergency_id: string | null
  item_kind: string
  item_id: string
  zone: string | null
  /** UTC ISO 8601 with milliseconds, so text order is time order. */
  started_at: string
  ended_at: string
  duration_ms: number
  received_at: string
  /** `on`, `off` or `unknown`: the panel's power when the play started (proof of display). */
  panel_power: Defaulted<string>
}

/** Proof of display at volume: one screen's plays of one content in one UTC day or hour (see PlayLogRepository). */
export interface PlayLogTotalsTable {
  workspace_id: string
  /** The day (`YYYY-MM-DD`) or hour (`YYYY-MM-DDTHH`, UTC) the plays started. */
  period: string
  content_kind: string
  content_id: string
  screen_id: string
  plays: number
  duration_ms: number
  /** Milliseconds of those plays that started with the panel on. */
  panel_on_ms: number
}

/** A screenshot job and, once the agent uploaded it, its PNG (bytes in the media store by sha256). */
export interface ScreenshotsTable {
  /** `shot_…` */
  id: string
  workspace_id: string
  screen_id: string
  /** queued → sent (the device holds the job) → ok | failed */
  status: string
  reason: string | null
  sha256: string | null
  size_bytes: number | null
  width: number | null
  height: number | null
  created_at: string
  sent_at: string | null
  completed_at: string | null
}

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

/** Requests for a screen's recent log lines and what its agent uploaded (domains/agentlogs). */
export interface AgentLogsTable {
  /** `alog_…` */
  id: string
  workspace_id: string
  screen_id: string
  /** pending → done (uploaded) | failed (the agent's reason) | expired (no answer within the TTL) */
  state: string
  reason: string | null
  /** The most lines asked for (the newest). */
  max_lines: number
  /** Only lines at or after this time; null = any. */
  since: string | null
  requested_at: string
  /** When the device acknowledged the job. */
  sent_at: string | null
  /** When the state left `pending`. */
  completed_at: string | null
  uploaded_at: string | null
  line_count: number | null
  /** 1 when the agent held more matching lines than it sent. */
  truncated: number | null
  size_bytes: number | null
  /** The uploaded lines, a JSON array of {at, level, source, message}, oldest first. */
  lines: string | null
}

export interface SchemaMigrationsTable {
  version: number
  name: string
  applied_at: string
}

export interface WorkLeasesTable {
  /** The worker's name, e.g. `status`. */
  name: string
  /** The instance that runs it (a random id per process). */
  holder: string
  expires_at: string
}

/** Operating hours of a location (`node`) or a screen (`screen`): `hours` is {weekly, exceptions} JSON. */
export interface OperatingHoursTable {
  workspace_id: string
  owner_kind: string
  owner_id: string
  hours: string
  updated_at: string
}

export interface ApprovalPoliciesTable {
  workspace_id: string
  node_id: string
  required: Defaulted<number>
  inherit_from_parent: Defaulted<number>
  escalate_up_tiers: Defaulted<number>
  allow_shared_exemptions: Defaulted<number>
  approvers: Defaulted<string>
  updated_at: string
}

export interface ApprovalRequestsTable {
  id: string
  workspace_id: string
  content_kind: string
  content_id: string
  content_name: string
  action: string
  proposal: string | null
  changes: string
  node_id: string
  node_name: string
  requested_by_id: string
  requested_by_name: string
  requested_at: string
  note: string | null
  state: string
  levels: string
  current_level: Defaulted<number>
  decisions: Defaulted<string>
  updated_at: string
}

export interface DB {
  workspaces: WorkspacesTable
  users: UsersTable
  sessions: SessionsTable
  user_invites: UserInvitesTable
  sign_in_devices: SignInDevicesTable
  nodes: NodesTable
  api_keys: ApiKeysTable
  oauth_tokens: OauthTokensTable
  work_leases: WorkLeasesTable
  idempotency_keys: IdempotencyKeysTable
  status_measurements: StatusMeasurementsTable
  incidents: IncidentsTable
  incident_updates: IncidentUpdatesTable
  screens: ScreensTable
  device_registrations: DeviceRegistrationsTable
  casts: CastsTable
  cast_screens: CastScreensTable
  emergencies: EmergenciesTable
  emergency_screens: EmergencyScreensTable
  serial_templates: SerialTemplatesTable
  serial_jobs: SerialJobsTable
  media: MediaTable
  content_items: ContentItemsTable
  content_shares: ContentSharesTable
  content_refs: ContentRefsTable
  media_uploads: MediaUploadsTable
  media_upload_parts: MediaUploadPartsTable
  webhook_endpoints: WebhookEndpointsTable
  webhook_deliveries: WebhookDeliveriesTable
  outbox: OutboxTable
  alert_rules: AlertRulesTable
  alert_events: AlertEventsTable
  alert_screen_state: AlertScreenStateTable
  server_secrets: ServerSecretsTable
  events_outbox: EventsOutboxTable
  operating_hours: OperatingHoursTable
  play_log: PlayLogTable
  play_log_daily: PlayLogTotalsTable
  play_log_hourly: PlayLogTotalsTable
  approval_policies: ApprovalPoliciesTable
  approval_requests: ApprovalRequestsTable
  screenshots: ScreenshotsTable
  agent_logs: AgentLogsTable
  agent_releases: AgentReleasesTable
  agent_rollouts: AgentRolloutsTable
  agent_rollout_screens: AgentRolloutScreensTable
  schema_migrations: SchemaMigrationsTable
}

export type NodeRow = Selectable<NodesTable>
export type SerialTemplateRow = Selectable<SerialTemplatesTable>
export type SerialJobRow = Selectable<SerialJobsTable>
export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>
export type NewWebhookDelivery = Insertable<WebhookDeliveriesTable>
export type WebhookEndpointUpdate = Updateable<WebhookEndpointsTable>
export type MediaRow = Selectable<MediaTable>
export type MediaUploadRow = Selectable<MediaUploadsTable>
export type MediaUploadPartRow = Selectable<MediaUploadPartsTable>
export type AlertRuleRow = Selectable<AlertRulesTable>
export type AlertEventRow = Selectable<AlertEventsTable>
export type AlertScreenStateRow = Selectable<AlertScreenStateTable>
export type StatusMeasurementRow = Selectable<StatusMeasurementsTable>
export type IncidentRow = Selectable<IncidentsTable>
export type IncidentUpdateRow = Selectable<IncidentUpdatesTable>
export type MailOutboxRow = Selectable<OutboxTable>

/** A connection or an open transaction: what a repository runs its statements on. */
export type Executor = Kysely<DB> | Transaction<DB>

/** A table's selected row with some columns narrowed (a TEXT column holding one of an enumeration's values, say). */
export type RowWith<T, N extends { [K in keyof Selectable<T>]?: unknown }> = Omit<Selectable<T>, keyof N> & N
