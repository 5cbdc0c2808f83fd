// The service container: built once per app, in dependency order, from the injected
// database, clock and randomness. Routes read services from `app.services`.
import { performance } from 'node:perf_hooks'
import type { Clock, RandomSource } from '../platform/clock.js'
import type { Logger, Timers } from '@svc/shared'
import { IdGenerator } from '../platform/clock.js'
import type { Config } from '../config.js'
import type { Database } from '../platform/db/Database.js'
import type { EmbeddedBroker } from '../platform/broker/EmbeddedBroker.js'
import { EventBus } from './events/EventBus.js'
import { EventOutbox } from './events/EventOutbox.js'
import { IdempotencyStore } from '../platform/http/idempotency.js'
import { OutboundGuard } from '../platform/net/OutboundGuard.js'
import { RateLimiter, RedisRateLimitStore } from '../platform/http/rateLimit.js'
import { AuthFailureGuard, RedisAuthFailureCounter } from '../platform/http/authFailures.js'
import type { RedisClient } from '../platform/cluster/redis.js'
import { ApiKeyService } from './access/ApiKeyService.js'
import { ContentService } from './content/ContentService.js'
import { MediaService } from './media/MediaService.js'
import { NodeService } from './nodes/NodeService.js'
import { ScreenService } from './screens/ScreenService.js'
import { PairingService } from './screens/PairingService.js'
import { StatusService } from './status/StatusService.js'
import { StatusRepository } from './status/StatusRepository.js'
import { UserService } from './access/UserService.js'
import { OAuthService } from './access/OAuthService.js'
import { WorkspaceService } from './account/WorkspaceService.js'
import { LocalCredentialChanges, type CredentialChanges } from './access/CredentialChanges.js'
import { RedisCredentialChanges } from './access/RedisCredentialChanges.js'
import { RedisDataChanges } from '../platform/cluster/RedisDataChanges.js'
import type { DataChanges } from '../platform/db/changes.js'
import { CastService } from './takeovers/CastService.js'
import { EmergencyService } from './takeovers/EmergencyService.js'
import type { ContentResolver } from './devicelink/ContentResolver.js'
import { LibraryContentResolver } from './devicelink/LibraryContentResolver.js'
import { DesiredStateBuilder, type PanelSettingsSource } from './devicelink/DesiredStateBuilder.js'
import { DesiredStatePublisher } from './devicelink/DesiredStatePublisher.js'
import { TakeoverDelivery } from './takeovers/TakeoverDelivery.js'
import { ScreenPresence } from './devicelink/ScreenPresence.js'
import { Takeover } from './takeovers/Takeover.js'
import { SerialTemplateService } from './serial/SerialTemplateService.js'
import { ScreenPanelService } from './screens/ScreenPanelService.js'
import { SerialJobService } from './serial/SerialJobService.js'
import { Mailer } from './mail/Mailer.js'
import { WebhookService } from './webhooks/WebhookService.js'
import { WebhookDeliveryWorker } from './webhooks/WebhookDeliveryWorker.js'
import { AlertRuleService } from './alerts/AlertRuleService.js'
import { AlertEvaluator } from './alerts/AlertEvaluator.js'
import { AlertNotifier } from './alerts/AlertNotifier.js'
import { AlertWorker } from './alerts/AlertWorker.js'
import { AssignmentService } from './content/AssignmentService.js'
import { MediaUrlSigner } from './media/MediaUrlSigner.js'
import { PlayLogService } from './playlog/PlayLogService.js'
import { RedisDailyCounter } from './playlog/PlayLogLimits.js'
import { ApprovalService } from './approvals/ApprovalService.js'
import type { Principal } from '../platform/http/Principal.js'
import type { ContentKind } from './content/kinds.js'
import { ScreenshotService } from './screenshots/ScreenshotService.js'
import type { PresenceStore } from './devicelink/PresenceStore.js'
import { MediaStore } from './media/MediaStore.js'
import { StoredBytesRepository } from './media/StoredBytesRepository.js'

export interface Services {
  config: Config
  db: Database
  clock: Clock
  ids: IdGenerator
  broker: EmbeddedBroker
  workspaces: WorkspaceService
  /** Changes to credentials and workspaces that cached copies must drop (in-process today; a cluster broadcasts). */
  credentialChanges: CredentialChanges
  /** Committed changes of data kept in memory: the database's own, or with Redis the whole cloud's. */
  dataChanges: DataChanges
  users: UserService
  /** OAuth client credentials: access tokens that act as their API key. */
  oauth: OAuthService
  nodes: NodeService
  apiKeys: ApiKeyService
  screens: ScreenService
  pairing: PairingService
  status: StatusService
  rateLimiter: RateLimiter
  /** Failed authentications per client address (shared through Redis when the cloud has one). */
  authFailures: AuthFailureGuard
  /** The Redis joining the instances of one cloud (SVC_REDIS_URL), or null for a single instance. */
  redis: RedisClient | null
  idempotency: IdempotencyStore
  events: EventBus
  /** Domain events recorded with the change that causes them; see domains/events/EventOutbox.ts. */
  outbox: EventOutbox
  /** Outbound HTTP behind the SSRF guard (webhooks, alert channels, media import). */
  outbound: OutboundGuard
  /** The content library as the device link sees it (exists, playability, sharing, descriptions). */
  contentResolver: ContentResolver
  desiredState: DesiredStateBuilder
  /** markDirty(workspaceId, screenIds): republish those screens' desired state. */
  desiredPublisher: DesiredStatePublisher
  /** Counts casts and emergencies applied from the screens' reported state; idle() for tests. */
  takeoverDelivery: TakeoverDelivery
  /** Screen status and reported state from the device link; onScreenStatus / onReported. */
  presence: ScreenPresence
  casts: CastService
  emergencies: EmergencyService
  serialTemplates: SerialTemplateService
  /** Panel profiles; `panelProfile(workspaceId, screenId)` feeds `desired.panel`. */
  screenPanels: ScreenPanelService
  serialJobs: SerialJobService
  /** The content library (every kind), sharing, recall, playability, device descriptions. */
  content: ContentService
  /** Media files: uploads, processing, downloads. */
  media: MediaService
  /** Mail to owners and alert recipients (SMTP, or the outbox table). */
  mailer: Mailer
  webhooks: WebhookService
  webhookWorker: WebhookDeliveryWorker
  alertRules: AlertRuleService
  /** What the device link calls: screenStatusChanged, panelPowerReported, storageReported, screenRemoved. */
  alerts: AlertEvaluator
  alertWorker: AlertWorker
  /** Screen assignments (assign, bulk-assign); republishes screens when content they show changes. */
  assignments: AssignmentService
  /** Signed, expiring media download URLs handed to devices. */
  mediaUrls: MediaUrlSigner
  /** Proof of play: batches from devices (stored before their PUBACK), reads and CSV export. */
  playLog: PlayLogService
  /** Approval policies per location and the requests that hold content changes. */
  approvals: ApprovalService
  /** Screenshot jobs and their PNGs (uploaded by the agent with its device credential). */
  screenshots: ScreenshotService
}

export function createServices(deps: {
  config: Config
  db: Database
  clock: Clock
  random?: RandomSource
  broker: EmbeddedBroker
  content?: ContentResolver
  panelSettings?: PanelSettingsSource
  log: Logger
  /** A ready-made guard (tests inject one with a fake DNS lookup). */
  outbound?: OutboundGuard
  /** The Redis that joins the instances of one cloud (SVC_REDIS_URL); null = a single instance. */
  redis?: RedisClient | null
  /** Where presence keeps connections and graces; default in memory (one instance). */
  presenceStore?: PresenceStore
  /** Timers for waits measured on `clock` (a play-log batch waiting for its screen's rate); default the system's. */
  timers?: Timers
}): Services {
  const { config, db, clock, random, broker, log } = deps
  const ids = new IdGenerator(clock, random)
  const nodes = new NodeService(db, clock, ids)
  // Instances joined through Redis drop each other's cached credentials at once (domains/access/RedisCredentialChanges.ts).
  const credentialChanges = deps.redis ? new RedisCredentialChanges(deps.redis) : new LocalCredentialChanges()
  const apiKeys = new ApiKeyService(db, clock, ids, nodes, random, credentialChanges)
  nodes.registerUsage(async (ws, nodeId) => ({ what: 'API key(s) pinned to it', count: await apiKeys.countAtNode(ws, nodeId) }))
  // Instances joined through Redis hear each other's committed changes (the screen list's kept
  // pages; with none kept there is nothing to tell the others).
  const dataChanges = deps.redis && config.screenListKeepMs > 0 ? new RedisDataChanges(deps.redis, db.changes) : db.changes
  const screens = new ScreenService(db, clock, ids, nodes, (screenId) => broker.disconnect(screenId), config.screenListKeepMs, dataChanges)
  nodes.registerUsage(async (ws, nodeId) => ({ what: 'screen(s)', count: await screens.countAtNode(ws, nodeId) }))
  const serialTemplates = new SerialTemplateService(db, clock, ids, nodes)
  nodes.registerUsage(async (ws, nodeId) => ({ what: 'serial template(s)', count: await serialTemplates.countAtNode(ws, nodeId) }))
  const screenPanels = new ScreenPanelService(db, clock, screens)
  const serialJobs = new SerialJobService(db, clock, ids, nodes, screens, screenPanels, serialTemplates)
  const pairing = new PairingService(db, clock, ids, nodes, screens, random)
  const events = new EventBus(log)
  const outbound = deps.outbound ?? new OutboundGuard({ allowHosts: config.webhookAllowHosts, caFile: config.webhookCaFile })
  const content = new ContentService(db, clock, ids, nodes, log)
  // One content-addressed store for media and screenshots: a file goes only when no owner of any kind holds it.
  const storedBytes = new StoredBytesRepository(db.kysely)
  const mediaStore = new MediaStore(config.dataDir, config.mediaDir, (sha256) => storedBytes.inUse(sha256))
  const media = new MediaService(db, clock, ids, nodes, content, outbound, config, log, mediaStore)
  nodes.registerUsage(async (ws, nodeId) => ({ what: 'content item(s) or share(s)', count: await content.countAtNode(ws, nodeId) }))
  // The device link sees the library through the ContentResolver seam (tests may pass their own).
  const mediaUrls = new MediaUrlSigner(db, clock, undefined, config.publicUrl)
  const contentResolver = deps.content ?? new LibraryContentResolver(content, (id) => mediaUrls.url(id))
  // Without a test's own panel source, the builder reads the panel profile from the screen rows it loads.
  const desiredState = new DesiredStateBuilder(db, clock, contentResolver, deps.panelSettings ?? null)
  const desiredPublisher = new DesiredStatePublisher(db, desiredState, broker, log, clock)
  const markDirty = (ws: string, screens: string[] | (() => Promise<string[]>)) => desiredPublisher.markDirty(ws, screens)
  const assignments = new AssignmentService(db, clock, nodes, contentResolver, markDirty, log)
  assignments.attach(content)
  // A paired or moved screen gets a fresh desired state.
  screens.onChange((ws, id) => void markDirty(ws, [id]).catch(() => undefined))
  const takeover = new Takeover(db, nodes, contentResolver)
  const statusReads = new StatusRepository(db.kysely)
  const status = new StatusService(db, clock, ids, {
    database: async () => {
      const t = performance.now()
      await statusReads.ping()
      return performance.now() - t
    },
    broker: () => broker.probe(),
  })
  const users = new UserService(db, clock, ids, random, config.sessionTtlHours, credentialChanges, apiKeys.principals)
  const mailer = new Mailer(db, clock, { smtpUrl: config.smtpUrl, from: config.smtpFrom }, log)
  const webhooks = new WebhookService(db, clock, ids, outbound, mailer, users, {
    leaseMs: config.webhookLeaseMs,
    timeoutMs: 10_000,
    random,
    log,
    endpointConcurrency: config.webhookEndpointConcurrency,
  })
  // Every domain event is recorded in the outbox; its webhook deliveries are made in the
  // dispatch transaction (exactly once, whichever process dispatches).
  const outbox = new EventOutbox(db, clock, ids, events, log)
  content.useOutbox(outbox)
  outbox.consume(async (tx, batch) => {
    if ((await webhooks.enqueueManyIn(tx, batch)).length) queueMicrotask(() => webhooks.onQueued?.())
  })
  const approvals = new ApprovalService(db, clock, ids, nodes, outbox, log)
  content.useApprovals(approvals)
  approvals.attach({
    applyHeld: (tx, ws, kind, id, proposal) => content.applyHeld(tx, ws, kind, id, proposal),
    applyHeldMedia: async (_ws, id, proposal, requester) => {
      await media.update(requester, id, proposal as { name?: string; folderId?: string | null; nodeId?: string | null })
    },
    discardNew: (ws, kind, id) =>
      kind === 'media' ? media.remove({ ...systemPrincipal(ws) }, id).then(() => undefined) : content.discardNew(ws, kind as ContentKind, id),
    changed: (ws, kind, id) => content.changed(ws, kind as ContentKind, id),
  })
  const webhookWorker = new WebhookDeliveryWorker(webhooks, clock, config.webhookIntervalMs, log, 200, () => outbox.dispatch(), {
    leaseMs: config.webhookLeaseMs,
  })
  webhooks.onQueued = () => webhookWorker.kick()
  const alertRules = new AlertRuleService(db, clock, ids, nodes, screens, outbound, random)
  nodes.registerUsage(async (ws, nodeId) => ({
    what: 'alert rule(s) homed or scoped there',
    count: await alertRules.countAtNode(ws, nodeId),
  }))
  const alerts = new AlertEvaluator(db, clock, ids, nodes, alertRules, new AlertNotifier(db, clock, outbound, mailer, log))
  const alertWorker = new AlertWorker(alerts, config.alertIntervalMs, log)
  // The device link feeds the alert evaluator: presence changes (as the outbox dispatches them) and reported panel/storage state.
  const presence = new ScreenPresence(db, clock, broker, outbox, log, config.screenOfflineGraceMs, deps.presenceStore)
  broker.budget.log = log
  presence.onScreenStatuses((changes) =>
    alerts.screensStatusChanged(
      changes.map((c) => ({
        workspaceId: c.workspaceId,
        screen: { id: c.screenId, name: c.screenName, nodeId: c.nodeId },
        status: c.status,
        at: c.status === 'offline' ? (c.since ?? c.at) : c.at,
      })),
    ),
  )
  // A screen reporting a cast or an emergency playing counts it applied (their `delivery`).
  const takeoverDelivery = new TakeoverDelivery(db, clock, log)
  // While a fan-out is out, its reads and version bumps go before report and `applied` writes.
  presence.writeGate = desiredPublisher.window
  takeoverDelivery.writeGate = desiredPublisher.window
  presence.onReported((r) => takeoverDelivery.reported(r))
  presence.onReported(async (r) => {
    const screen = { id: r.screenId, nodeId: r.nodeId }
    if (r.reported.panel) await alerts.panelPowerReported(r.workspaceId, screen, r.reported.panel.power, r.reported.playing.source !== 'none', r.at)
    if (r.reported.storage) await alerts.storageReported(r.workspaceId, screen, r.reported.storage.usedBytes, r.reported.storage.totalBytes, r.at)
  })
  // Proof of play, bounded per screen and workspace; limited screens go to the alerts.
  const playLog = new PlayLogService(
    db,
    clock,
    screens,
    {
      retentionDays: config.playLogRetentionDays,
      screenRate: config.playLogScreenRate,
      screenBurst: config.playLogScreenBurst,
      dailyPerZone: config.playLogDailyPerZone,
    },
    { timers: deps.timers, counter: deps.redis ? new RedisDailyCounter(deps.redis) : undefined, log },
  )
  playLog.reportLimitsTo({
    limited: (e) => alerts.playLogLimited(e),
    recovered: (ws, screenId, at) => alerts.playLogRecovered(ws, screenId, at),
  })
  return {
    config,
    db,
    clock,
    ids,
    broker,
    workspaces: new WorkspaceService(db, clock, ids, config.rateLimitPerMinute, credentialChanges),
    credentialChanges,
    dataChanges,
    users,
    oauth: new OAuthService(db, clock, ids, apiKeys, random),
    nodes,
    apiKeys,
    screens,
    pairing,
    status,
    rateLimiter: new RateLimiter(clock, deps.redis ? new RedisRateLimitStore(deps.redis) : undefined),
    authFailures: new AuthFailureGuard(clock, deps.redis ? new RedisAuthFailureCounter(deps.redis) : undefined),
    redis: deps.redis ?? null,
    idempotency: new IdempotencyStore(db, clock),
    events,
    outbound,
    content,
    media,
    contentResolver,
    desiredState,
    desiredPublisher,
    takeoverDelivery,
    presence,
    casts: new CastService(db, clock, ids, nodes, takeover, markDirty),
    emergencies: new EmergencyService(db, clock, ids, nodes, takeover, markDirty, outbox),
    outbox,
    serialTemplates,
    screenPanels,
    serialJobs,
    mailer,
    webhooks,
    webhookWorker,
    alertRules,
    alerts,
    alertWorker,
    assignments,
    mediaUrls,
    playLog,
    approvals,
    screenshots: new ScreenshotService(db, clock, ids, screens, mediaStore, config.publicUrl),
  }
}

/** Acts for the service itself inside a workspace (an approved change applied on the requester's behalf). */
function systemPrincipal(workspaceId: string): Principal {
  return { actor: { kind: 'key', id: null, name: 'approvals', nodeId: null }, workspaceId, grant: 'all', nodeId: null }
}
