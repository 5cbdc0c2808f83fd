// Runs the cloud: HTTP (with MQTT over WebSocket at /mqtt) and MQTT over TCP, and shuts
// down gracefully on SIGINT/SIGTERM (close-with-grace: in-flight requests finish,
// workers stop, the broker and the database close).
import closeWithGrace from 'close-with-grace'
import type { FastifyInstance } from 'fastify'
import { buildApp, type AppDeps } from './app.js'
import type { Config } from './config.js'

export interface Running {
  httpPort: number
  mqttPort: number | null
  /** The app behind the listeners (services, embedded broker), for in-process tests and tools. */
  app: FastifyInstance
  close(): Promise<void>
}

export async function startServer(config: Config, deps: AppDeps = {}): Promise<Running> {
  const app = await buildApp(config, deps)
  app.services.broker.attachWebSocket(app.server)
  // The broker closes before the HTTP server: server.close() waits for every open socket,
  // upgraded WebSocket devices included, and the app's onClose (which closes the broker)
  // only runs after it, so a connected device would hold shutdown open.
  app.addHook('preClose', async () => {
    await app.services.broker.close()
  })
  await app.listen({ port: config.httpPort, host: config.host })
  const httpPort = (app.server.address() as { port: number }).port
  const mqttPort = config.mqttPort >= 0 ? await app.services.broker.listenTcp(config.mqttPort, config.host) : null
  app.log.info({ httpPort, mqttPort, dataDir: config.dataDir }, 'cloud ready')
  return { httpPort, mqttPort, app, close: () => app.close() }
}

export async function runServer(config: Config): Promise<void> {
  const running = await startServer(config)
  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    if (err) console.error(err)
    else if (signal) process.stderr.write(`received ${signal}, shutting down\n`)
    await running.close()
  })
}
