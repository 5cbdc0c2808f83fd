// Outbound HTTP that cannot be turned against our own network (SSRF guard), for webhook
// deliveries, alert channels and media import-url. Rules: https only; the address
// actually connected to must be public unicast (private, loopback, link-local, CGNAT,
// multicast, documentation, reserved and IPv4-mapped forms of those are refused); IP
// literals and DNS names alike; checked at connect time, so DNS rebinding between the
// check and the connection cannot slip through. IPv6 forms that embed an IPv4 address
// (IPv4-compatible ::a.b.c.d, NAT64, 6to4, Teredo) are refused whole; IPv4-mapped
// ::ffff:a.b.c.d is judged by its IPv4 address. Host names ending in a dot (`localhost.`)
// are refused: they would dodge the name rules and resolve like the name without it. SVC_WEBHOOK_ALLOW_HOSTS is the test-only
// door for named hosts (and SVC_WEBHOOK_CA_FILE a CA for such test receivers).
import dns from 'node:dns'
import fs from 'node:fs'
import net from 'node:net'
import tls from 'node:tls'
import type { Readable } from 'node:stream'
import ipaddr from 'ipaddr.js'
import { Agent, buildConnector, request, type Dispatcher } from 'undici'

/** A request of post() in flight: when its whole-request limit runs out, and how to end it. */
interface Deadline {
  at: number
  expire(): void
}

export class UnsafeUrlError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'UnsafeUrlError'
  }
}

export function isUnsafeUrlError(e: unknown): e is UnsafeUrlError {
  return e instanceof UnsafeUrlError || (e as { cause?: unknown })?.cause instanceof UnsafeUrlError
}

/** True when `ip` is a public unicast address (IPv4-mapped IPv6 is unwrapped first). */
export function isPublicAddress(ip: string): boolean {
  if (!ipaddr.isValid(ip)) return false
  // ipaddr.js reads `::a.b.c.d` as IPv4-mapped; only `::ffff:a.b.c.d` is that form.
  if (ip.includes(':') && ip.includes('.') && !/^(::|(0{1,4}:){5})ffff:\d/i.test(ip)) return false
  const parsed = ipaddr.parse(ip)
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6
    // ::/8 holds the unspecified, loopback and IPv4-compatible (::a.b.c.d) forms; only the
    // IPv4-mapped form (::ffff:a.b.c.d) inside it is unwrapped and judged as IPv4.
    if (!v6.isIPv4MappedAddress() && v6.match(ipaddr.IPv6.parseCIDR('::/8'))) return false
  }
  const addr = ipaddr.process(ip)
  if (addr.range() !== 'unicast') return false
  if (addr.kind() === 'ipv4') {
    // ipaddr.js calls a few special-purpose blocks `unicast`; refuse them explicitly.
    const special = ['192.0.0.0/24', '198.18.0.0/15', '0.0.0.0/8', '240.0.0.0/4', '100.64.0.0/10', '192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24']
    return !special.some((cidr) => (addr as ipaddr.IPv4).match(ipaddr.IPv4.parseCIDR(cidr)))
  }
  const v6 = addr as ipaddr.IPv6
  const special6 = ['2001:db8::/32', '64:ff9b::/96', '64:ff9b:1::/48', '2001::/23', '2002::/16', 'fc00::/7', 'fe80::/10', '100::/64']
  return !special6.some((cidr) => v6.match(ipaddr.IPv6.parseCIDR(cidr)))
}

export type LookupFn = (
  hostname: string,
  options: dns.LookupOptions,
  callback: (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void,
) => void

export interface OutboundGuardOptions {
  /** Hosts let through the public-address rule (tests only). */
  allowHosts?: string[]
  /** PEM file of an extra CA (tests only). */
  caFile?: string | null
  /** DNS lookup; injected by tests to simulate rebinding. */
  lookup?: LookupFn
  /** Whole-request time limit, ms. */
  timeoutMs?: number
}

export class OutboundGuard {
  private readonly allow: Set<string>
  /** The guarded connection pool: its connect-time checks hold whatever URL it is given. */
  readonly dispatcher: Agent
  private readonly timeoutMs: number
  private readonly connect: buildConnector.connector
  private readonly pools: Agent[] = []
  /** URLs post() has checked (the check is a pure function of the URL string and the allow list). */
  private readonly checked = new Map<string, URL>()
  /** post()'s requests in flight; one sweep timer ends those over the limit instead of a timer each. */
  private readonly deadlines = new Set<Deadline>()
  private sweeper: NodeJS.Timeout | null = null

  constructor(opts: OutboundGuardOptions = {}) {
    this.allow = new Set((opts.allowHosts ?? []).map((h) => h.toLowerCase()))
    this.timeoutMs = opts.timeoutMs ?? 10_000
    const baseLookup: LookupFn = opts.lookup ?? (dns.lookup as unknown as LookupFn)
    const allow = this.allow
    const ca = opts.caFile ? fs.readFileSync(opts.caFile) : undefined
    const guardedLookup: LookupFn = (hostname, options, callback) => {
      if (hostname.endsWith('.')) return callback(new UnsafeUrlError(`${hostname} ends in a dot`), '')
      baseLookup(hostname, { ...options, all: true }, (err, addresses) => {
        if (err) return callback(err, '')
        const list = (Array.isArray(addresses) ? addresses : [{ address: addresses, family: net.isIPv6(addresses) ? 6 : 4 }]) as dns.LookupAddress[]
        const allowed = allow.has(hostname.toLowerCase())
        const bad = list.find((a) => !allowed && !isPublicAddress(a.address))
        if (bad || list.length === 0) return callback(new UnsafeUrlError(`${hostname} resolves to a non-public address (${bad?.address ?? 'none'})`), '')
        if (options.all) return callback(null, list)
        callback(null, list[0]!.address, list[0]!.family)
      })
    }
    // One TLS context for every connection: building one from a CA list per connection costs milliseconds.
    const secureContext = ca ? tls.createSecureContext({ ca: [...tls.rootCertificates, ca.toString()] }) : undefined
    const connector = buildConnector({ lookup: guardedLookup as never, ...(secureContext ? { secureContext } : {}) } as buildConnector.BuildOptions)
    // The last word, whatever the URL held (an IP literal skips the lookup): the address
    // actually connected to must be public, unless the host is on the test allow list.
    const guardedConnect: buildConnector.connector = (options, callback) => {
      const host = options.hostname.replace(/^\[|\]$/g, '')
      const allowed = allow.has(host.toLowerCase())
      if (!allowed && host.endsWith('.')) return callback(new UnsafeUrlError(`${host} ends in a dot`), null)
      if (!allowed && net.isIP(host) && !isPublicAddress(host)) return callback(new UnsafeUrlError(`${host} is not a public address`), null)
      connector(options, (err, socket) => {
        if (err || !socket) return callback(err ?? new Error('no socket'), null)
        const remote = socket.remoteAddress
        if (!allowed && (!remote || !isPublicAddress(remote))) {
          socket.destroy()
          return callback(new UnsafeUrlError(`${host} connected to a non-public address (${remote ?? 'unknown'})`), null)
        }
        callback(null, socket)
      })
    }
    this.connect = guardedConnect
    this.dispatcher = new Agent({
      connect: guardedConnect,
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    })
  }

  /**
   * Another guarded pool: keep-alive connections reused per origin, at most `connections`
   * open to one origin at a time. Every connection it opens goes through the same
   * connect-time checks as the default dispatcher. Closed with the guard.
   */
  pool(connections: number): Agent {
    const agent = new Agent({ connect: this.connect, connections, headersTimeout: this.timeoutMs, bodyTimeout: this.timeoutMs })
    this.pools.push(agent)
    return agent
  }

  /** Static checks of a URL (scheme, literal address). Throws UnsafeUrlError. */
  check(rawUrl: string): URL {
    let url: URL
    try {
      url = new URL(rawUrl)
    } catch {
      throw new UnsafeUrlError('not a valid URL')
    }
    if (url.protocol !== 'https:') throw new UnsafeUrlError('only https URLs are accepted')
    if (url.username || url.password) throw new UnsafeUrlError('URLs with credentials are not accepted')
    const host = url.hostname.replace(/^\[|\]$/g, '')
    if (this.allow.has(host.toLowerCase())) return url
    if (host.endsWith('.')) throw new UnsafeUrlError(`${host} ends in a dot; send the name without it`)
    // An IP literal never reaches the lookup hook: check it here.
    if (net.isIP(host)) {
      if (!isPublicAddress(host)) throw new UnsafeUrlError(`${host} is not a public address`)
    } else if (host === 'localhost' || host.endsWith('.localhost') || !host.includes('.')) {
      throw new UnsafeUrlError(`${host} is not a public host name`)
    }
    return url
  }

  /** POSTs (or GETs) through the guard: no redirects followed, time-limited. */
  async request(
    rawUrl: string,
    opts: {
      method?: 'GET' | 'POST'
      headers?: Record<string, string>
      body?: string | Buffer
      maxBytes?: number
      signal?: AbortSignal
      /** One of this guard's pools (default: the shared dispatcher). */
      dispatcher?: Agent
    } = {},
  ): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
    const url = this.check(rawUrl)
    // Only a pool this guard made carries its connect-time checks.
    if (opts.dispatcher && !this.pools.includes(opts.dispatcher)) throw new Error('not a pool of this guard')
    const signal = opts.signal ?? AbortSignal.timeout(this.timeoutMs)
    const res = await request(url, {
      method: opts.method ?? 'POST',
      headers: opts.headers,
      body: opts.body,
      dispatcher: (opts.dispatcher ?? this.dispatcher) as Dispatcher,
      signal,
    })
    const chunks: Buffer[] = []
    let size = 0
    const max = opts.maxBytes ?? 64 * 1024
    for await (const chunk of res.body) {
      size += (chunk as Buffer).length
      if (size > max) {
        res.body.destroy()
        throw new Error(`response larger than ${max} bytes`)
      }
      chunks.push(chunk as Buffer)
    }
    return { status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }
  }

  /**
   * POSTs through one of this guard's pools with as little work per request as it can (the
   * webhook worker's path, thousands a second): the same URL check as request() (its answer
   * remembered per URL string), the same connect-time checks (the pool's), the same response
   * size limit (64 KiB, counted and dropped: only the status is wanted), and the same
   * whole-request time limit kept by one sweep over the requests in flight instead of an
   * AbortSignal timer per request. Answers the status; rejects with a `TimeoutError` when
   * the limit runs out, and with undici's error when the request fails.
   */
  post(rawUrl: string, opts: { headers: Record<string, string>; body: string; dispatcher: Agent }): Promise<number> {
    let url = this.checked.get(rawUrl)
    if (!url) {
      try {
        url = this.check(rawUrl)
      } catch (e) {
        return Promise.reject(e)
      }
      if (this.checked.size >= 10_000) this.checked.clear()
      this.checked.set(rawUrl, url)
    }
    if (!this.pools.includes(opts.dispatcher)) return Promise.reject(new Error('not a pool of this guard'))
    const max = 64 * 1024
    const timeoutMs = this.timeoutMs
    return new Promise<number>((resolve, reject) => {
      let status = 0
      let size = 0
      let done = false
      let controller: Dispatcher.DispatchController | null = null
      let late: Error | null = null
      const finish = (err: Error | null) => {
        if (done) return
        done = true
        this.deadlines.delete(deadline)
        if (err) reject(err)
        else resolve(status)
      }
      const deadline: Deadline = {
        at: performance.now() + timeoutMs,
        expire: () => {
          const err = new Error(`no answer within ${timeoutMs} ms`)
          err.name = 'TimeoutError'
          if (controller) controller.abort(err)
          else late = err
          finish(err)
        },
      }
      this.track(deadline)
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart: (c) => {
          controller = c
          if (late) c.abort(late)
        },
        onResponseStart: (_c, statusCode) => {
          status = statusCode
        },
        onResponseData: (c, chunk) => {
          size += chunk.length
          if (size > max) {
            const err = new Error(`response larger than ${max} bytes`)
            c.abort(err)
            finish(err)
          }
        },
        onResponseEnd: () => finish(null),
        onResponseError: (_c, err) => finish(err),
      }
      try {
        opts.dispatcher.dispatch({ origin: url.origin, path: url.pathname + url.search, method: 'POST', headers: opts.headers, body: opts.body }, handler)
      } catch (e) {
        finish(e as Error)
      }
    })
  }

  private track(d: Deadline): void {
    this.deadlines.add(d)
    if (this.sweeper) return
    // A quarter of the limit (at most a second): a request ends at most that late.
    this.sweeper = setInterval(
      () => {
        const now = performance.now()
        for (const x of this.deadlines) if (x.at <= now) x.expire()
        if (!this.deadlines.size && this.sweeper) {
          clearInterval(this.sweeper)
          this.sweeper = null
        }
      },
      Math.max(10, Math.min(1000, Math.floor(this.timeoutMs / 4))),
    )
    this.sweeper.unref()
  }

  /**
   * GETs through the guard and hands back the body as a stream, for downloads too large
   * to hold in memory (import-url). The caller must consume or destroy `body`.
   */
  async stream(
    rawUrl: string,
    opts: { headers?: Record<string, string>; signal?: AbortSignal } = {},
  ): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Readable }> {
    const url = this.check(rawUrl)
    const res = await request(url, {
      method: 'GET',
      headers: opts.headers,
      dispatcher: this.dispatcher as Dispatcher,
      signal: opts.signal ?? AbortSignal.timeout(this.timeoutMs),
    })
    return { status: res.statusCode, headers: res.headers, body: res.body }
  }

  async close(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper)
    this.sweeper = null
    await Promise.all([this.dispatcher.close(), ...this.pools.map((p) => p.close())])
  }
}
