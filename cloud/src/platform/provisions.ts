// The names the cloud's modules are wired by, with their types. PlatformProvisions: what the
// platform hands every module (built by app.ts, and by the tests' domain harness). A few of
// its names carry a domain's type (the device policy guarding the broker, the test seams of
// the content library and panel settings): those domains add them below by declaration
// merging, as they add their provisions to DomainProvisions, which is empty here. Each
// domain declares what it provides in its own `provisions.ts`:
//
//   declare module '../../platform/provisions.js' {
//     interface DomainProvisions {
//       nodes: NodeService
//     }
//   }
//
// so no file imports every domain, and a module's needs are typed from the declarations of
// the domains that provide them. A name declared twice with two types does not compile
// (TS2717, subsequent property declarations must have the same type); a name provided by two
// modules, or by a module and the platform, is refused at boot by wireModules().
import type { Logger, Timers } from '@svc/shared'
import type { Config } from '../config.js'
import type { Clock, IdGenerator, RandomSource } from './clock.js'
import type { Database } from './db/Database.js'
import type { DataChanges } from './db/changes.js'
import type { EmbeddedBroker } from './broker/EmbeddedBroker.js'
import type { RedisClient } from './cluster/redis.js'
import type { WorkLeases } from './cluster/WorkLeases.js'
import type { Metrics } from './metrics/Metrics.js'
import type { OutboundGuard } from './net/OutboundGuard.js'
import type { RateLimiter } from './http/rateLimit.js'
import type { AuthFailureGuard } from './http/authFailures.js'
import type { IdempotencyStore } from './http/idempotency.js'
import type { StopSteps } from './lifecycle.js'
import type { Hook } from './hooks.js'
import type { Module, Names, Runs } from './modules.js'
import type { HousekeepingTask } from './workers/Housekeeper.js'

/** What app.ts opens before any module: storage, the broker, the HTTP edge's shared parts. */
export interface PlatformProvisions {
  config: Config
  db: Database
  clock: Clock
  ids: IdGenerator
  /** The injected randomness (tests); undefined = the system's. */
  random: RandomSource | undefined
  log: Logger
  /** Timers for waits measured on `clock` (a ManualClock is both); undefined = the system's. */
  timers: Timers | undefined
  broker: EmbeddedBroker
  /** The Redis joining the instances of one cloud (SVC_REDIS_URL), or null for a single instance. */
  redis: RedisClient | null
  /** Outbound HTTP behind the SSRF guard (webhooks, alert channels, media import). */
  outbound: OutboundGuard
  rateLimiter: RateLimiter
  /** Failed authentications per client address (shared through Redis when the cloud has one). */
  authFailures: AuthFailureGuard
  idempotency: IdempotencyStore
  /** Committed changes of data kept in memory: the database's own, or with Redis the whole cloud's. */
  dataChanges: DataChanges
  /** Work leases: a `oncePerCloud` worker runs on one instance at a time. */
  leases: WorkLeases
  /** The Prometheus metrics: modules add what they count (platform/metrics/Metrics.ts). */
  metrics: Metrics
  /** Stop steps that run before the broker closes (in reverse order of adding). */
  stopSteps: StopSteps
  /**
   * Stop steps that run after the broker has closed, in wiring order: each module records or
   * passes on what the broker's last drops caused, before the modules listening to it.
   */
  drainSteps: StopSteps
  /** Stop steps after the drains, in reverse wiring order: what the drains used (mail, outbound HTTP, channels). */
  releaseSteps: StopSteps
  /** Row clean-up tasks the housekeeper runs once per interval, on one instance. */
  housekeeping: Hook<HousekeepingTask>
  /** What the modules run while the cloud runs (workers, deliveries): started once every module is wired, in the order added; stopped on close. */
  running: Runs
}

/** The platform's names, one `true` each (the compiler checks the list against PlatformProvisions). */
export const PLATFORM_NAMES: Names<PlatformProvisions> = {
  config: true,
  db: true,
  clock: true,
  ids: true,
  random: true,
  log: true,
  timers: true,
  broker: true,
  redis: true,
  outbound: true,
  rateLimiter: true,
  authFailures: true,
  idempotency: true,
  dataChanges: true,
  leases: true,
  metrics: true,
  // Added by the device link's provisions.ts (the broker's guard), and with the next two, the test seams.
  devicePolicy: true,
  stopSteps: true,
  drainSteps: true,
  releaseSteps: true,
  housekeeping: true,
  running: true,
  contentOverride: true,
  panelSettings: true,
}

/** What the domain modules provide, by name: each domain adds its own (domains/<name>/provisions.ts). */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging, as the database's DB is.
export interface DomainProvisions {}

export type Provisions = PlatformProvisions & DomainProvisions

/**
 * A domain module, typed by the names it lists: `create` receives exactly its `needs` and
 * returns exactly its `provides`, with the types the providing domains declare
 * (platform/modules.ts wires them).
 */
export function domainModule<const N extends keyof Provisions, const R extends keyof DomainProvisions>(m: {
  name: string
  needs: readonly N[]
  provides: readonly R[]
  create(needs: Pick<Provisions, N>): Pick<DomainProvisions, R> | Promise<Pick<DomainProvisions, R>>
}): Module<Pick<Provisions, N>, Pick<DomainProvisions, R>> {
  return m
}
