// Domain-level harness: wires the modules that provide the named provisions, and the modules
// they need in turn, on an in-memory SQLite database and a manual clock, without Fastify, its
// routes and the HTTP edge. The broker (and the device policy that guards it) is built only
// when a wired module needs it. The modules' one lifecycle runs as in the app (startModules,
// platform/modules.ts): what they add to `running` (workers, device-job deliveries) starts
// once they are wired and stops in t.teardown with the rest. For tests of a domain's rules
// through its services and workers; the interface tests keep build(t) (helpers.ts), which
// boots the whole app. A test on both engines passes the database eachEngine opened
// (db/engines.ts); the harness migrates it and leaves closing it to its opener.
import type { Test } from 'tap'
import { silentLogger } from '@svc/shared'
import { testConfig, type Config } from '../src/config.js'
import { IdGenerator, ManualClock } from '../src/platform/clock.js'
import { openDatabase } from '../src/platform/db/open.js'
import { migrate } from '../src/platform/db/migrate.js'
import { freshSqlite } from './db/sqliteTemplate.js'
import type { Database } from '../src/platform/db/Database.js'
import { EmbeddedBroker } from '../src/platform/broker/EmbeddedBroker.js'
import { WorkLeases } from '../src/platform/cluster/WorkLeases.js'
import { Metrics } from '../src/platform/metrics/Metrics.js'
import { WorkLeaseRepository } from '../src/platform/cluster/WorkLeaseRepository.js'
import { RateLimiter } from '../src/platform/http/rateLimit.js'
import { AuthFailureGuard } from '../src/platform/http/authFailures.js'
import { IdempotencyStore } from '../src/platform/http/idempotency.js'
import { OutboundGuard } from '../src/platform/net/OutboundGuard.js'
import { Lifecycle } from '../src/platform/lifecycle.js'
import { Listeners } from '../src/platform/hooks.js'
import { Housekeeper, type HousekeepingTask } from '../src/platform/workers/Housekeeper.js'
import { type AnyModule, ModuleRuns, startModules } from '../src/platform/modules.js'
import { MODULES, type PlatformProvisions, type Provisions } from '../src/domains/index.js'
import { DevicePolicy } from '../src/domains/devicelink/index.js'
import { screenDirectory } from '../src/domains/screens/index.js'
import type { Principal } from '../src/platform/http/Principal.js'

export type DomainName = Exclude<keyof Provisions, keyof PlatformProvisions>

export interface Domains<N extends DomainName> {
  /** The named provisions (and, through them, what they were built from). */
  provided: Pick<Provisions, N>
  clock: ManualClock
  db: Database
  /** The modules wired, in the order they were built. */
  modules: string[]
  /** Whether a wired module needed the broker (it is built only then). */
  broker: boolean
  /** The hourly clean-up with the tasks the wired modules added, not scheduled: `runOnce()` runs it. */
  housekeeper: Housekeeper
}

/** The modules that provide `names`, and those they need, transitively. */
export function modulesFor(names: readonly string[]): AnyModule[] {
  const byName = new Map<string, AnyModule>()
  for (const m of MODULES) for (const p of m.provides) byName.set(p, m)
  const out = new Set<AnyModule>()
  const todo = [...names]
  while (todo.length) {
    const name = todo.pop()!
    const m = byName.get(name)
    if (!m) continue // a platform provision
    if (out.has(m)) continue
    out.add(m)
    todo.push(...m.needs)
  }
  return MODULES.filter((m) => out.has(m))
}

/** Wires what provides `names` (see the file's header); everything closes in t.teardown. */
export async function wireDomains<N extends DomainName>(
  t: Test,
  names: readonly N[],
  config: Partial<Config> = {},
  deps: { db?: Database } = {},
): Promise<Domains<N>> {
  const modules = modulesFor(names)
  const needs = new Set(modules.flatMap((m) => m.needs))
  const cfg = testConfig(config)
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const lifecycle = new Lifecycle()
  t.teardown(() => lifecycle.close())
  // An in-memory database starts as a copy of the migrated template (db/sqliteTemplate.ts).
  const db = deps.db ?? (!cfg.databaseUrl && cfg.dbFile === ':memory:' ? await freshSqlite(cfg.dbBusyTimeoutMs) : await openDatabase(cfg))
  if (!deps.db) lifecycle.add('database', () => db.close())
  await migrate(db)
  const releaseSteps = lifecycle.group()
  const drainSteps = lifecycle.group('added')
  const withBroker = needs.has('broker') || needs.has('devicePolicy')
  const devicePolicy = new DevicePolicy(screenDirectory(db), silentLogger)
  let broker: EmbeddedBroker | undefined
  if (withBroker) {
    broker = new EmbeddedBroker(devicePolicy.hooks(), { heartbeatIntervalMs: cfg.mqttHeartbeatMs, keepWill: devicePolicy.keepWill })
    lifecycle.add('broker', () => broker!.close())
    await broker.start()
  }
  const outbound = new OutboundGuard({ allowHosts: cfg.webhookAllowHosts, caFile: cfg.webhookCaFile })
  releaseSteps.add('outbound pool', () => outbound.close())
  const housekeeping = new Listeners<HousekeepingTask>()
  const running = new ModuleRuns()
  const leases = new WorkLeases(new WorkLeaseRepository(db.kysely), clock)
  const platform: PlatformProvisions = {
    config: cfg,
    db,
    clock,
    ids: new IdGenerator(clock, undefined),
    random: undefined,
    log: silentLogger,
    timers: clock,
    // Never reached without a module that needs it: wireModules hands each module its declared needs only.
    broker: broker as EmbeddedBroker,
    redis: null,
    outbound,
    rateLimiter: new RateLimiter(clock),
    authFailures: new AuthFailureGuard(clock),
    idempotency: new IdempotencyStore(db, clock),
    dataChanges: db.changes,
    leases,
    metrics: new Metrics(false, leases),
    devicePolicy,
    stopSteps: lifecycle,
    drainSteps,
    releaseSteps,
    housekeeping,
    running,
    contentOverride: undefined,
    panelSettings: undefined,
  }
  const provided = (await startModules(modules, platform as unknown as Record<string, unknown>, running, lifecycle)) as unknown as Provisions
  const housekeeper = new Housekeeper(housekeeping, cfg.housekeepingIntervalMs, silentLogger)
  return { provided, clock, db, modules: modules.map((m) => m.name), broker: withBroker, housekeeper }
}

/** A principal holding every permission in the workspace, as its owner key does. */
export function owner(workspaceId: string): Principal {
  return { actor: { kind: 'key', id: 'key_test', name: 'Test key', nodeId: null }, workspaceId, grant: 'all', nodeId: null }
}

/** A workspace row as the account module writes it (that module needs the screens, and they the broker). */
export async function workspace(d: Pick<Domains<DomainName>, 'db' | 'clock'>, id = 'ws_harness'): Promise<string> {
  await d.db.kysely
    .insertInto('workspaces')
    .values({ id, name: 'Harness', region: 'us', rate_limit: null, licensed_screens: null, created_at: d.clock.now().toISOString() })
    .execute()
  return id
}
