// The service container: built once per app, in dependency order, from the injected
// database, clock and randomness. Routes read services from `app.services`.
import { performance } from 'node:perf_hooks'
import type { Clock, RandomSource } from '../clock.js'
import { IdGenerator } from '../clock.js'
import type { Config } from '../config.js'
import type { Database } from '../db/Database.js'
import type { EmbeddedBroker } from '../broker/EmbeddedBroker.js'
import { EventBus } from '../events/EventBus.js'
import { IdempotencyStore } from '../http/idempotency.js'
import { OutboundGuard } from '../net/OutboundGuard.js'
import { RateLimiter } from '../http/rateLimit.js'
import { ApiKeyService } from './ApiKeyService.js'
import { ContentService } from './ContentService.js'
import { MediaService } from './MediaService.js'
import { NodeService } from './NodeService.js'
import { ScreenService } from './ScreenService.js'
import { PairingService } from './PairingService.js'
import { StatusService } from './StatusService.js'
import { UserService } from './UserService.js'
import { WorkspaceService } from './WorkspaceService.js'
import { CastService } from './CastService.js'
import { EmergencyService } from './EmergencyService.js'
import type { ContentResolver } from '../devicelink/ContentResolver.js'
import { LibraryContentResolver } from '../devicelink/LibraryContentResolver.js'
import { DesiredStateBuilder, type PanelSettingsSource } from '../devicelink/DesiredStateBuilder.js'
import { DesiredStatePublisher } from '../devicelink/DesiredStatePublisher.js'
import { ScreenPresence } from '../devicelink/ScreenPresence.js'
import { Takeover } from '../devicelink/Takeover.js'
import { SerialTemplateService } from './SerialTemplateService.js'
import { ScreenPanelService } from './ScreenPanelService.js'
import { SerialJobService } from './SerialJobService.js'

export interface Services {
  config: Config
  db: Database
  clock: Clock
  ids: IdGenerator
  broker: EmbeddedBroker
  workspaces: WorkspaceService
  users: UserService
  nodes: NodeService
  apiKeys: ApiKeyService
  screens: ScreenService
  pairing: PairingService
  status: StatusService
  rateLimiter: RateLimiter
  idempotency: IdempotencyStore
  events: EventBus
  /** Outbound HTTP behind the SSRF guard (webhooks, alert channels, media import). */
  outbound: OutboundGuard
  /** The content library as the device link sees it (exists, playability, sharing, descriptions). */
  contentResolver: ContentResolver
  desiredState: DesiredStateBuilder
  /** markDirty(workspaceId, screenIds): republish those screens' desired state. */
  desiredPublisher: DesiredStatePublisher
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
}

export function createServices(deps: {
  config: Config
  db: Database
  clock: Clock
  random?: RandomSource
  broker: EmbeddedBroker
  log: { error(obj: unknown, msg: string): void; warn(obj: unknown, msg: string): void }
  content?: ContentResolver
  panelSettings?: PanelSettingsSource
}): Services {
  const { config, db, clock, random, broker, log } = deps
  const ids = new IdGenerator(clock, random)
  const nodes = new NodeService(db, clock, ids)
  const apiKeys = new ApiKeyService(db, clock, ids, nodes, random)
  nodes.registerUsage(async (ws, nodeId) => ({ what: 'API key(s) pinned to it', count: await apiKeys.countAtNode(ws, nodeId) }))
  const screens = new ScreenService(db, clock, ids, nodes, (screenId) => broker.disconnect(screenId))
  nodes.registerUsage(async (ws, nodeId) => ({ what: 'screen(s)', count: await screens.countAtNode(ws, nodeId) }))
  const serialTemplates = new SerialTemplateService(db, clock, ids, nodes)
  nodes.registerUsage(async (ws, nodeId) => ({ what: 'serial template(s)', count: await serialTemplates.countAtNode(ws, nodeId) }))
  const screenPanels = new ScreenPanelService(db, clock, screens)
  const serialJobs = new SerialJobService(db, clock, ids, nodes, screens, screenPanels, serialTemplates)
  const pairing = new PairingService(db, clock, ids, nodes, screens, random)
  const events = new EventBus(log)
  const outbound = new OutboundGuard({ allowHosts: config.webhookAllowHosts, caFile: config.webhookCaFile })
  const content = new ContentService(db, clock, ids, nodes, events, log)
  const media = new MediaService(db, clock, ids, nodes, content, outbound, config, log)
  nodes.registerUsage(async (ws, nodeId) => ({ what: 'content item(s) or share(s)', count: await content.countAtNode(ws, nodeId) }))
  // The device link sees the library through the ContentResolver seam (tests may pass their own).
  const contentResolver = deps.content ?? new LibraryContentResolver(content)
  const desiredState = new DesiredStateBuilder(db, clock, contentResolver, deps.panelSettings ?? ((ws, id) => screenPanels.panelProfile(ws, id)))
  const desiredPublisher = new DesiredStatePublisher(db, desiredState, broker, log)
  const markDirty = (ws: string, screenIds: string[]) => desiredPublisher.markDirty(ws, screenIds)
  // A paired or moved screen gets a fresh desired state.
  screens.onChange((ws, id) => void markDirty(ws, [id]).catch(() => undefined))
  const takeover = new Takeover(db, nodes, contentResolver)
  const status = new StatusService(db, clock, ids, {
    database: async () => {
      const t = performance.now()
      await db.get('SELECT COUNT(*) AS n FROM schema_migrations')
      return performance.now() - t
    },
    broker: () => broker.probe(),
  })
  return {
    config,
    db,
    clock,
    ids,
    broker,
    workspaces: new WorkspaceService(db, clock, ids, config.rateLimitPerMinute),
    users: new UserService(db, clock, ids, random, config.sessionTtlHours),
    nodes,
    apiKeys,
    screens,
    pairing,
    status,
    rateLimiter: new RateLimiter(clock),
    idempotency: new IdempotencyStore(db, clock),
    events,
    outbound,
    content,
    media,
    contentResolver,
    desiredState,
    desiredPublisher,
    presence: new ScreenPresence(db, clock, broker, events, log, config.screenOfflineGraceMs),
    casts: new CastService(db, clock, ids, nodes, takeover, markDirty),
    emergencies: new EmergencyService(db, clock, ids, nodes, takeover, markDirty, events),
    serialTemplates,
    screenPanels,
    serialJobs,
  }
}
