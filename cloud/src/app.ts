// buildApp(config): the whole control API as one Fastify instance, without listening.
// Order: external plugins and cross-cutting hooks (errors, auth, idempotency,
// deprecations, OpenAPI) → services → teardown → the /v1 domain plugins (domains/v1Routes.ts). Tests call buildApp and use inject();
// server.ts adds the listeners and graceful shutdown.
// Teardown: whatever this file opens adds its stop step to one Lifecycle where it opens it
// (platform/lifecycle.ts); the app's onClose, or a failed start, runs them in reverse.
import Fastify, { type FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { RouteInfo } from './platform/http/types.js'
import { LazySchemas } from './platform/http/lazySchemas.js'
import { systemClock, type Clock, type RandomSource } from './platform/clock.js'
import type { Timers } from '@svc/shared'
import type { Config } from './config.js'
import { openDatabase } from './platform/db/open.js'
import type { Database } from './platform/db/Database.js'
import { migrate } from './platform/db/migrate.js'
import { EmbeddedBroker } from './platform/broker/EmbeddedBroker.js'
import { DevicePolicy } from './domains/devicelink/DevicePolicy.js'
import { screenDirectory } from './domains/screens/ScreenService.js'
import { createServices } from './domains/services.js'
import { closeRedis, openRedis, redisReachable, type RedisClient } from './platform/cluster/redis.js'
import { WorkLeases } from './platform/cluster/WorkLeases.js'
import { RedisPresenceStore } from './domains/devicelink/RedisPresenceStore.js'
import { ClusterPresence } from './domains/devicelink/ClusterPresence.js'
import { WorkLeaseRepository } from './platform/cluster/WorkLeaseRepository.js'
import { clientErrorHandler, frameworkErrorHandler, installErrorHandling, MAX_PATH_SEGMENT, NOSNIFF } from './platform/http/errors.js'
import { installAuth } from './domains/access/authentication.js'
import { installJsonBounds } from './platform/http/jsonBounds.js'
import { genRequestId, REQUEST_ID_HEADER } from './platform/http/requestId.js'
import { DEPRECATIONS, installDeprecationHeaders, validateDeprecations, type Deprecation } from './platform/http/deprecations.js'
import { installOpenApi } from './platform/http/openapi.js'
import { installBodyRules } from './platform/http/bodies.js'
import { loggerOptions, RequestLogController } from './platform/http/logging.js'
import { Housekeeper } from './platform/workers/Housekeeper.js'
import type { PersistenceFactory } from './platform/broker/persistence.js'
import { DeviceSessions } from './domains/devicelink/DeviceSessions.js'
import { ScreenPresenceRepository } from './domains/devicelink/ScreenPresenceRepository.js'
import type { ContentResolver } from './domains/devicelink/ContentResolver.js'
import type { PanelSettingsSource } from './domains/devicelink/DesiredStateBuilder.js'
import v1Routes from './domains/v1Routes.js'
import { oauthMetadataRoutes } from './domains/access/oauthRoutes.js'
import { ownWorker } from './platform/workers/ownWorker.js'
import type { OutboundGuard } from './platform/net/OutboundGuard.js'
import { Lifecycle, type StopSteps } from './platform/lifecycle.js'

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
  // notices they lead to) stops after it, so its steps go here, before the broker's.
  const afterBroker = lifecycle.group()
  const broker: EmbeddedBroker = new EmbeddedBroker(policy.hooks(), {
    persistence,
    heartbeatIntervalMs: config.mqttHeartbeatMs,
    keepWill: policy.keepWill,
    cluster,
  })
  brokerLog = broker.logger
  for (const [obj, msg] of early) broker.logger.warn(obj, msg)
  if (redis && !cluster) broker.logger.warn({}, 'redis unreachable at start: this instance serves its own devices only until it restarts')
  lifecycle.add('broker', () => broker.close())
  await broker.start()
  return await assemble(config, deps, { clock, db, broker, policy, deprecations, redis, lifecycle, afterBroker })
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
    /** Stop steps that run after the broker has closed (see open()). */
    afterBroker: StopSteps
  },
): Promise<FastifyInstance> {
  const { clock, db, broker, policy, deprecations, redis, lifecycle, afterBroker } = ctx
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
    // Answers refused before routing, or by Node before Fastify, keep the envelope too.
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>()
  app.decorate('routeSchemas', routeSchemas)
  lifecycle.useLog(app.log)
  app.decorate('lifecycle', lifecycle)

  broker.setLog(app.log)
  // Instances joined through Redis share presence there (domains/devicelink/RedisPresenceStore.ts).
  const presenceStore = redis && broker.clustered ? new RedisPresenceStore(redis) : undefined
  // JSON only: a text/plain body is refused with 415 rather than validated as a string.
  app.removeContentTypeParser('text/plain')
  installBodyRules(app)
  app.decorate(
    'services',
    createServices({
      config,
      db,
      clock,
      random: deps.random,
      broker,
      log: app.log,
      content: deps.content,
      panelSettings: deps.panelSettings,
      outbound: deps.outbound,
      redis,
      presenceStore,
      timers: deps.timers,
    }),
  )
  const services = app.services
  // The Redis channels, and what the broker's last drops may still use (alert mail and
  // webhooks, applied counts, last_used_at), stop after the broker. last_used_at values
  // still pending are written before the database closes.
  if (redis) afterBroker.add('credential changes channel', () => (services.credentialChanges as { close?: () => void }).close?.())
  if (redis) afterBroker.add('data changes channel', () => (services.dataChanges as { close?: () => void }).close?.())
  afterBroker.add('api key last-used flush', () => services.apiKeys.close())
  afterBroker.add('mailer', () => services.mailer.close())
  afterBroker.add('outbound pool', () => services.outbound.close())
  afterBroker.add('takeover delivery counts', () => services.takeoverDelivery.idle())
  // Before the broker: media probes and desired-state fan-outs in flight finish.
  lifecycle.add('media processing', () => services.media.idle())
  lifecycle.add('desired state publishing', () => services.desiredPublisher.idle({ behindSlowReceivers: false }))
  policy.setPlayLogSink((screenId, payload) => services.playLog.ingest(screenId, payload))
  lifecycle.add('play log', () => {
    policy.setPlayLogSink(null)
    services.playLog.close()
  })
  // After a restart the broker knows no sessions: devices get theirs back from the database.
  const presenceRepo = new ScreenPresenceRepository(db.kysely)
  const sessions = new DeviceSessions(
    broker,
    { workspacesOf: (ids) => presenceRepo.workspacesOf(ids), markDirty: (ws, ids) => app.services.desiredPublisher.markDirty(ws, ids) },
    app.log,
  )
  sessions.start()
  lifecycle.add('device sessions', () => sessions.stop())
  const presenceTimers = config.presenceTimers ?? config.castExpiryIntervalMs > 0
  // Presence stops its timers before the broker closes, records the drops the close causes
  // after it, then (shared presence) forgets what is left of this instance in Redis.
  if (presenceStore) afterBroker.add('shared presence of this instance', () => presenceStore.forgetInstance(services.presence.instance))
  afterBroker.add('presence drops recorded', () => services.presence.idle())
  await app.services.presence.start({ timers: presenceTimers })
  lifecycle.add('presence timers', () => services.presence.stop())
  // Leases live in the database, so a cloud holds with or without Redis; shared presence uses one.
  app.decorate('leases', new WorkLeases(new WorkLeaseRepository(db.kysely), clock))
  const clusterPresence = presenceStore
    ? new ClusterPresence(presenceStore, app.services.presence, app.leases, clock, app.log, config.presenceHeartbeatMs)
    : null
  app.decorate('clusterPresence', clusterPresence)
  if (clusterPresence) {
    await clusterPresence.start(presenceTimers)
    // Beats until the broker has closed (its sweep lease is given back to the database).
    afterBroker.add('shared presence heartbeat', () => clusterPresence.stop())
  }
  // Callback style (no promise per request): the id header is on every answer, errors
  // included, and so is `nosniff` (a browser never guesses a type other than the one sent).
  app.addHook('onRequest', (req, reply, done) => {
    reply.header(REQUEST_ID_HEADER, req.id)
    reply.header(NOSNIFF[0], NOSNIFF[1])
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
  installAuth(app)
  installJsonBounds(app)
  app.services.idempotency.install(app)
  installDeprecationHeaders(app, deprecations)
  await installOpenApi(app)

  // Teardown of what app.ts opened (the stop steps above). Added before the domain plugins:
  // Fastify runs onClose hooks last-registered first, so each domain's workers and
  // deliveries have stopped by then.
  app.addHook('onClose', () => lifecycle.close())

  // Interval work. Each domain plugin starts and stops its own workers (platform/workers/ownWorker.ts);
  // the ones under a lease run on one instance of the cloud at a time (platform/cluster/WorkLeases.ts).
  app.decorate('workers', {} as FastifyInstance['workers'])
  // Housekeeping purges rows of several domains, so it is wired here rather than in one of them.
  ownWorker(
    app,
    'housekeeper',
    new Housekeeper(
      [
        { name: 'idempotency keys', run: () => app.services.idempotency.purgeExpired() },
        { name: 'multipart uploads', run: () => app.services.media.purgeExpiredUploads() },
        { name: 'pairing registrations', run: () => app.services.pairing.purgeExpired() },
        { name: 'sent mail', run: () => app.services.mailer.purgeSent() },
        { name: 'expired OAuth tokens', run: () => app.services.oauth.purgeExpired() },
        { name: 'old plays', run: () => app.services.playLog.purgeOld() },
        { name: 'old screenshots', run: () => app.services.screenshots.purgeOld() },
        { name: 'dispatched events', run: () => app.services.outbox.purgeDispatched() },
      ],
      config.housekeepingIntervalMs,
      app.log,
    ).oncePerCloud(app.leases, 'housekeeping'),
  )

  await app.register(v1Routes(deprecations), { prefix: '/v1' })
  await app.register(oauthMetadataRoutes)
  return app
}
