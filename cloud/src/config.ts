// Configuration: every setting is an environment variable with a documented default
// (README "Configuration"). Tests build a Config directly and pass it to buildApp.
import { isIP } from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export interface Config {
  /** Folder for the SQLite database and stored files (SVC_DATA_DIR, default ./data). */
  dataDir: string
  /** SQLite file, or ':memory:' for tests (SVC_DB_FILE, default <dataDir>/svc.sqlite). */
  dbFile: string
  /** PostgreSQL instead of SQLite, e.g. postgres://user:pass@host:5432/db (SVC_DATABASE_URL); unset = SQLite. */
  databaseUrl: string | null
  /** Joins every instance started with the same database and Redis into one cloud, e.g. redis://host:6379 (SVC_REDIS_URL); unset = a single instance. */
  redisUrl: string | null
  /** Prefix of every key this cloud writes in Redis, so one Redis can serve several clouds (SVC_REDIS_PREFIX, svc:). */
  redisPrefix: string
  /** How long a statement waits on a locked database before answering 503 (SVC_DB_BUSY_TIMEOUT_MS, 5000). */
  dbBusyTimeoutMs: number
  host: string
  httpPort: number
  /** MQTT over TCP; 0 picks a free port, -1 turns the TCP listener off (SVC_MQTT_PORT, 1883). */
  mqttPort: number
  /** Prometheus metrics at GET /metrics on their own listener (SVC_METRICS_PORT; 0 picks a free port); unset = no listener, no HTTP timing. */
  metricsPort: number | null
  /** The address the metrics listener binds to (SVC_METRICS_HOST, 127.0.0.1: only this machine scrapes unless told otherwise). */
  metricsHost: string
  /**
   * The embedded broker's heartbeat, ms (SVC_MQTT_HEARTBEAT_MS, 60000). Every 4 heartbeats
   * it publishes the Last Wills a previous process left (devices that dropped while it was down).
   */
  mqttHeartbeatMs: number
  /** Public base URL of this service, used in links handed to devices (SVC_PUBLIC_URL); an https:// one means devices are handed TLS links only. */
  publicUrl: string | null
  /**
   * Which reverse proxies in front of the HTTP port are trusted to say who the client is
   * (X-Forwarded-For, -Proto, -Host) (SVC_TRUST_PROXY): unset = none, every address is the
   * connection's own; a hop count (`1` behind one proxy); or a comma-separated list of proxy
   * addresses and CIDR ranges (`10.0.0.0/8`, or `loopback`, `linklocal`, `uniquelocal`).
   */
  trustProxy: false | number | string[]
  /**
   * MQTT over TLS: the PEM certificate chain and private key (SVC_MQTT_TLS_CERT, SVC_MQTT_TLS_KEY),
   * both or neither; re-read when the files change. Unset = no TLS listener.
   */
  mqttTlsCertFile: string | null
  mqttTlsKeyFile: string | null
  /** Port of MQTT over TLS, open when the certificate is set; 0 picks a free port (SVC_MQTTS_PORT, 8883). */
  mqttsPort: number
  /** How often the certificate files are checked for a change, ms (not an environment setting; tests shorten it). */
  mqttTlsWatchMs?: number
  /**
   * MQTT connections over TCP and TLS not yet through an authenticated CONNECT (the TLS
   * handshake, then the wait for CONNECT): closed this long after they were accepted, ms
   * (SVC_MQTT_HANDSHAKE_TIMEOUT_MS, 10000).
   */
  mqttHandshakeTimeoutMs: number
  /** At most this many such connections from one remote address; more are closed at once (SVC_MQTT_HANDSHAKES_PER_ADDRESS, 32). */
  mqttHandshakesPerAddress: number
  /** At most this many such connections in all; more are closed at once, keeping file descriptors for HTTP and connected devices (SVC_MQTT_HANDSHAKES_MAX, 256). */
  mqttHandshakesMax: number
  /** The MQTT link devices are handed when a proxy terminates TLS in front of the broker: mqtts://host:port or wss://host/path (SVC_MQTT_PUBLIC_URL). */
  mqttPublicUrl: string | null
  logLevel: string
  /** Log lines: 'pretty' for people, 'json' for collectors, 'auto' = pretty on a terminal, else JSON (SVC_LOG_FORMAT, auto). */
  logFormat: 'auto' | 'json' | 'pretty'
  /** Largest JSON body accepted, bytes (SVC_BODY_LIMIT_BYTES, 1 MiB). */
  bodyLimitBytes: number
  /** Requests per fixed 60-second window per workspace, API keys only (SVC_RATE_LIMIT, 600). */
  rateLimitPerMinute: number
  /** Lifetime of a user session token, hours (SVC_SESSION_TTL_HOURS, 720). */
  sessionTtlHours: number
  /** Live event streams (GET /v1/events/stream) one workspace may hold open at once. */
  eventStreamsPerWorkspace: number
  /** Live event streams one credential (an API key, a user) may hold open at once (SVC_EVENT_STREAMS_PER_CREDENTIAL, 10). */
  eventStreamsPerCredential: number
  /** The built operator console served at /console/ (index.html, app.js, app.css). */
  consoleDir: string
  /** How often the platform measures itself, ms (SVC_STATUS_INTERVAL_MS, 60000); 0 = never (tests drive it). */
  statusIntervalMs: number
  /** How often the housekeeper deletes expired rows (keys, uploads, registrations, mail, tokens, plays, screenshots), ms (SVC_HOUSEKEEPING_INTERVAL_MS, 3600000); 0 = never (tests drive it). */
  housekeepingIntervalMs: number
  /** Test-only door through the public-https rule for webhook and alert URLs (SVC_WEBHOOK_ALLOW_HOSTS). */
  webhookAllowHosts: string[]
  /** Extra CA trusted for such test receivers (SVC_WEBHOOK_CA_FILE). */
  webhookCaFile: string | null
  /**
   * Key that seals stored provider secrets such as an OIDC client secret (SVC_SECRET_KEY: 32
   * bytes as 64 hex characters or base64); unset = a random key kept in the database.
   */
  secretKey?: string | null
  /** A dropped screen counts as offline after this long without reconnecting, ms (SVC_SCREEN_OFFLINE_GRACE_MS, 30000). */
  screenOfflineGraceMs: number
  /** How often an instance of a cloud joined through Redis beats for shared presence; dead after 3 missed (SVC_PRESENCE_HEARTBEAT_MS, 5000). */
  presenceHeartbeatMs: number
  /** How often ended casts are swept, ms (SVC_CAST_EXPIRY_INTERVAL_MS, 5000); 0 = never, no timers (tests drive it). */
  castExpiryIntervalMs: number
  /** CAP feeds: how often alert expiry is checked and due pull feeds fetched (SVC_CAP_INTERVAL_MS; 0 = never, tests). */
  capIntervalMs: number
  /** scrypt's work factor for new console passwords, log2 N (SVC_PASSWORD_SCRYPT_LOG_N, 15 = 32 MiB per derivation; 14–20). */
  passwordScryptLogN: number
  /** How often running agent rollouts are judged, ms (SVC_ROLLOUT_INTERVAL_MS, 10000); 0 = never (tests drive it). */
  rolloutIntervalMs: number
  /** Largest agent release tarball accepted, bytes (SVC_AGENT_RELEASE_MAX_BYTES, 256 MiB). */
  agentReleaseMaxBytes: number
  /** Uploaded agent log lines one screen may have stored; past it the screen's oldest uploads are deleted (SVC_AGENT_LOG_SCREEN_BYTES, 16 MiB). */
  agentLogScreenBytes: number
  /** Uploaded agent log lines one workspace may have stored; past it the workspace's oldest uploads are deleted (SVC_AGENT_LOG_WORKSPACE_BYTES, 256 MiB). */
  agentLogWorkspaceBytes: number
  /** Most bytes an uploaded agent tarball may unpack to before it is refused (SVC_AGENT_RELEASE_MAX_UNPACKED_BYTES, 512 MiB). */
  agentReleaseMaxUnpackedBytes: number
  /** Most entries an uploaded agent tarball may hold (SVC_AGENT_RELEASE_MAX_ENTRIES, 10000). */
  agentReleaseMaxEntries: number
  /** Longest an uploaded agent tarball may take to read, ms (SVC_AGENT_RELEASE_READ_TIMEOUT_MS, 60000). */
  agentReleaseReadTimeoutMs: number
  /**
   * Whether presence runs its own timers (offline after the grace period). Always on in a
   * real deployment; tests leave it unset, and then it follows castExpiryIntervalMs so one
   * switch turns every real timer off under a ManualClock.
   */
  presenceTimers?: boolean
  /**
   * Where media bytes are stored (SVC_MEDIA_DIR); null = `<dataDir>/media`. The instances of
   * one cloud share this folder (a shared volume), each keeping its own SVC_DATA_DIR.
   */
  mediaDir: string | null
  /** Largest file accepted by the single-request upload, bytes (SVC_MEDIA_UPLOAD_MAX_BYTES, 128 MiB); bigger files use the multipart routes. */
  mediaUploadMaxBytes: number
  /** Largest part of a multipart upload, bytes (SVC_MEDIA_PART_MAX_BYTES, 64 MiB). */
  mediaPartMaxBytes: number
  /** Largest assembled multipart upload, bytes (SVC_MEDIA_FILE_MAX_BYTES, 10 GiB). */
  mediaFileMaxBytes: number
  /** Largest file fetched by import-url, bytes (SVC_MEDIA_IMPORT_MAX_BYTES, 128 MiB). */
  mediaImportMaxBytes: number
  /** Time limit of an import-url fetch, ms (SVC_MEDIA_IMPORT_TIMEOUT_MS, 60000). */
  mediaImportTimeoutMs: number
  /** Stored plays (proof of play) are deleted this many days after they started (SVC_PLAY_LOG_RETENTION_DAYS, 395). */
  playLogRetentionDays: number
  /** Audit log entries are deleted this many days after they were recorded (SVC_AUDIT_RETENTION_DAYS, 400). */
  auditRetentionDays: number
  /** Writes are recorded in the audit log (SVC_AUDIT, on; `off` only for the bench's run beside it). */
  auditEnabled: boolean
  /** Plays one screen may have stored per second, sustained; beyond it its batches wait for their PUBACK (SVC_PLAY_LOG_SCREEN_RATE, 20; at least 10). */
  playLogScreenRate: number
  /** Plays one screen may have stored at once before its rate applies (SVC_PLAY_LOG_SCREEN_BURST, 2000; at least 200, one batch). */
  playLogScreenBurst: number
  /** Plays a workspace may store per UTC day, per paired screen and per zone of its largest layout (SVC_PLAY_LOG_DAILY_PER_ZONE, 86400). */
  playLogDailyPerZone: number
  /** How often desired states whose signed media URLs are getting old are republished, ms (SVC_MEDIA_URL_REFRESH_INTERVAL_MS, 3600000); 0 = never (tests drive it). */
  mediaUrlRefreshIntervalMs: number
  /** `background`: probe new files right after upload; `manual`: only when something calls processPending() (tests). */
  mediaProcessing: 'background' | 'manual'
  /** How often the webhook delivery worker looks for due deliveries, ms (SVC_WEBHOOK_INTERVAL_MS, 1000); 0 = never (tests drive it). */
  webhookIntervalMs: number
  /** How long a claimed delivery is held before another run may retry it, ms (SVC_WEBHOOK_LEASE_MS, 30000; above the 10 s receiver timeout). */
  webhookLeaseMs: number
  /** Requests in flight (and keep-alive connections) to one webhook endpoint origin at most (SVC_WEBHOOK_ENDPOINT_CONCURRENCY, 16). */
  webhookEndpointConcurrency: number
  /** How often alert rules are checked for time-based triggers (connection-lost, drift) and drift is swept, ms (SVC_ALERT_INTERVAL_MS, 30000); 0 = never. */
  alertIntervalMs: number
  /** How often the reports' background work runs (the availability roll-up, due report subscriptions), on one instance, ms (SVC_REPORT_INTERVAL_MS, 600000); 0 = never. */
  reportIntervalMs: number
  /** How long a published desired state may go unapplied before the screen's content counts as drifting, ms (SVC_DRIFT_GRACE_MS, 60000). */
  driftGraceMs: number
  /**
   * On SIGTERM (or SIGINT) the instance drains: it stops accepting connections, closes its
   * device connections so they reconnect elsewhere, and gives requests in flight this long
   * to finish before their connections are cut; then it stops and exits 0 (SVC_DRAIN_TIMEOUT_MS, 10000).
   */
  drainTimeoutMs: number
  /**
   * Route schemas are compiled on each route's first request; this long after the service
   * starts listening, the ones still pending are compiled in the background, one per turn of
   * the event loop, so later first requests pay nothing (SVC_SCHEMA_WARMUP_MS, 5000; 0 = never).
   */
  schemaWarmupMs: number
  /**
   * Pages of the screen list are kept as answered until a committed change makes them
   * stale, and at most this long, ms (SVC_SCREEN_LIST_KEEP_MS, 5000; 0 = none kept). The
   * bound matters only on several instances while Redis is unreachable.
   */
  screenListKeepMs: number
  /** SMTP server for mail to owners and alert recipients, e.g. smtp://user:pass@host:587 (SVC_SMTP_URL); unset = mail is kept in the outbox table and logged. */
  smtpUrl: string | null
  /** Sender address of that mail (SVC_SMTP_FROM, `Signage <no-reply@localhost>`). */
  smtpFrom: string
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const n = Number(raw)
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`)
  return n
}

/** SVC_PASSWORD_SCRYPT_LOG_N: 14 (16 MiB, OWASP's floor for scrypt) to 20 (1 GiB); default 15. */
function scryptLogN(env: NodeJS.ProcessEnv): number {
  const n = int(env, 'SVC_PASSWORD_SCRYPT_LOG_N', 15)
  if (n < 14 || n > 20) throw new Error(`SVC_PASSWORD_SCRYPT_LOG_N must be an integer from 14 to 20, got "${env.SVC_PASSWORD_SCRYPT_LOG_N}"`)
  return n
}

function logFormat(raw: string | undefined): Config['logFormat'] {
  if (raw === undefined || raw === '') return 'auto'
  if (raw === 'auto' || raw === 'json' || raw === 'pretty') return raw
  throw new Error(`SVC_LOG_FORMAT must be auto, json or pretty, got "${raw}"`)
}

function databaseUrl(raw: string | undefined): string | null {
  if (!raw) return null
  if (!/^postgres(ql)?:\/\//.test(raw)) throw new Error(`SVC_DATABASE_URL must be a postgres:// URL, got "${raw.replace(/:[^:@/]*@/, ':***@')}"`)
  return raw
}

function redisUrl(raw: string | undefined): string | null {
  if (!raw) return null
  if (!/^rediss?:\/\//.test(raw)) throw new Error(`SVC_REDIS_URL must be a redis:// or rediss:// URL, got "${raw.replace(/:[^:@/]*@/, ':***@')}"`)
  return raw
}

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal'])

function trustProxy(raw: string | undefined): Config['trustProxy'] {
  if (raw === undefined || raw.trim() === '') return false
  const v = raw.trim()
  if (/^\d+$/.test(v)) {
    const hops = Number(v)
    if (hops < 1 || hops > 10) throw new Error(`SVC_TRUST_PROXY as a hop count must be 1 to 10, got "${raw}"`)
    return hops
  }
  if (/^(true|yes|on|\*)$/i.test(v)) {
    throw new Error(
      `SVC_TRUST_PROXY="${raw}" would trust any client's X-Forwarded-For; give the number of proxies in front of the cloud (1 behind one) or their addresses`,
    )
  }
  const list = v
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)
  for (const entry of list) {
    if (PROXY_NAMES.has(entry)) continue
    const [addr, bits, more] = entry.split('/')
    const family = isIP(addr ?? '')
    const maxBits = family === 4 ? 32 : 128
    const bitsOk = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= maxBits)
    if (family === 0 || !bitsOk || more !== undefined) {
      throw new Error(
        `SVC_TRUST_PROXY must be a hop count or a comma-separated list of addresses, CIDR ranges, loopback, linklocal or uniquelocal; "${entry}" is none of these`,
      )
    }
  }
  return list
}

function publicUrl(raw: string | undefined): string | null {
  if (!raw) return null
  if (!/^https?:\/\/[^/]/.test(raw) || !URL.canParse(raw)) throw new Error(`SVC_PUBLIC_URL must be an http:// or https:// URL, got "${raw}"`)
  return raw
}

/** SVC_MQTT_PUBLIC_URL: an MQTT or MQTT-over-WebSocket URL; a TLS one (mqtts, wss) when the public URL is https. */
function mqttPublicUrl(raw: string | undefined, publicBase: string | null): string | null {
  if (!raw) return null
  const secure = publicBase?.startsWith('https:') ?? false
  const m = /^(mqtts?|wss?):\/\/[^/]/.exec(raw)
  if (!m || !URL.canParse(raw))
    throw new Error(`SVC_MQTT_PUBLIC_URL must be an mqtts://, wss:// (or, on a cloud that is not https, mqtt:// or ws://) URL, got "${raw}"`)
  if (secure && (m[1] === 'mqtt' || m[1] === 'ws'))
    throw new Error(
      `SVC_MQTT_PUBLIC_URL must be an mqtts:// or wss:// URL when SVC_PUBLIC_URL is https (devices are never handed a plaintext link), got "${raw}"`,
    )
  return raw
}

/** SVC_MQTT_TLS_CERT and SVC_MQTT_TLS_KEY go together (the files are read at start, see server.ts). */
function tlsFiles(env: NodeJS.ProcessEnv): { mqttTlsCertFile: string | null; mqttTlsKeyFile: string | null } {
  const cert = env.SVC_MQTT_TLS_CERT || null
  const key = env.SVC_MQTT_TLS_KEY || null
  if (cert && !key) throw new Error('SVC_MQTT_TLS_CERT is set but SVC_MQTT_TLS_KEY is not: MQTT over TLS needs both the certificate and its private key')
  if (key && !cert) throw new Error('SVC_MQTT_TLS_KEY is set but SVC_MQTT_TLS_CERT is not: MQTT over TLS needs both the certificate and its private key')
  return { mqttTlsCertFile: cert && path.resolve(cert), mqttTlsKeyFile: key && path.resolve(key) }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = path.resolve(env.SVC_DATA_DIR || './data')
  return {
    dataDir,
    dbFile: env.SVC_DB_FILE || path.join(dataDir, 'svc.sqlite'),
    databaseUrl: databaseUrl(env.SVC_DATABASE_URL),
    redisUrl: redisUrl(env.SVC_REDIS_URL),
    redisPrefix: env.SVC_REDIS_PREFIX || 'svc:',
    dbBusyTimeoutMs: int(env, 'SVC_DB_BUSY_TIMEOUT_MS', 5000),
    host: env.SVC_HOST || '0.0.0.0',
    httpPort: int(env, 'SVC_HTTP_PORT', 8080),
    mqttPort: env.SVC_MQTT_PORT === '-1' ? -1 : int(env, 'SVC_MQTT_PORT', 1883),
    metricsPort: env.SVC_METRICS_PORT ? int(env, 'SVC_METRICS_PORT', 0) : null,
    metricsHost: env.SVC_METRICS_HOST || '127.0.0.1',
    mqttHeartbeatMs: int(env, 'SVC_MQTT_HEARTBEAT_MS', 60_000, 1),
    trustProxy: trustProxy(env.SVC_TRUST_PROXY),
    publicUrl: publicUrl(env.SVC_PUBLIC_URL),
    ...tlsFiles(env),
    mqttsPort: int(env, 'SVC_MQTTS_PORT', 8883),
    mqttPublicUrl: mqttPublicUrl(env.SVC_MQTT_PUBLIC_URL, env.SVC_PUBLIC_URL || null),
    mqttHandshakeTimeoutMs: int(env, 'SVC_MQTT_HANDSHAKE_TIMEOUT_MS', 10_000, 1),
    mqttHandshakesPerAddress: int(env, 'SVC_MQTT_HANDSHAKES_PER_ADDRESS', 32, 1),
    mqttHandshakesMax: int(env, 'SVC_MQTT_HANDSHAKES_MAX', 256, 1),
    logLevel: env.SVC_LOG_LEVEL || 'info',
    logFormat: logFormat(env.SVC_LOG_FORMAT),
    bodyLimitBytes: int(env, 'SVC_BODY_LIMIT_BYTES', 1024 * 1024, 1),
    rateLimitPerMinute: int(env, 'SVC_RATE_LIMIT', 600, 1),
    sessionTtlHours: int(env, 'SVC_SESSION_TTL_HOURS', 720, 1),
    eventStreamsPerWorkspace: int(env, 'SVC_EVENT_STREAMS_PER_WORKSPACE', 100, 1),
    eventStreamsPerCredential: int(env, 'SVC_EVENT_STREAMS_PER_CREDENTIAL', 10, 1),
    // Beside the cloud's own bundle (cloud/dist), where `pnpm start` builds it; from the sources too.
    consoleDir: env.SVC_CONSOLE_DIR ? path.resolve(env.SVC_CONSOLE_DIR) : fileURLToPath(new URL('../dist/console', import.meta.url)),
    statusIntervalMs: int(env, 'SVC_STATUS_INTERVAL_MS', 60_000),
    housekeepingIntervalMs: int(env, 'SVC_HOUSEKEEPING_INTERVAL_MS', 3_600_000),
    webhookAllowHosts: (env.SVC_WEBHOOK_ALLOW_HOSTS || '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
    webhookCaFile: env.SVC_WEBHOOK_CA_FILE || null,
    secretKey: env.SVC_SECRET_KEY || null,
    screenOfflineGraceMs: int(env, 'SVC_SCREEN_OFFLINE_GRACE_MS', 30_000),
    presenceHeartbeatMs: int(env, 'SVC_PRESENCE_HEARTBEAT_MS', 5000),
    castExpiryIntervalMs: int(env, 'SVC_CAST_EXPIRY_INTERVAL_MS', 5000),
    capIntervalMs: int(env, 'SVC_CAP_INTERVAL_MS', 5000),
    rolloutIntervalMs: int(env, 'SVC_ROLLOUT_INTERVAL_MS', 10_000),
    passwordScryptLogN: scryptLogN(env),
    agentReleaseMaxBytes: int(env, 'SVC_AGENT_RELEASE_MAX_BYTES', 256 * 1024 * 1024, 1),
    agentLogScreenBytes: int(env, 'SVC_AGENT_LOG_SCREEN_BYTES', 16 * 1024 * 1024, 1024 * 1024),
    agentLogWorkspaceBytes: int(env, 'SVC_AGENT_LOG_WORKSPACE_BYTES', 256 * 1024 * 1024, 1024 * 1024),
    agentReleaseMaxUnpackedBytes: int(env, 'SVC_AGENT_RELEASE_MAX_UNPACKED_BYTES', 512 * 1024 * 1024, 1),
    agentReleaseMaxEntries: int(env, 'SVC_AGENT_RELEASE_MAX_ENTRIES', 10_000, 1),
    agentReleaseReadTimeoutMs: int(env, 'SVC_AGENT_RELEASE_READ_TIMEOUT_MS', 60_000, 1),
    presenceTimers: true,
    mediaDir: env.SVC_MEDIA_DIR ? path.resolve(env.SVC_MEDIA_DIR) : null,
    mediaUploadMaxBytes: int(env, 'SVC_MEDIA_UPLOAD_MAX_BYTES', 128 * 1024 * 1024, 1),
    mediaPartMaxBytes: int(env, 'SVC_MEDIA_PART_MAX_BYTES', 64 * 1024 * 1024, 1),
    mediaFileMaxBytes: int(env, 'SVC_MEDIA_FILE_MAX_BYTES', 10 * 1024 * 1024 * 1024, 1),
    mediaImportMaxBytes: int(env, 'SVC_MEDIA_IMPORT_MAX_BYTES', 128 * 1024 * 1024, 1),
    mediaImportTimeoutMs: int(env, 'SVC_MEDIA_IMPORT_TIMEOUT_MS', 60_000, 1),
    mediaProcessing: env.SVC_MEDIA_PROCESSING === 'manual' ? 'manual' : 'background',
    mediaUrlRefreshIntervalMs: int(env, 'SVC_MEDIA_URL_REFRESH_INTERVAL_MS', 3_600_000),
    playLogRetentionDays: int(env, 'SVC_PLAY_LOG_RETENTION_DAYS', 395, 1),
    auditRetentionDays: int(env, 'SVC_AUDIT_RETENTION_DAYS', 400, 1),
    auditEnabled: env.SVC_AUDIT !== 'off',
    playLogScreenRate: int(env, 'SVC_PLAY_LOG_SCREEN_RATE', 20, 10),
    playLogScreenBurst: int(env, 'SVC_PLAY_LOG_SCREEN_BURST', 2000, 200),
    playLogDailyPerZone: int(env, 'SVC_PLAY_LOG_DAILY_PER_ZONE', 86_400, 1),
    webhookIntervalMs: int(env, 'SVC_WEBHOOK_INTERVAL_MS', 1000),
    webhookLeaseMs: int(env, 'SVC_WEBHOOK_LEASE_MS', 30_000, 1),
    webhookEndpointConcurrency: int(env, 'SVC_WEBHOOK_ENDPOINT_CONCURRENCY', 16, 1),
    alertIntervalMs: int(env, 'SVC_ALERT_INTERVAL_MS', 30_000),
    reportIntervalMs: int(env, 'SVC_REPORT_INTERVAL_MS', 600_000),
    driftGraceMs: int(env, 'SVC_DRIFT_GRACE_MS', 60_000),
    drainTimeoutMs: int(env, 'SVC_DRAIN_TIMEOUT_MS', 10_000),
    schemaWarmupMs: int(env, 'SVC_SCHEMA_WARMUP_MS', 5000),
    screenListKeepMs: int(env, 'SVC_SCREEN_LIST_KEEP_MS', 5000),
    smtpUrl: env.SVC_SMTP_URL || null,
    smtpFrom: env.SVC_SMTP_FROM || 'Signage <no-reply@localhost>',
  }
}

/** A config for tests: in-memory database, no listeners, silent logs, self-measurement off. */
export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    ...loadConfig({}),
    dataDir: overrides.dataDir ?? path.resolve('.tap/data'),
    dbFile: ':memory:',
    httpPort: 0,
    mqttPort: -1,
    logLevel: 'silent',
    logFormat: 'json',
    statusIntervalMs: 0,
    housekeepingIntervalMs: 0,
    castExpiryIntervalMs: 0,
    capIntervalMs: 0,
    rolloutIntervalMs: 0,
    // Tests sign in hundreds of times: a cheaper derivation (2^10); production's is 2^15.
    passwordScryptLogN: 10,
    presenceTimers: undefined,
    mediaProcessing: 'manual',
    mediaUrlRefreshIntervalMs: 0,
    webhookIntervalMs: 0,
    alertIntervalMs: 0,
    reportIntervalMs: 0,
    schemaWarmupMs: 0,
    ...overrides,
  }
}
