// Runs the cloud: HTTP (with MQTT over WebSocket at /mqtt), MQTT over TCP and, with a
// certificate, MQTT over TLS, and drains on SIGTERM/SIGINT: no new HTTP or MQTT
// connection is accepted, the device connections
// are closed (devices reconnect, with backoff, to another instance of the cloud), requests
// in flight finish (each answer then closes its connection), and after SVC_DRAIN_TIMEOUT_MS
// whatever is still open is cut. Then the workers stop and give up their leases, and the
// broker and the database close; the process exits 0. Presence stops with the broker's
// drops recorded: another instance announces a screen offline only if it has not
// reconnected anywhere within the grace period.
import closeWithGrace from 'close-with-grace'
import type { FastifyInstance } from 'fastify'
import { buildApp, servicesOf, type AppDeps } from './app.js'
import type { Config } from './config.js'
import { lockDataDir, StartupError } from './dataLock.js'
import { TlsFileError } from './platform/broker/TlsCertificate.js'
import { listenMetrics, type MetricsListener } from './platform/metrics/listen.js'

export { StartupError } from './dataLock.js'

export interface Running {
  httpPort: number
  mqttPort: number | null
  /** MQTT over TLS, when SVC_MQTT_TLS_CERT and SVC_MQTT_TLS_KEY are set. */
  mqttsPort: number | null
  /** Prometheus metrics at GET /metrics, when SVC_METRICS_PORT is set. */
  metricsPort: number | null
  /** The app behind the listeners (services, embedded broker), for in-process tests and tools. */
  app: FastifyInstance
  close(): Promise<void>
  /** Closes as a drain: requests in flight get `timeoutMs` to finish, then their connections are cut. */
  drain(timeoutMs: number): Promise<void>
}

/** On top of the drain timeout, how long stopping the workers and closing the database may take before the process gives up (exit 1). */
const STOP_MARGIN_MS = 10_000

/** A listen failure a person can act on (port taken, port not allowed) as one sentence naming the setting. */
function listenError(e: unknown, what: string, port: number, host: string, setting: string, hostSetting = 'SVC_HOST'): unknown {
  const code = (e as NodeJS.ErrnoException).code
  if (code === 'EADDRINUSE')
    return new StartupError(
      `${what} port ${port} is in use on ${host} (${setting}): stop the program that holds it, or set ${setting} to a free port (0 = any)`,
    )
  if (code === 'EACCES')
    return new StartupError(`${what} port ${port} needs privileges this process does not have (${setting}): set ${setting} to a port above 1023`)
  if (code === 'EADDRNOTAVAIL') return new StartupError(`${what} cannot listen on ${host}, not an address of this machine (${hostSetting})`)
  return e
}

/** A certificate or key file that cannot be used, as one sentence naming its setting. */
function tlsError(e: unknown): unknown {
  if (!(e instanceof TlsFileError)) return e
  const setting = e.which === 'cert' ? 'SVC_MQTT_TLS_CERT' : e.which === 'key' ? 'SVC_MQTT_TLS_KEY' : 'SVC_MQTT_TLS_CERT and SVC_MQTT_TLS_KEY'
  return new StartupError(`${setting}: ${e.message}`)
}

export async function startServer(config: Config, deps: AppDeps = {}): Promise<Running> {
  const app = await buildApp(config, deps)
  let draining = false
  // While draining, every answer closes its connection: the client's next request opens a
  // new one, which the load balancer sends to another instance.
  // Callback style: it runs on every answer, and a promise per answer is not free.
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (draining) reply.header('connection', 'close')
    done(null, payload)
  })
  // The broker closes before the HTTP server: server.close() waits for every open socket,
  // upgraded WebSocket devices included, and the app's onClose (which closes the broker)
  // only runs after it, so a connected device would hold shutdown open.
  /** Stops compiling the route schemas no request has needed yet (set once listening). */
  let stopWarmup = (): void => undefined
  let metricsListener: MetricsListener | null = null
  app.addHook('preClose', async () => {
    draining = true
    stopWarmup()
    // Scrapes end with the service (a stopping instance reports nothing more).
    await metricsListener?.close()
    // The HTTP listener stops first (Fastify closes it again later and waits for the
    // requests in flight); idle keep-alive connections close now.
    if (app.server.listening) app.server.close()
    // Ends every device connection and closes the MQTT listeners.
    await servicesOf(app).broker.close()
    // Presence records those drops (in a shared store, for the instance that takes the
    // screens over), then stops its timers: this instance announces nothing more.
    await servicesOf(app)
      .presence.idle()
      .catch(() => undefined)
    servicesOf(app).presence.stop()
  })
  let mqttPort: number | null = null
  let mqttsPort: number | null = null
  try {
    await app.listen({ port: config.httpPort, host: config.host }).catch((e: unknown) => {
      throw listenError(e, 'HTTP', config.httpPort, config.host, 'SVC_HTTP_PORT')
    })
    // Attached once listening: the WebSocket server re-emits the HTTP server's errors, and
    // a refused listen would surface as its unhandled 'error' event.
    servicesOf(app).broker.attachWebSocket(app.server)
    if (config.mqttPort >= 0) {
      mqttPort = await servicesOf(app)
        .broker.listenTcp(config.mqttPort, config.host)
        .catch((e: unknown) => {
          throw listenError(e, 'MQTT', config.mqttPort, config.host, 'SVC_MQTT_PORT')
        })
    }
    if (config.mqttTlsCertFile && config.mqttTlsKeyFile) {
      const files = { certFile: config.mqttTlsCertFile, keyFile: config.mqttTlsKeyFile }
      mqttsPort = await servicesOf(app)
        .broker.listenTls(config.mqttsPort, config.host, files, config.mqttTlsWatchMs)
        .catch((e: unknown) => {
          throw listenError(tlsError(e), 'MQTT over TLS', config.mqttsPort, config.host, 'SVC_MQTTS_PORT')
        })
    }
    if (config.metricsPort !== null) {
      const port = config.metricsPort
      metricsListener = await listenMetrics(servicesOf(app).metrics, port, config.metricsHost, app.log).catch((e: unknown) => {
        throw listenError(e, 'Metrics', port, config.metricsHost, 'SVC_METRICS_PORT', 'SVC_METRICS_HOST')
      })
    }
  } catch (e) {
    await app.close().catch(() => undefined)
    throw e
  }
  const httpPort = (app.server.address() as { port: number }).port
  const metricsPort = metricsListener?.port ?? null
  app.log.info({ httpPort, mqttPort, mqttsPort, metricsPort, dataDir: config.dataDir }, 'cloud ready')
  if (mqttPort !== null && config.publicUrl?.startsWith('https:'))
    app.log.warn(
      { mqttPort },
      'SVC_PUBLIC_URL is https, so devices are never handed the plaintext MQTT port; it stays open for whoever reaches it directly (SVC_MQTT_PORT=-1 closes it)',
    )
  if (config.schemaWarmupMs > 0)
    stopWarmup = app.routeSchemas.compileInBackground(
      config.schemaWarmupMs,
      (err) => app.log.error({ err }, 'a route schema does not compile'),
      (compiled) => app.log.info({ compiled }, 'route schemas compiled'),
    )
  const drain = async (timeoutMs: number): Promise<void> => {
    app.log.info({ timeoutMs }, 'draining: no new connections, device connections closing, requests in flight finishing')
    const cut = setTimeout(() => {
      app.log.warn({ timeoutMs }, 'drain timeout: cutting the HTTP connections still open')
      app.server.closeAllConnections()
    }, timeoutMs)
    try {
      await app.close()
    } finally {
      clearTimeout(cut)
    }
  }
  return { httpPort, mqttPort, mqttsPort, metricsPort, app, close: () => app.close(), drain }
}

/** The next step for someone who just started a fresh service: the bootstrap command, the console's and the docs' addresses. */
async function guideFirstRun(running: Running, config: Config): Promise<void> {
  if ((await servicesOf(running.app).workspaces.count()) > 0) return
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host
  running.app.log.info(
    `no workspace yet: create one, its owner API key and your console invite link with \`npx -y pnpm@10.34.9 --silent cloud bootstrap --workspace NAME --email YOU@EXAMPLE.COM\`; console at http://${host}:${running.httpPort}/console/, API docs at http://${host}:${running.httpPort}/v1/docs`,
  )
}

/**
 * Within this long of the first stop signal, another SIGINT or SIGTERM is the same request
 * reaching us again: Ctrl-C reaches the whole process group, pnpm forwards it once more,
 * and pnpm turns a second SIGINT it gets (from npx in front of it) into a SIGTERM.
 */
const STOP_ECHO_MS = 1000

export async function runServer(config: Config): Promise<void> {
  // Before anything is opened: a second instance on the same folder stops here.
  const lock = lockDataDir(config.dataDir)
  // SIGINT and SIGTERM are handled here, not by close-with-grace, which exits 1 on any
  // second signal: the echoes above would turn a clean Ctrl-C into exit 1. A stop signal
  // during start-up stops once started; another one more than STOP_ECHO_MS after the
  // first exits at once with 1.
  let firstStop = 0
  let stop: (() => void) | null = null
  const onStop = (signal: NodeJS.Signals): void => {
    const now = Date.now()
    if (firstStop === 0) {
      firstStop = now
      process.stderr.write(`received ${signal}, shutting down\n`)
      stop?.()
    } else if (now - firstStop > STOP_ECHO_MS) {
      process.stderr.write(`second ${signal}, exiting now\n`)
      lock.release()
      process.exit(1)
    }
  }
  process.on('SIGINT', onStop)
  process.on('SIGTERM', onStop)
  let running: Running
  try {
    running = await startServer(config)
  } catch (e) {
    lock.release()
    throw e
  }
  const grace = closeWithGrace({ delay: config.drainTimeoutMs + STOP_MARGIN_MS, skip: ['SIGINT', 'SIGTERM'] }, async ({ signal, err }) => {
    if (err) console.error(err)
    else if (signal) process.stderr.write(`received ${signal}, shutting down\n`)
    await running.drain(config.drainTimeoutMs)
    lock.release()
  })
  stop = () => void grace.close()
  if (firstStop !== 0) stop()
  else await guideFirstRun(running, config).catch(() => undefined)
}
