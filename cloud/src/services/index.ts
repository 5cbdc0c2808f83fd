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
import { StatusService } from './StatusService.js'
import { UserService } from './UserService.js'
import { WorkspaceService } from './WorkspaceService.js'

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
  status: StatusService
  rateLimiter: RateLimiter
  idempotency: IdempotencyStore
  events: EventBus
  /** Outbound HTTP behind the SSRF guard (webhooks, alert channels, media import). */
  outbound: OutboundGuard
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
  log: { error(obj: unknown, msg: string): void }
}): Services {
  const { config, db, clock, random, broker, log } = deps
  const ids = new IdGenerator(clock, random)
  const nodes = new NodeService(db, clock, ids)
  const apiKeys = new ApiKeyService(db, clock, ids, nodes, random)
  nodes.registerUsage(async (ws, nodeId) => ({ what: 'API key(s) pinned to it', count: await apiKeys.countAtNode(ws, nodeId) }))
  const status = new StatusService(db, clock, ids, {
    database: async () => {
      const t = performance.now()
      await db.get('SELECT COUNT(*) AS n FROM schema_migrations')
      return performance.now() - t
    },
    broker: () => broker.probe(),
  })
  const events = new EventBus(log)
  const outbound = new OutboundGuard({ allowHosts: config.webhookAllowHosts, caFile: config.webhookCaFile })
  const content = new ContentService(db, clock, ids, nodes, events, log)
  const media = new MediaService(db, clock, ids, nodes, content, outbound, config, log)
  nodes.registerUsage(async (ws, nodeId) => ({ what: 'content item(s) or share(s)', count: await content.countAtNode(ws, nodeId) }))
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
    status,
    rateLimiter: new RateLimiter(clock),
    idempotency: new IdempotencyStore(db, clock),
    events,
    outbound,
    content,
    media,
  }
}
