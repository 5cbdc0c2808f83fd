// The names the cloud's modules are wired by, with their types: what the platform hands
// every module (PlatformProvisions, built by app.ts) and what the domain modules provide
// (DomainProvisions). A module declares its needs and provisions as Picks of these, so a
// name used with two types does not compile; wireModules() checks the names at boot.
import type { Logger, Timers } from '@svc/shared'
import type { Config } from '../config.js'
import type { Clock, IdGenerator, RandomSource } from '../platform/clock.js'
import type { Database } from '../platform/db/Database.js'
import type { DataChanges } from '../platform/db/changes.js'
import type { EmbeddedBroker } from '../platform/broker/EmbeddedBroker.js'
import type { RedisClient } from '../platform/cluster/redis.js'
import type { WorkLeases } from '../platform/cluster/WorkLeases.js'
import type { OutboundGuard } from '../platform/net/OutboundGuard.js'
import type { RateLimiter } from '../platform/http/rateLimit.js'
import type { AuthFailureGuard } from '../platform/http/authFailures.js'
import type { IdempotencyStore } from '../platform/http/idempotency.js'
import type { StopSteps } from '../platform/lifecycle.js'
import type { Hook } from '../platform/hooks.js'
import type { Module, Names } from '../platform/modules.js'
import type { HousekeepingTask } from '../platform/workers/Housekeeper.js'
import type { ApiKeyService, CredentialChanges, OAuthService, SignInService, UserService } from './access/index.js'
import type { WorkspaceService } from './account/index.js'
import type { AgentLogService } from './agentlogs/index.js'
import type { AgentReleaseService, AgentRolloutService } from './agentupdates/index.js'
import type { AlertEvaluator, AlertRuleService, AlertWorker } from './alerts/index.js'
import type { CapService, CapWorker } from './cap/index.js'
import type { ApprovalService, HeldChangeHandler } from './approvals/index.js'
import type {
  ContentAccess,
  ContentChangeListener,
  ContentPlayback,
  ContentRecall,
  ContentResolver,
  ContentService,
  ContentSharing,
  ContentUsage,
} from './content/index.js'
import type {
  ClusterPresence,
  DesiredStateBuilder,
  DesiredStatePublisher,
  DevicePolicy,
  PanelSettingsSource,
  ScreenPresence,
  ScreenStatusChange,
} from './devicelink/index.js'
import type { DriftService } from './drift/index.js'
import type { EventBus, EventOutbox, EventStreamHub } from './events/index.js'
import type { OperatingHoursRecords, OperatingHoursService } from './hours/index.js'
import type { Mailer } from './mail/index.js'
import type { MediaService, MediaStore, MediaUrlSigner } from './media/index.js'
import type { NodeRemoval, NodeService, NodeUsage } from './nodes/index.js'
import type { PlayLogLimitSink, PlayLogService } from './playlog/index.js'
import type { AssignmentService, MarkDirtyLater, PairingService, ScreenPanelService, ScreenRecords, ScreenReport, ScreenService } from './screens/index.js'
import type { ScreenshotService } from './screenshots/index.js'
import type { SerialJobService, SerialTemplateService } from './serial/index.js'
import type { StatusService } from './status/index.js'
import type { GroupChange, GroupService, TagChange, TagService } from './targeting/index.js'
import type { CastService, EmergencyService, ReachReceipts, TakeoverDelivery, TakeoverRecords } from './takeovers/index.js'
import type { PreviewService, TimelineService } from './timeline/index.js'
import type { WebhookDeliveryWorker, WebhookEndpoints, WebhookQueue, WebhookSender } from './webhooks/index.js'

/** What app.ts opens before any module: storage, the broker, the HTTP edge's shared parts. */
export interface PlatformProvisions {
  config: Config
  db: Database
  clock: Clock
  ids: IdGenerator
  /** The injected randomness (tests); undefined = the system's. */
  random: RandomSource | undefined
  log: Logger
  /** Timers for waits measured on `clock` (a ManualClock is both); undefined = the system's. */
  timers: Timers | undefined
  broker: EmbeddedBroker
  /** The Redis joining the instances of one cloud (SVC_REDIS_URL), or null for a single instance. */
  redis: RedisClient | null
  /** Outbound HTTP behind the SSRF guard (webhooks, alert channels, media import). */
  outbound: OutboundGuard
  rateLimiter: RateLimiter
  /** Failed authentications per client address (shared through Redis when the cloud has one). */
  authFailures: AuthFailureGuard
  idempotency: IdempotencyStore
  /** Committed changes of data kept in memory: the database's own, or with Redis the whole cloud's. */
  dataChanges: DataChanges
  /** Work leases: a `oncePerCloud` worker runs on one instance at a time. */
  leases: WorkLeases
  /** Who may connect, publish and subscribe on the broker (it exists before the broker starts). */
  devicePolicy: DevicePolicy
  /** Stop steps that run before the broker closes (in reverse order of adding). */
  stopSteps: StopSteps
  /**
   * Stop steps that run after the broker has closed, in wiring order: each module records or
   * passes on what the broker's last drops caused, before the modules listening to it.
   */
  drainSteps: StopSteps
  /** Stop steps after the drains, in reverse wiring order: what the drains used (mail, outbound HTTP, channels). */
  releaseSteps: StopSteps
  /** Row clean-up tasks the housekeeper runs once per interval, on one instance. */
  housekeeping: Hook<HousekeepingTask>
  /** Run once every module is wired, in the order added (what must not start before all listeners joined). */
  startSteps: Hook<() => unknown>
  /** Test seams: a content library and panel settings of the test's own (undefined = the real ones). */
  contentOverride: ContentResolver | undefined
  panelSettings: PanelSettingsSource | undefined
}

/** The platform's names, one `true` each (the compiler checks the list against PlatformProvisions). */
export const PLATFORM_NAMES: Names<PlatformProvisions> = {
  config: true,
  db: true,
  clock: true,
  ids: true,
  random: true,
  log: true,
  timers: true,
  broker: true,
  redis: true,
  outbound: true,
  rateLimiter: true,
  authFailures: true,
  idempotency: true,
  dataChanges: true,
  leases: true,
  devicePolicy: true,
  stopSteps: true,
  drainSteps: true,
  releaseSteps: true,
  housekeeping: true,
  startSteps: true,
  contentOverride: true,
  panelSettings: true,
}

/** What the domain modules provide (domains/<name>/index.ts), by name. */
export interface DomainProvisions {
  events: EventBus
  /** Domain events recorded with the change that causes them; see domains/events/EventOutbox.ts. */
  outbox: EventOutbox
  /** Live event streams (GET /v1/events/stream) reading the outbox. */
  eventStream: EventStreamHub
  /** Mail to owners and alert recipients (SMTP, or the outbox table). */
  mailer: Mailer
  nodes: NodeService
  /** What each domain keeps at a location, so deleting a used location is refused. */
  nodeUsage: Hook<NodeUsage>
  /** What each domain does inside a location's delete transaction. */
  nodeRemoval: Hook<NodeRemoval>
  /** Changes to credentials and workspaces that cached copies must drop. */
  credentialChanges: CredentialChanges
  apiKeys: ApiKeyService
  users: UserService
  /** Console sign-in: invite links, passwords, sessions opened and ended. */
  signIns: SignInService
  /** OAuth client credentials: access tokens that act as their API key. */
  oauth: OAuthService
  workspaces: WorkspaceService
  screens: ScreenService
  /** The screens' rows as other domains may read them (and the device link bump their desired version). */
  screenRecords: ScreenRecords
  /** A screen paired, moved or renamed: (workspaceId, screenId). */
  screenChanges: Hook<(workspaceId: string, screenId: string) => void>
  pairing: PairingService
  /** Panel profiles; `panelProfile(workspaceId, screenId)` feeds `desired.panel`. */
  screenPanels: ScreenPanelService
  /** Screens' tags (PATCH /v1/screens/<id>, bulk-tag, GET /v1/tags). */
  tags: TagService
  /** Groups of screens, and the condition a group (or a rule) selects screens by. */
  groups: GroupService
  /** Screens' tags changed: (workspaceId, screenIds), after the change committed. */
  tagChanges: Hook<TagChange>
  /** A group's definition changed or it was deleted: (workspaceId, groupId). */
  groupChanges: Hook<GroupChange>
  /** Approval policies per location and the requests that hold content changes. */
  approvals: ApprovalService
  /** Who applies or discards an approved or rejected change, per kind. */
  heldChanges: Hook<HeldChangeHandler>
  /** The content library (every kind), sharing, recall, playability, device descriptions. */
  content: ContentService
  /** Who may see or change a content item, and where it may play. */
  contentAccess: ContentAccess
  /** Sharing items with other locations. */
  contentSharing: ContentSharing
  /** Recall and restore. */
  contentRecall: ContentRecall
  /** Content as a screen sees it: playability and the description a player renders. */
  contentPlayback: ContentPlayback
  /** What uses content, so deleting used content is refused (409 conflict). */
  contentUsage: Hook<ContentUsage>
  /** Content updated, recalled, restored, shared, unshared or deleted. */
  contentChanges: Hook<ContentChangeListener>
  /** Media files: uploads, processing, downloads. */
  media: MediaService
  /** Signed, expiring media download URLs handed to devices. */
  mediaUrls: MediaUrlSigner
  /** The content-addressed file store of media and screenshots. */
  mediaStore: MediaStore
  /** The content library as the device link sees it (exists, playability, sharing, descriptions). */
  contentResolver: ContentResolver
  desiredState: DesiredStateBuilder
  /** markDirty(workspaceId, screenIds): republish those screens' desired state. */
  desiredPublisher: DesiredStatePublisher
  markDirty: MarkDirtyLater
  /** Screen status and reported state from the device link. */
  presence: ScreenPresence
  /** Screens gone online or offline, in batches, as the outbox dispatches them. */
  screenStatuses: Hook<(changes: ScreenStatusChange[]) => void | Promise<void>>
  /** A screen's reported state (what plays, its panel, its storage). */
  screenReports: Hook<(r: ScreenReport) => void | Promise<void>>
  /** Shared presence's heartbeat and dead-instance sweep; null on a single instance. */
  clusterPresence: ClusterPresence | null
  /** Screen assignments (assign, bulk-assign). */
  assignments: AssignmentService
  casts: CastService
  /** The casts and emergencies holding screens, as the device link reads and records them. */
  takeoverRecords: TakeoverRecords
  emergencies: EmergencyService
  /** CAP alert feeds: their settings, the alert log, and the documents they receive. */
  capFeeds: CapService
  /** Expires CAP alerts and fetches the pull feeds (tests drive it with runOnce()). */
  capWorker: CapWorker
  /** Counts casts and emergencies applied from the screens' reported state; idle() for tests. */
  takeoverDelivery: TakeoverDelivery
  /** Reach receipts of casts and emergencies, and `emergency.reach`. */
  reach: ReachReceipts
  /** Whether each screen does what it was told: judged and stored, with its changes as a hook. */
  drift: DriftService
  /** Effective operating hours of screens (own, else inherited from the nearest location). */
  operatingHoursRecords: OperatingHoursRecords
  /** Operating hours of locations and screens: read, set, removed. */
  operatingHours: OperatingHoursService
  /** What a screen will play and why, over a window. */
  timeline: TimelineService
  /** What a write would change on the screens it touches (a dry run of the write, then both timelines). */
  timelinePreview: PreviewService
  serialTemplates: SerialTemplateService
  serialJobs: SerialJobService
  /** Webhook endpoints: where a workspace's events go. */
  webhookEndpoints: WebhookEndpoints
  /** The delivery queue and its log. */
  webhookQueue: WebhookQueue
  /** Sends deliveries (signed, pooled per endpoint), records outcomes, switches off failing endpoints. */
  webhookSender: WebhookSender
  webhookWorker: WebhookDeliveryWorker
  alertRules: AlertRuleService
  /** What the device link feeds: screen status changes, panel power, storage, play-log limits. */
  alerts: AlertEvaluator
  alertWorker: AlertWorker
  /** Proof of play: batches from devices (stored before their PUBACK), reads and CSV export. */
  playLog: PlayLogService
  /** Screens whose plays are refused for their rate or their zone's daily quota, and their recovery. */
  playLogLimits: Hook<PlayLogLimitSink>
  /** Screenshot jobs and their PNGs (uploaded by the agent with its device credential). */
  screenshots: ScreenshotService
  /** Requests for a screen agent's recent log lines, and the lines it uploaded (device credential). */
  agentLogs: AgentLogService
  /** Signed packed-agent tarballs (bytes in the file store), downloaded by devices a rollout sent them to. */
  agentReleases: AgentReleaseService
  /** Moves of screens to an agent version in stages (update jobs), and each screen's target version (drift). */
  agentRollouts: AgentRolloutService
  status: StatusService
}

export type Provisions = PlatformProvisions & DomainProvisions

/**
 * A domain module, typed by the names it lists: `create` receives exactly its `needs` and
 * returns exactly its `provides`, with the types above (platform/modules.ts wires them).
 */
export function domainModule<const N extends keyof Provisions, const R extends keyof DomainProvisions>(m: {
  name: string
  needs: readonly N[]
  provides: readonly R[]
  create(needs: Pick<Provisions, N>): Pick<DomainProvisions, R> | Promise<Pick<DomainProvisions, R>>
}): Module<Pick<Provisions, N>, Pick<DomainProvisions, R>> {
  return m
}
