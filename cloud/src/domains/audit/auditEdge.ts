// The audit log's recording at the HTTP edge: every write that reaches a route (any method
// but GET, HEAD and OPTIONS, under /v1 and /scim) leaves one entry, whatever route it is and
// whichever way it came (the API, the console's cookie, an MCP tool call run as an inner
// request, a device's credential). No route records its own writes; a route opts out only by
// `config.audit`: `false` for a POST that changes nothing (previews, the MCP transport whose
// tool calls are recorded as their own operations), `'self'` where the service records
// (sign-ins: AuditTrail.recordSignIn).
//
// What changed is read through the route's own GET: the resource's representation before
// the write (the GET of the written URL, or of the URL up to its first id) with the caller's
// credential, and after it (the write's answer when it is that resource, otherwise the same
// GET again). The entry holds the field-level differences, secrets masked (changes.ts).
// A create's answer is its after; a delete's after is nothing.
import { actingFor } from './actingFor.js'
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import type { Principal } from '../../platform/http/Principal.js'
import { dryRunOf, innerOriginOf, INNER_REQUEST_HEADER, openInnerRequest } from '../../platform/http/innerRequests.js'
import type { AuditTrail } from './AuditTrail.js'
import { diff, sent } from './changes.js'
import type { AuditActor, AuditOutcome, AuditRecord, AuditVia } from './types.js'

const READS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** What the edge knows of a write route, worked out once per route from its URL. */
export interface WritePlan {
  /** Resource kind: the first path segment, singular (`/v1/playlists/:id` → `playlist`). */
  kind: string
  /** `playlist.create`, `playlist.update`, `cast.clear`, `playlist.shares.delete`… */
  action: string
  /** The path parameter naming the resource (the first one), or null (a create: the answer's `data.id`). */
  idParam: string | null
  /** A create: no before; the answer is the after. */
  create: boolean
  /** The GET route reading the resource (a URL template), or null when there is none. */
  readUrl: string | null
  /** Authenticated by a device's credential, or a device's own route (pairing's registration). */
  device: boolean
}

/** `playlists` → `playlist`, `celebration-entries` → `celebration-entry`, `media` → `media`. */
export function singular(s: string): string {
  if (s.endsWith('ies')) return `${s.slice(0, -3)}y`
  if (s.endsWith('s') && !s.endsWith('ss')) return s.slice(0, -1)
  return s
}

/** A URL template's segments after its API prefix (`/v1/playlists/:id` → `playlists`, `:id`). */
function segmentsOf(url: string): string[] {
  return url
    .replace(/^\/(v1|scim\/v2)\//, '')
    .split('/')
    .filter(Boolean)
}

/** A create: a POST to a collection itself (`POST /v1/playlists`); its answer is the resource, with nothing before it. */
function isCreate(method: string, url: string): boolean {
  return method === 'POST' && segmentsOf(url).length === 1
}

/** Whether the edge records the writes of a route at all: under /v1 and /scim, unless the route opts out. */
function recordedRoute(url: string, config: unknown): boolean {
  const audit = (config as { audit?: false | 'self' } | undefined)?.audit
  return (url.startsWith('/v1/') || url.startsWith('/scim/')) && audit !== false && audit !== 'self'
}

/** The kind, action and id parameter of a write route, from its method and URL template. */
export function planOf(method: string, url: string, hasGet: (url: string) => boolean, device: boolean): WritePlan {
  const segs = segmentsOf(url)
  const kind = singular(segs[0] ?? 'root').toLowerCase()
  const firstParam = segs.findIndex((s) => s.startsWith(':'))
  const idParam = firstParam > 0 ? segs[firstParam]!.slice(1) : null
  const words = segs.slice(1).filter((s) => !s.startsWith(':'))
  const lastIsParam = segs.length > 0 && segs[segs.length - 1]!.startsWith(':')
  const verb = method === 'DELETE' ? 'delete' : method === 'POST' ? 'create' : 'update'
  // POST to a word (`/casts/:id/clear`) is that word; other methods add theirs.
  const tail = method === 'POST' && words.length > 0 && !lastIsParam ? words : [...words, verb]
  const action = [kind, ...tail].join('.')
  const create = isCreate(method, url)
  const prefix = url.startsWith('/scim/') ? '/scim/v2/' : '/v1/'
  let readUrl: string | null = null
  if (hasGet(url)) readUrl = url
  else if (idParam !== null) {
    const upTo = `${prefix}${segs.slice(0, firstParam + 1).join('/')}`
    if (hasGet(upTo)) readUrl = upTo
  }
  return { kind, action, idParam, create, readUrl: create ? null : readUrl, device }
}

function fill(template: string, params: Record<string, string>): string {
  return template.replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) => encodeURIComponent(params[name] ?? ''))
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** The resource an answer carries: `data` of the API's envelope, or the whole body of a SCIM answer. */
function dataOf(payload: unknown, scim = false): unknown {
  if (typeof payload !== 'string' || payload.length === 0 || payload[0] !== '{' || payload.length > 1_000_000) return undefined
  try {
    const v = JSON.parse(payload) as unknown
    return isObject(v) ? (scim ? v : v.data) : undefined
  } catch {
    return undefined
  }
}

function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null
}

function actorOf(p: Principal): AuditActor {
  if (p.actor.kind === 'key') return { kind: 'apiKey', id: p.actor.id, name: p.actor.name }
  return { kind: 'user', id: p.actor.id, name: p.actor.name ?? p.actor.email }
}

function outcomeOf(status: number): AuditOutcome {
  if (status < 400) return 'success'
  return status === 401 || status === 403 ? 'denied' : 'failed'
}

/** The screen id of an HTTP Basic device credential (`screenId:deviceSecret`), unchecked. */
function basicUser(header: string | undefined): string | null {
  const m = /^Basic\s+(\S+)$/i.exec(header ?? '')
  if (!m) return null
  const text = Buffer.from(m[1]!, 'base64').toString('utf8')
  const i = text.indexOf(':')
  return i > 0 ? text.slice(0, i) : null
}

interface Captured {
  before: unknown
}

export interface AuditEdgeDeps {
  audit: AuditTrail
  /** The workspace of the screen a device credential names (asked once the device's request succeeded). */
  deviceOrigin(screenId: string): Promise<{ workspaceId: string; name: string; nodeId: string | null } | null>
}

export function installAuditEdge(app: FastifyInstance, d: AuditEdgeDeps): void {
  if (!d.audit.enabled) return
  const plans = new Map<string, WritePlan | null>()
  const captured = new WeakMap<FastifyRequest, Captured>()
  const hasGet = (url: string) => app.hasRoute({ method: 'GET', url })

  function planFor(req: FastifyRequest): WritePlan | null {
    if (READS.has(req.method)) return null
    const url = req.routeOptions.url
    if (!url) return null
    const key = `${req.method} ${url}`
    let plan = plans.get(key)
    if (plan === undefined) {
      // Only routes whose writes are recorded carry the hooks that ask (onRoute, below).
      const cfg = req.routeOptions.config as { auth?: string }
      const schema = req.routeOptions.schema as { security?: Record<string, unknown>[]; tags?: string[] } | undefined
      const device = cfg.auth === 'none' && (!!schema?.security?.some((s) => 'deviceCredential' in s) || !!schema?.tags?.includes('devices'))
      plan = planOf(req.method, url, hasGet, device)
      plans.set(key, plan)
    }
    return plan
  }

  /** The resource as the caller reads it through the route's own GET, or null (unreadable, gone). */
  async function read(req: FastifyRequest, template: string): Promise<unknown> {
    const inner = openInnerRequest()
    try {
      const headers: Record<string, string> = { [INNER_REQUEST_HEADER]: inner.ticket }
      if (req.headers.authorization) headers.authorization = req.headers.authorization
      if (req.headers.cookie) headers.cookie = req.headers.cookie
      const res = await app.inject({ method: 'GET', url: fill(template, req.params as Record<string, string>), headers, remoteAddress: req.ip })
      if (res.statusCode !== 200) return null
      const data = dataOf(res.body, template.startsWith('/scim/'))
      return data === undefined ? null : data
    } finally {
      inner.close()
    }
  }

  function capture(req: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
    const plan = planFor(req)
    if (!plan || plan.create || !plan.readUrl || !req.principal || dryRunOf(req)) return done()
    read(req, plan.readUrl).then(
      (before) => {
        captured.set(req, { before })
        done()
      },
      (err: unknown) => {
        req.log.error({ err }, 'audit: the resource could not be read before the write')
        done()
      },
    )
  }

  async function record(req: FastifyRequest, reply: FastifyReply, plan: WritePlan, payload: unknown): Promise<void> {
    const status = reply.statusCode
    const outcome = outcomeOf(status)
    const params = req.params as Record<string, string>
    const data = dataOf(payload, !!req.routeOptions.url?.startsWith('/scim/'))
    let workspaceId: string | null = null
    let actor: AuditActor
    let via: AuditVia
    let nodeId: string | null = null
    const p = req.principal
    if (p) {
      workspaceId = p.workspaceId
      actor = actorOf(p)
      nodeId = p.nodeId
      const origin = innerOriginOf(req)
      if (origin === 'mcp') via = 'mcp'
      else if (req.routeOptions.url?.startsWith('/scim/')) via = 'scim'
      else if (!req.headers.authorization && req.headers.cookie) via = 'console'
      else via = 'api'
    } else if (plan.device) {
      via = 'device'
      const screenId = basicUser(req.headers.authorization)
      const origin = screenId && outcome === 'success' ? await d.deviceOrigin(screenId) : null
      if (origin) {
        workspaceId = origin.workspaceId
        nodeId = origin.nodeId
        actor = { kind: 'device', id: screenId, name: origin.name }
      } else actor = { kind: 'device', id: null, name: null }
    } else {
      const as = actingFor(req)
      workspaceId = as?.workspaceId ?? null
      actor = as?.actor ?? { kind: 'anonymous', id: null, name: null }
      via = req.routeOptions.url?.startsWith('/scim/') ? 'scim' : 'api'
    }
    // Without a workspace only what succeeded is kept (the cloud's own chain): refused
    // anonymous requests are the auth-failure guard's business, not an entry each.
    if (!workspaceId && outcome !== 'success') return
    const resourceId = plan.idParam ? (params[plan.idParam] ?? null) : isObject(data) ? str(data.id) : null
    let before: unknown = null
    let after: unknown = null
    let known = false
    if (outcome === 'success') {
      before = captured.get(req)?.before ?? null
      if (plan.create) {
        after = data ?? null
        known = after !== null
      } else if (req.method === 'DELETE' && plan.readUrl === req.routeOptions.url) {
        known = before !== null
      } else if (isObject(data) && resourceId !== null && data.id === resourceId) {
        after = data
        known = true
      } else if (plan.readUrl && p) {
        after = await read(req, plan.readUrl)
        known = before !== null || after !== null
      }
    }
    const shown = (isObject(after) ? after : null) ?? (isObject(before) ? before : null)
    let changes = known ? diff(before, after) : []
    if (outcome === 'success' && changes.length === 0) changes = sent(req.body)
    const entry: AuditRecord = {
      workspaceId,
      actor,
      via,
      action: plan.action,
      resource: {
        kind: plan.kind,
        id: resourceId,
        name: shown ? (str(shown.name) ?? str(shown.title) ?? str(shown.email)) : null,
      },
      nodeId: (shown && str(shown.nodeId)) ?? nodeId,
      changes,
      requestId: req.id,
      ip: req.ip,
      outcome,
    }
    await d.audit.record(entry)
  }

  function recordOnSend(req: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, payload?: unknown) => void): void {
    const plan = planFor(req)
    // A dry run writes nothing; a replayed idempotent answer changed nothing again.
    if (!plan || dryRunOf(req) || reply.getHeader('idempotent-replayed')) {
      return done(null, payload)
    }
    record(req, reply, plan, payload).then(
      () => done(null, payload),
      (err: unknown) => {
        // The write has happened: its answer goes out; the missing entry is logged as an error.
        req.log.error({ err, action: plan.action }, 'audit: entry not recorded')
        done(null, payload)
      },
    )
  }

  // Hooks of the routes whose writes are recorded only: a read, or a route that opts out,
  // runs none of them, and a create (nothing before it to read) no preHandler.
  // First among each route's own, as app-wide hooks ran before them (the idempotency
  // hooks, added later, come after: a replayed answer is marked before it is seen here).
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    if (methods.every((m) => READS.has(m)) || !recordedRoute(route.url, route.config)) return
    if (!methods.every((m) => isCreate(m, route.url))) {
      const pre = route.preHandler ? (Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler]) : []
      route.preHandler = [capture as never, ...pre]
    }
    const send = route.onSend ? (Array.isArray(route.onSend) ? route.onSend : [route.onSend]) : []
    route.onSend = [recordOnSend as never, ...send]
  })
}
