// The cloud's Prometheus metrics: one registry per app (tests build many apps in one
// process), filled by the platform (HTTP, MQTT, workers) and by the modules that need
// `metrics` (screens by status, the outbox, webhook outcomes, desired states published).
// Served by server.ts on its own listener when SVC_METRICS_PORT is set (platform/metrics/listen.ts).
//
// Counts on hot paths are plain numbers the code keeps itself (`n++`); a counter here reads
// them at scrape time, so counting costs a bare increment. Gauges are read at scrape time too.
// Cloud-wide gauges (from the shared database: screens by status, the outbox) are reported
// only by the instance holding the `metrics` work lease, taken by the first instance scraped
// and renewed by each of its scrapes, with `scope="cloud"`; `svc_metrics_cloud_wide` says
// whether this instance is the one. Every other metric is this instance's own.
import { readdir } from 'node:fs/promises'
import { performance } from 'node:perf_hooks'
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import type { WorkLeases } from '../cluster/WorkLeases.js'

/** A metric's value at scrape time: one number, or one per label set. */
export type Samples = number | Iterable<readonly [Record<string, string>, number]>

type Read = () => Samples | Promise<Samples>

/** The lease naming the instance that reports the cloud-wide gauges. */
export const METRICS_LEASE = 'metrics'
/** Held for 3 × this (platform/cluster/WorkLeases.ts): the holder keeps it while scraped at least every 50 s. */
const LEASE_INTERVAL_MS = 20_000
/** The holder renews the lease on a scrape at most this often (a write per scrape otherwise). */
const LEASE_RENEW_MS = 10_000
/** The open file descriptors are counted again in the background when the last count is older than this. */
const FDS_REFRESH_MS = 5_000

interface HttpChild {
  count: { inc(): void }
  duration: { observe(v: number): void }
}

export class Metrics {
  readonly registry = new Registry()
  private cloudWide = false
  private heldLease = false
  /** When this instance last took or renewed the lease (the injected clock's ms), while it holds it. */
  private renewedAt: number | null = null
  private readonly httpCount: Counter<'method' | 'route' | 'status_class'>
  private readonly httpDuration: Histogram<'method' | 'route' | 'status_class'>
  private readonly httpChildren = new Map<string, HttpChild>()

  /**
   * `enabled`: the metrics are served (SVC_METRICS_PORT set); only then are the process
   * defaults collected and requests timed. Disabled, the collectors cost nothing but their registration.
   */
  constructor(
    readonly enabled: boolean,
    private readonly leases: Pick<WorkLeases, 'hold' | 'release'>,
    private readonly clock: { now(): Date } = { now: () => new Date() },
  ) {
    if (enabled) {
      collectDefaultMetrics({ register: this.registry })
      // Two defaults walk every handle or descriptor of the process at each scrape, which at
      // 10,000 connected screens is most of a scrape: the handles by type are dropped (the
      // resources by type, nodejs_active_resources, say the same more cheaply), and the open
      // descriptors are counted off the scrape's path (openFds).
      for (const name of ['nodejs_active_handles', 'nodejs_active_handles_total', 'process_open_fds']) this.registry.removeSingleMetric(name)
      if (process.platform === 'linux') openFds(this.registry)
    }
    const labelNames = ['method', 'route', 'status_class'] as const
    this.httpCount = new Counter({
      name: 'svc_http_requests_total',
      help: 'HTTP requests answered by this instance, by method, route template and status class.',
      labelNames,
      registers: [this.registry],
    })
    this.httpDuration = new Histogram({
      name: 'svc_http_request_duration_seconds',
      help: 'Time to answer an HTTP request on this instance, by method, route template and status class.',
      labelNames,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [this.registry],
    })
    const self = this
    new Gauge({
      name: 'svc_metrics_cloud_wide',
      help: '1 when this instance holds the metrics lease and reports the cloud-wide gauges (scope="cloud"), 0 otherwise.',
      registers: [this.registry],
      collect() {
        this.set(self.cloudWide ? 1 : 0)
      },
    })
  }

  /**
   * One answered request: `route` is the route's template (`/v1/screens/:id`), never the
   * raw URL; undefined (no route matched) counts as `unmatched`.
   */
  http(method: string, route: string | undefined, statusCode: number, ms: number): void {
    const statusClass = `${Math.floor(statusCode / 100)}xx`
    const key = `${method} ${route ?? ''} ${statusClass}`
    let child = this.httpChildren.get(key)
    if (!child) {
      const labels = { method, route: route ?? 'unmatched', status_class: statusClass }
      child = { count: this.httpCount.labels(labels), duration: this.httpDuration.labels(labels) }
      this.httpChildren.set(key, child)
    }
    child.count.inc()
    child.duration.observe(ms / 1000)
  }

  /** A counter of this instance whose count the code keeps (a bare increment), read at scrape time. */
  counter(name: string, help: string, read: () => Samples, labelNames: readonly string[] = []): void {
    new Counter({
      name,
      help,
      labelNames,
      registers: [this.registry],
      collect() {
        this.reset()
        put(read(), (labels, v) => this.inc(labels, v))
      },
    })
  }

  /** A gauge of this instance, read at scrape time. */
  gauge(name: string, help: string, read: Read, labelNames: readonly string[] = []): void {
    new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        const samples = await read()
        this.reset()
        put(samples, (labels, v) => this.set(labels, v))
      },
    })
  }

  /**
   * A gauge of the whole cloud (read from the shared database): reported with
   * `scope="cloud"` by the instance holding the metrics lease only, so a sum over
   * instances does not count it once per instance.
   */
  cloudGauge(name: string, help: string, read: Read, labelNames: readonly string[] = []): void {
    const self = this
    new Gauge({
      name,
      help: `${help} Cloud-wide: reported by one instance (svc_metrics_cloud_wide = 1).`,
      labelNames: [...labelNames, 'scope'],
      registers: [this.registry],
      async collect() {
        const samples = self.cloudWide ? await read() : []
        this.reset()
        put(samples, (labels, v) => this.set({ ...labels, scope: 'cloud' }, v))
      },
    })
  }

  /** The Prometheus text of every metric (taking or renewing the metrics lease first). */
  async scrape(): Promise<string> {
    const now = this.clock.now().getTime()
    // Held and renewed less than LEASE_RENEW_MS ago, it is still ours for at least 50 s more:
    // no write. Otherwise take or renew it.
    if (!(this.cloudWide && this.renewedAt !== null && now - this.renewedAt < LEASE_RENEW_MS && now >= this.renewedAt)) {
      this.cloudWide = await this.leases.hold(METRICS_LEASE, LEASE_INTERVAL_MS).catch(() => false)
      this.renewedAt = this.cloudWide ? now : null
      if (this.cloudWide) this.heldLease = true
    }
    return this.registry.metrics()
  }

  get contentType(): string {
    return this.registry.contentType
  }

  /** Gives the metrics lease back (on stop), so another instance reports the cloud-wide gauges at once. */
  async close(): Promise<void> {
    this.cloudWide = false
    this.renewedAt = null
    if (this.heldLease) await this.leases.release(METRICS_LEASE)
  }
}

function put(samples: Samples, set: (labels: Record<string, string>, v: number) => void): void {
  if (typeof samples === 'number') set({}, samples)
  else for (const [labels, v] of samples) set(labels, v)
}

/**
 * `process_open_fds` as prom-client's default names it, counted off the scrape's path: a
 * scrape answers the last count and, when it is older than FDS_REFRESH_MS, starts another
 * (listing /proc/self/fd, one entry per connected screen, on the thread pool). The first
 * scrape waits for the first count. `process_open_fds_age_seconds` says how old it is.
 */
function openFds(registry: Registry): void {
  let count: number | null = null
  let countedAt = 0
  let counting: Promise<void> | null = null
  const recount = () =>
    (counting ??= readdir('/proc/self/fd')
      // Minus the descriptor the listing itself held.
      .then((fds) => {
        count = fds.length - 1
        countedAt = performance.now()
      })
      .catch(() => undefined)
      .finally(() => {
        counting = null
      }))
  new Gauge({
    name: 'process_open_fds',
    help: 'Number of open file descriptors (counted at most process_open_fds_age_seconds ago).',
    registers: [registry],
    async collect() {
      if (count === null) await recount()
      else if (performance.now() - countedAt > FDS_REFRESH_MS) void recount()
      if (count !== null) this.set(count)
    },
  })
  new Gauge({
    name: 'process_open_fds_age_seconds',
    help: 'How long ago process_open_fds was counted.',
    registers: [registry],
    collect() {
      if (count !== null) this.set((performance.now() - countedAt) / 1000)
    },
  })
}
