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
import { NodeService } from './NodeService.js'
import { StatusService } from './StatusService.js'
import { UserService } from './UserService.js'
import { WorkspaceService } from './WorkspaceService.js'
import { Mailer } from '../mail/Mailer.js'
import { WebhookService } from '../webhooks/WebhookService.js'
import { WebhookDeliveryWorker } from '../webhooks/WebhookDeliveryWorker.js'
import { AlertRuleService } from '../alerts/AlertRuleService.js'
import { AlertEvaluator } from '../alerts/AlertEvaluator.js'
import { AlertNotifier } from '../alerts/AlertNotifier.js'
import { AlertWorker } from '../alerts/AlertWorker.js'

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
  /** Mail to owners and alert recipients (SMTP, or the outbox table). */
  mailer: Mailer
  webhooks: WebhookService
  webhookWorker: WebhookDeliveryWorker
  alertRules: AlertRuleService
  /** What the device link calls: screenStatusChanged, panelPowerReported, storageReported, screenRemoved. */
  alerts: AlertEvaluator
  alertWorker: AlertWorker
}

export function createServices(deps: {
  config: Config
  db: Database
  clock: Clock
  random?: RandomSource
  broker: EmbeddedBroker
  log: { info(obj: unknown, msg: string): void; warn(obj: unknown, msg: string): void; error(obj: unknown, msg: string): void }
  /** A ready-made guard (tests inject one with a fake DNS lookup). */
  outbound?: OutboundGuard
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
  const users = new UserService(db, clock, ids, random, config.sessionTtlHours)
  const events = new EventBus(log)
  const outbound = deps.outbound ?? new OutboundGuard({ allowHosts: config.webhookAllowHosts, caFile: config.webhookCaFile })
  const mailer = new Mailer(db, clock, { smtpUrl: config.smtpUrl, from: config.smtpFrom }, log)
  const webhooks = new WebhookService(db, clock, ids, outbound, mailer, users, { leaseMs: config.webhookLeaseMs, timeoutMs: 10_000, random, log })
  const webhookWorker = new WebhookDeliveryWorker(webhooks, clock, config.webhookIntervalMs, log)
  webhooks.onQueued = () => webhookWorker.kick()
  events.subscribe((e) => webhooks.enqueue(e).then(() => undefined))
  const alertRules = new AlertRuleService(db, clock, ids, nodes, outbound, random)
  nodes.registerUsage(async (ws, nodeId) => ({
    what: 'alert rule(s) homed or scoped there',
    count: (await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM alert_rules WHERE workspace_id = ? AND deleted_at IS NULL AND (node_id = ? OR config LIKE ?)", [ws, nodeId, `%"scopeId":${JSON.stringify(nodeId)}%`]))!.n,
  }))
  const alerts = new AlertEvaluator(db, clock, ids, nodes, alertRules, new AlertNotifier(db, clock, outbound, mailer, log))
  const alertWorker = new AlertWorker(alerts, config.alertIntervalMs, log)
  return {
    config,
    db,
    clock,
    ids,
    broker,
    workspaces: new WorkspaceService(db, clock, ids, config.rateLimitPerMinute),
    users,
    nodes,
    apiKeys,
    status,
    rateLimiter: new RateLimiter(clock),
    idempotency: new IdempotencyStore(db, clock),
    events,
    outbound,
    mailer,
    webhooks,
    webhookWorker,
    alertRules,
    alerts,
    alertWorker,
  }
}
