// buildApp(config): the whole control API as one Fastify instance, without listening.
// Order: external plugins and cross-cutting hooks (errors, auth, idempotency,
// deprecations, OpenAPI) → services → routes. Tests call buildApp and use inject();
// server.ts adds the listeners and graceful shutdown.
import Fastify, { type FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { RouteInfo } from './http/types.js'
import { systemClock, type Clock, type RandomSource } from './clock.js'
import type { Config } from './config.js'
import { SqliteDatabase } from './db/SqliteDatabase.js'
import type { Database } from './db/Database.js'
import { migrate } from './db/migrations.js'
import { EmbeddedBroker } from './broker/EmbeddedBroker.js'
import { createServices } from './services/index.js'
import { installErrorHandling } from './http/errors.js'
import { installAuth } from './http/auth.js'
import { genRequestId, REQUEST_ID_HEADER } from './http/requestId.js'
import { DEPRECATIONS, installDeprecationHeaders, validateDeprecations, type Deprecation } from './http/deprecations.js'
import { installOpenApi } from './http/openapi.js'
import { StatusMonitor } from './workers/StatusMonitor.js'
import { Housekeeper } from './workers/Housekeeper.js'
import meRoutes from './routes/me.js'
import apiKeyRoutes from './routes/apiKeys.js'
import nodeRoutes from './routes/nodes.js'
import accountRoutes from './routes/account.js'
import statusRoutes from './routes/status.js'
import webhookRoutes from './routes/webhooks.js'
import alertRoutes from './routes/alerts.js'
import type { OutboundGuard } from './net/OutboundGuard.js'

export interface AppDeps {
  clock?: Clock
  random?: RandomSource
  /** An already open database (tests share one between app instances); opened from config otherwise. */
  db?: Database
  /** Routes being retired; defaults to the registry in http/deprecations.ts. */
  deprecations?: Deprecation[]
  /** Outbound HTTP guard; tests inject one with a fake DNS lookup. */
  outbound?: OutboundGuard
}

export async function buildApp(config: Config, deps: AppDeps = {}): Promise<FastifyInstance> {
  const deprecations = deps.deprecations ?? DEPRECATIONS
  // Checked before anything is opened, so a bad registry leaves nothing running.
  validateDeprecations(deprecations)
  const clock = deps.clock ?? systemClock
  const ownsDb = !deps.db
  const db = deps.db ?? (await SqliteDatabase.open(config.dbFile, config.dbBusyTimeoutMs))
  await migrate(db)
  const broker = new EmbeddedBroker()
  await broker.start()

  try {
    return await assemble(config, deps, { clock, db, ownsDb, broker, deprecations })
  } catch (e) {
    // Nothing half-started stays open when assembly fails.
    await broker.close().catch(() => undefined)
    if (ownsDb) await db.close().catch(() => undefined)
    throw e
  }
}

async function assemble(
  config: Config,
  deps: AppDeps,
  ctx: { clock: Clock; db: Database; ownsDb: boolean; broker: EmbeddedBroker; deprecations: Deprecation[] },
): Promise<FastifyInstance> {
  const { clock, db, ownsDb, broker, deprecations } = ctx
  const app = Fastify({
    logger: { level: config.logLevel },
    genReqId: genRequestId,
    requestIdLogLabel: 'requestId',
    bodyLimit: config.bodyLimitBytes,
    ajv: { customOptions: { coerceTypes: false, allErrors: false } },
    return503OnClosing: true,
  }).withTypeProvider<TypeBoxTypeProvider>()

  // JSON only: a text/plain body is refused with 415 rather than validated as a string.
  app.removeContentTypeParser('text/plain')
  app.decorate('services', createServices({ config, db, clock, random: deps.random, broker, log: app.log, outbound: deps.outbound }))
  app.addHook('onRequest', async (req, reply) => {
    reply.header(REQUEST_ID_HEADER, req.id)
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
  app.services.idempotency.install(app)
  installDeprecationHeaders(app, deprecations)
  await installOpenApi(app)

  await app.register(meRoutes)
  await app.register(apiKeyRoutes)
  await app.register(nodeRoutes)
  await app.register(accountRoutes)
  await app.register(statusRoutes(deprecations))
  await app.register(webhookRoutes)
  await app.register(alertRoutes)

  const workers = [new StatusMonitor(app.services.status, config.statusIntervalMs, app.log), new Housekeeper(app.services.idempotency, config.statusIntervalMs > 0 ? 3600_000 : 0, app.log), app.services.webhookWorker, app.services.alertWorker]
  app.decorate('workers', workers)
  app.addHook('onReady', async () => {
    for (const w of workers) w.start()
    // A first measurement right away, so a fresh server does not report `unknown`.
    if (config.statusIntervalMs > 0) void workers[0]!.runOnce().catch((err) => app.log.error({ err }, 'first status measurement failed'))
  })
  app.addHook('onClose', async () => {
    for (const w of workers) await w.stop()
    await broker.close()
    await app.services.outbound.close()
    app.services.mailer.close()
    if (ownsDb) await db.close()
  })
  return app
}
