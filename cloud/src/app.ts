// buildApp(config): the whole control API as one Fastify instance, without listening.
// Order: storage and the broker → external plugins and cross-cutting hooks (errors, auth,
// idempotency, deprecations, OpenAPI) → the domain modules, wired by their declared needs
// (domains/index.ts, platform/modules.ts) → the /v1 routes, which hold their provisions by
// closure. Tests call buildApp and use inject(); server.ts adds the listeners and graceful shutdown.
// One lifecycle: whatever is opened adds its stop step to one Lifecycle where it is opened
// (platform/lifecycle.ts): this file for the platform, each module for its own. What runs
// (workers, device-job deliveries) is added by its module to `running` and started once every
// module is wired (startModules, platform/modules.ts); route plugins serve HTTP only. The
// app's onClose, or a failed start, runs the stop steps in reverse.
import cookie from '@fastify/cookie'
import Fastify, { type FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { RouteInfo } from './platform/http/types.js'
import { LazySchemas } from './platform/http/lazySchemas.js'
import { IdGenerator, systemClock, type Clock, type RandomSource } from './platform/clock.js'
import type { Timers } from '@svc/shared'
import type { Config } from './config.js'
import { openDatabase } from './platform/db/open.js'
import type { Database } from './platform/db/Database.js'
import { migrate } from './platform/db/migrate.js'
import { EmbeddedBroker } from './platform/broker/EmbeddedBroker.js'
import { closeRedis, openRedis, redisReachable, type RedisClient } from './platform/cluster/redis.js'
import { WorkLeases } from './platform/cluster/WorkLeases.js'
import { WorkLeaseRepository } from './platform/cluster/WorkLeaseRepository.js'
import { Metrics } from './platform/metrics/Metrics.js'
import { RedisDataChanges } from './platform/cluster/RedisDataChanges.js'
import { clientErrorHandler, frameworkErrorHandler, installErrorHandling, MAX_PATH_SEGMENT, NOSNIFF } from './platform/http/errors.js'
import { installJsonBounds } from './platform/http/jsonBounds.js'
import { genRequestId, REQUEST_ID_HEADER } from './platform/http/requestId.js'
import { DEPRECATIONS, installDeprecationHeaders, validateDeprecations, type Deprecation } from './platform/http/deprecations.js'
import { installOpenApi } from './platform/http/openapi.js'
import { named } from './platform/http/plugins.js'
import { installBodyRules } from './platform/http/bodies.js'
import { loggerOptions, RequestLogController } from './platform/http/logging.js'
import { RateLimiter, RedisRateLimitStore } from './platform/http/rateLimit.js'
import { AuthFailureGuard, RedisAuthFailureCounter } from './platform/http/authFailures.js'
import { IdempotencyStore } from './platform/http/idempotency.js'
import { Housekeeper, type HousekeepingTask } from './platform/workers/Housekeeper.js'
import type { PersistenceFactory } from './platform/broker/persistence.js'
import { OutboundGuard } from './platform/net/OutboundGuard.js'
import { Lifecycle, type StopSteps } from './platform/lifecycle.js'
import { Listeners } from './platform/hooks.js'
import { ModuleRuns, startModules } from './platform/modules.js'
import {
  consoleRoutes,
  installAudit,
  installAuth,
  MODULES,
  oauthMetadataRoutes,
  scimRoutes,
  v1Routes,
  type PlatformProvisions,
  type Provisions,
} from './domains/index.js'
import type { ContentResolver } from './domains/content/index.js'
import { DevicePolicy, type PanelSettingsSource } from './domains/devicelink/index.js'
import { screenDirectory } from './domains/screens/index.js'
import { UPLOAD_TYPES } from './domains/media/index.js'

export interface AppDeps {
  clock?: Clock
  random?: RandomSource
  /** An already open database (tests share one between app instances); opened from config otherwise. */
  db?: Database
  /** Routes being retired; defaults to the registry in platform/http/deprecations.ts. */
  deprecations?: Deprecation[]
  /** Broker storage; default memory (the database is the durable store: domains/devicelink/DeviceSessions.ts). */
  brokerPersistence?: PersistenceFactory
  /** The content library seam; default the content library itself (LibraryContentResolver). */
  content?: ContentResolver
  /** Panel settings for desired states; default the screen's stored panel profile. */
  panelSettings?: PanelSettingsSource
  /** Outbound HTTP guard; tests inject one with a fake DNS lookup. */
  outbound?: OutboundGuard
  /** Timers that go with `clock` (a ManualClock is both), for waits measured on it; default the system's. */
  timers?: Timers
}

export async function buildApp(config: Config, deps: AppDeps = {}): Promise<FastifyInstance> {
  const deprecations = deps.deprecations ?? DEPRECATIONS
  // Checked before anything is opened, so a bad registry leaves nothing running.
  validateDeprecations(deprecations)
  const lifecycle = new Lifecycle()
  try {
    return await open(config, deps, deprecations, lifecycle)
  } catch (e) {
    // Nothing half-started stays open when the start fails.
    await lifecycle.close()
    throw e
  }
}

async function open(config: Config, deps: AppDeps, deprecations: Deprecation[], lifecycle: Lifecycle): Promise<FastifyInstance> {
  const clock = deps.clock ?? systemClock
  const db = deps.db ?? (await openDatabase(config))
  // The database closes last: every other step may still write to it.
  if (!deps.db) lifecycle.add('database', () => db.close())
  await migrate(db)
  // Devices authenticate against the screens table; see domains/devicelink/DevicePolicy.ts.
  const persistence = deps.brokerPersistence
  const policy = new DevicePolicy(screenDirectory(db), { warn: (obj, msg) => broker.logger.warn(obj, msg) })
  // Redis warnings wait for the broker's logger (which waits for the app's).
  const early: [object, string][] = []
  let brokerLog: { warn(obj: object, msg: string): void } = { warn: (obj, msg) => void early.push([obj, msg]) }
  const redis = config.redisUrl ? openRedis(config.redisUrl, config.redisPrefix, { warn: (obj, msg) => brokerLog.warn(obj, msg) }) : null
  if (redis) lifecycle.add('redis', () => closeRedis(redis))
  // The brokers of one cloud share messages through Redis; one that cannot reach it at
  // start serves its own devices alone (shared counters fall back the same way).
  const cluster = redis && config.redisUrl && (await redisReachable(redis)) ? { redisUrl: config.redisUrl, prefix: config.redisPrefix } : undefined
  // Closing the broker drops every device: what records those drops (presence, the counts and
  // notices they lead to) drains after it, module by module in wiring order; what the drains
  // use (mail, channels, outbound HTTP) is released after them. Both groups are reserved here,
  // before the broker's step, so they run after it.
  const releaseSteps = lifecycle.group()
  const drainSteps = lifecycle.group('added')
  const broker: EmbeddedBroker = new EmbeddedBroker(policy.hooks(), {
    persistence,
    heartbeatIntervalMs: config.mqttHeartbeatMs,
    keepWill: policy.keepWill,
    cluster,
    handshake: { timeoutMs: config.mqttHandshakeTimeoutMs, perAddress: config.mqttHandshakesPerAddress, total: config.mqttHandshakesMax },
  })
  brokerLog = broker.logger
  for (const [obj, msg] of early) broker.logger.warn(obj, msg)
  if (redis && !cluster) broker.logger.warn({}, 'redis unreachable at start: this instance serves its own devices only until it restarts')
  lifecycle.add('broker', () => broker.close())
  await broker.start()
  return await assemble(config, deps, { clock, db, broker, policy, deprecations, redis, lifecycle, drainSteps, releaseSteps })
}

/** Trusts the `hops` nearest hops of X-Forwarded-For, whatever their addresses. */
function trustHops(hops: number): (address: string, hop: number) => boolean {
  return (_address, hop) => hop < hops
}

async function assemble(
  config: Config,
  deps: AppDeps,
  ctx: {
    clock: Clock
    db: Database
    broker: EmbeddedBroker
    policy: DevicePolicy
    deprecations: Deprecation[]
    redis: RedisClient | null
    lifecycle: Lifecycle
    /** Stop steps that run after the broker has closed (see open()): drains in wiring order, then releases in reverse. */
    drainSteps: StopSteps
    releaseSteps: StopSteps
  },
): Promise<FastifyInstance> {
  const { clock, db, broker, policy, deprecations, redis, lifecycle, drainSteps, releaseSteps } = ctx
  const routeSchemas = new LazySchemas()
  const app = Fastify({
    logger: loggerOptions(config),
    schemaController: routeSchemas.controller(),
    logController: new RequestLogController(),
    genReqId: genRequestId,
    // Client address, protocol and host from X-Forwarded-* only when a proxy is trusted. A
    // hop count trusts the nearest `n` hops whatever their address (Fastify takes no count).
    trustProxy: typeof config.trustProxy === 'number' ? trustHops(config.trustProxy) : config.trustProxy,
    bodyLimit: config.bodyLimitBytes,
    // A longer path segment answers 414 (platform/http/errors.ts); the document says so on every operation with one.
    routerOptions: { maxParamLength: MAX_PATH_SEGMENT },
    // removeAdditional off: an unknown body field is refused (platform/http/bodies.ts), not dropped.
    ajv: { customOptions: { coerceTypes: false, allErrors: false, removeAdditional: false } },
    return503OnClosing: true,
    // No limit on one plugin's start (Fastify's default is 10 s): plugins wait on the database,
    // and a busy machine or a large database made a healthy start fail. A start that hangs is
    // the service manager's start timeout to catch (docs/decisions.md).
    pluginTimeout: 0,
    // Answers refused before routing, or by Node before Fastify, keep the envelope too.
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>()
  app.decorate('routeSchemas', routeSchemas)
  lifecycle.useLog(app.log)
  app.decorate('lifecycle', lifecycle)

  broker.setLog(app.log)
  // JSON only: a text/plain body is refused with 415 rather than validated as a string.
  app.removeContentTypeParser('text/plain')
  installBodyRules(app)

  // What every module may need: the platform's own parts.
  const outbound = deps.outbound ?? new OutboundGuard({ allowHosts: config.webhookAllowHosts, caFile: config.webhookCaFile })
  // Webhooks and alert notices the broker's last drops cause still go out; the pool closes after them.
  releaseSteps.add('outbound pool', () => outbound.close())
  // Instances joined through Redis hear each other's committed changes (the screen list's kept
  // pages; with none kept there is nothing to tell the others).
  const sharedChanges = redis && config.screenListKeepMs > 0 ? new RedisDataChanges(redis, db.changes) : null
  if (sharedChanges) releaseSteps.add('data changes channel', () => sharedChanges.close())
  // Leases live in the database, so a cloud holds with or without Redis.
  const leases = new WorkLeases(new WorkLeaseRepository(db.kysely), clock)
  app.decorate('leases', leases)
  // Served by server.ts when SVC_METRICS_PORT is set; the lease it may hold is given back before the database closes.
  const metrics = new Metrics(config.metricsPort !== null, leases, clock)
  releaseSteps.add('metrics lease', () => metrics.close())
  metrics.gauge('svc_mqtt_connections', 'Devices connected to this instance over MQTT (authenticated connections).', () => broker.connections.count)
  const housekeeping = new Listeners<HousekeepingTask>()
  const running = new ModuleRuns()
  const idempotency = new IdempotencyStore(db, clock)
  housekeeping.add({ name: 'idempotency keys', run: () => idempotency.purgeExpired() })
  const platform: PlatformProvisions = {
    config,
    db,
    clock,
    ids: new IdGenerator(clock, deps.random),
    random: deps.random,
    log: app.log,
    timers: deps.timers,
    broker,
    redis,
    outbound,
    rateLimiter: new RateLimiter(clock, redis ? new RedisRateLimitStore(redis) : undefined),
    authFailures: new AuthFailureGuard(clock, redis ? new RedisAuthFailureCounter(redis) : undefined),
    idempotency,
    dataChanges: sharedChanges ?? db.changes,
    leases,
    metrics,
    devicePolicy: policy,
    stopSteps: lifecycle,
    drainSteps,
    releaseSteps,
    housekeeping,
    running,
    contentOverride: deps.content,
    panelSettings: deps.panelSettings,
  }
  // Housekeeping purges rows of every domain (each module adds its tasks while it is wired), on one instance at a time.
  const housekeeper = new Housekeeper(housekeeping, config.housekeepingIntervalMs, app.log).oncePerCloud(leases, 'housekeeping')
  running.add('housekeeper', housekeeper)
  // The domain modules, checked and built in the order their needs give, each adding its own
  // stop steps and what it runs; then what they run starts.
  const provided = (await startModules(MODULES, platform as unknown as Record<string, unknown>, running, lifecycle)) as unknown as Provisions
  wired.set(app, provided)
  metrics.counter(
    'svc_worker_runs_total',
    'Runs of each interval worker on this instance, by outcome (ok, failed).',
    () =>
      running
        .workers()
        .flatMap(([worker, w]) => [
          [{ worker, outcome: 'ok' }, w.runStats.ended - w.runStats.failed] as const,
          [{ worker, outcome: 'failed' }, w.runStats.failed] as const,
        ]),
    ['worker', 'outcome'],
  )
  metrics.gauge(
    'svc_worker_last_run_timestamp_seconds',
    'When the last successful run of each interval worker on this instance ended (Unix seconds); absent until one has.',
    () => running.workers().flatMap(([worker, w]) => (w.runStats.lastOkAt > 0 ? [[{ worker }, w.runStats.lastOkAt / 1000] as const] : [])),
    ['worker'],
  )
  // The interval workers by name, for tests that drive them (runOnce).
  app.decorate('workers', {
    housekeeper,
    status: provided.statusMonitor,
    castExpiry: provided.castExpiry,
    webhooks: provided.webhookWorker,
    alerts: provided.alertWorker,
    mediaUrlRefresh: provided.mediaUrlRefresh,
    agentRollouts: provided.agentRolloutWorker,
  })

  // Callback style (no promise per request): the id header is on every answer, errors
  // included, and so is `nosniff` (a browser never guesses a type other than the one sent).
  app.addHook('onRequest', (req, reply, done) => {
    reply.header(REQUEST_ID_HEADER, req.id)
    reply.header(NOSNIFF[0], NOSNIFF[1])
    done()
  })
  // Requests timed by route template (the metrics are served: server.ts); callback style, no promise per request.
  if (metrics.enabled)
    app.addHook('onResponse', (req, reply, done) => {
      metrics.http(req.method, req.routeOptions.url, reply.statusCode, reply.elapsedTime)
      done()
    })
  const routeCatalog: RouteInfo[] = []
  app.decorate('routeCatalog', routeCatalog)
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/v1/') || route.url.startsWith('/v1/docs')) return
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) {
      if (method === 'HEAD') continue
      routeCatalog.push({ method, url: route.url, permission: route.config?.permission ?? null, auth: route.config?.auth === 'none' ? 'none' : 'bearer' })
    }
  })
  installErrorHandling(app)
  // Cookies are read for the console's session (and set by its sign-in routes).
  await app.register(cookie)
  installAuth(app, provided)
  // Every write that reaches a route is recorded in the audit log (domains/audit/auditEdge.ts).
  installAudit(app, { audit: provided.audit, deviceOrigin: (screenId) => provided.screens.deviceOrigin(screenId) })
  installJsonBounds(app)
  idempotency.install(app)
  installDeprecationHeaders(app, deprecations)
  await installOpenApi(app, { uploadTypes: UPLOAD_TYPES })

  // Teardown of everything above (the stop steps: what the modules run first, then what they
  // and the platform opened, in reverse).
  app.addHook('onClose', () => lifecycle.close())
  // Event streams are watchers, not work in flight: a stop ends them first (each told to come
  // back, `retry` and `stopping`), so closing waits only for real requests, not open consoles.
  app.addHook('preClose', async () => provided.eventStream.close())

  await app.register(named('v1Routes', v1Routes(provided, deprecations)), { prefix: '/v1' })
  await app.register(named('oauthMetadataRoutes', oauthMetadataRoutes(provided)))
  await app.register(named('scimRoutes', scimRoutes(provided)), { prefix: '/scim/v2' })
  // The operator console: /console/ (and / leading there), built from cloud/console.
  await app.register(named('consoleRoutes', consoleRoutes(config)))
  return app
}

const wired = new WeakMap<FastifyInstance, Provisions>()

/**
 * The provisions an app was wired with (its services by name), for server.ts and tests.
 * Routes never use it: they hold what they need by closure.
 */
export function servicesOf(app: FastifyInstance): Provisions {
  const p = wired.get(app)
  if (!p) throw new Error('servicesOf: not an app built by buildApp')
  return p
}
