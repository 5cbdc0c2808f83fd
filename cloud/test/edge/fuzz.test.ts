// The sweep that keeps the edge fixed: every operation of /v1/openapi.json is sent bodies
// and parameters of the wrong type, missing, oversized, deeply nested, with unknown fields,
// `__proto__` keys and invalid UTF-8. No answer may be a 5xx, every refusal is the
// {error, message} envelope with a snake_case code (or, from the MCP endpoint's protocol
// transport, a JSON-RPC error), and a refused write leaves the
// database exactly as it was. The server and the document agree: every status answered is
// one the document lists for the operation, with a Content-Type it lists for that status; a
// body that is not an object (JSON null included) is refused where the document asks for
// one, and a forbidden key is refused by name. Seeded (FUZZ_SEED=<n> to replay one run; the seed is in
// every failure message) and sized to stay well under a minute.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { build, makeKey, tableNames, type Harness } from '../helpers.js'
import { OutboundGuard, type LookupFn } from '../../src/platform/net/OutboundGuard.js'
import { HANG_GUARD_MS, seededRandom } from '@svc/shared/testing'

const SEED = Number(process.env.FUZZ_SEED ?? 20261123)

type Schema = Record<string, unknown> & {
  type?: string | string[]
  properties?: Record<string, Schema>
  required?: string[]
  items?: Schema
  anyOf?: Schema[]
  oneOf?: Schema[]
  allOf?: Schema[]
  enum?: unknown[]
  const?: unknown
}

/** A plausible value for a schema (first branch of unions, required properties only). */
function sample(s: Schema | undefined, depth = 0): unknown {
  if (!s || depth > 6) return null
  if ('const' in s) return s.const
  if (s.enum) return s.enum[0]
  const branches = s.anyOf ?? s.oneOf
  if (branches) return sample(branches.find((b) => b.type !== 'null') ?? branches[0], depth + 1)
  if (s.allOf) return Object.assign({}, ...s.allOf.map((b) => sample(b, depth + 1) as object))
  const type = Array.isArray(s.type) ? s.type.find((x) => x !== 'null') : s.type
  switch (type) {
    case 'string':
      return typeof s.pattern === 'string' && /\[0-9\]/.test(s.pattern) ? '1' : 'fuzz'
    case 'integer':
    case 'number':
      return typeof s.minimum === 'number' ? s.minimum : 1
    case 'boolean':
      return true
    case 'array':
      return []
    case 'object': {
      const out: Record<string, unknown> = {}
      for (const k of s.required ?? []) out[k] = sample(s.properties?.[k], depth + 1)
      return out
    }
    default:
      return null
  }
}

const WRONG: unknown[] = [null, 0, -1, 1e308, 'x', '', true, [], {}, [1, 'a', null], { a: { b: {} } }, '\u0000\ud800', 'x'.repeat(70_000)]
const DEEP = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`
const DEEP_ARRAY = (n: number) => '['.repeat(n) + ']'.repeat(n)

interface Variant {
  label: string
  payload?: string | Buffer
  contentType?: string
  /** Unknown fields: refusing (422) or ignoring them are both fine. */
  unknownFields?: boolean
  /** A body of another type than the document's top-level one: must be refused. */
  wrongType?: boolean
  /** A forbidden key the refusal must name (`__proto__`, `constructor.prototype`). */
  names?: string
}

function bodyVariants(schema: Schema | undefined, rnd: () => number): Variant[] {
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!
  const base = (sample(schema) ?? {}) as Record<string, unknown>
  const props = Object.keys(schema?.properties ?? {})
  const json = (label: string, v: unknown, extra: Partial<Variant> = {}): Variant => ({
    label,
    payload: JSON.stringify(v),
    contentType: 'application/json',
    ...extra,
  })
  const wrongType = schema?.type === 'object'
  const out: Variant[] = [
    { label: 'no body' },
    json('empty object', {}),
    json(`wrong top-level type`, pick([[], 'text', 42, null, true]), { wrongType }),
    json('JSON null', null, { wrongType }),
    json('plausible body', base),
    json('unknown field', { ...base, zzUnknownField: 1 }, { unknownFields: true }),
    {
      label: '__proto__ key',
      payload: `{"__proto__":{"polluted":true},${JSON.stringify(base).slice(1)}`.replace(/,}$/, '}'),
      contentType: 'application/json',
      names: 'body.__proto__',
    },
    {
      label: 'constructor.prototype key',
      payload: '{"constructor":{"prototype":{"polluted":true}}}',
      contentType: 'application/json',
      names: 'body.constructor.prototype',
    },
    {
      label: 'invalid UTF-8',
      payload: Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]), Buffer.from('"}')]),
      contentType: 'application/json',
    },
    { label: 'deeply nested body', payload: DEEP_ARRAY(5000), contentType: 'application/json' },
    { label: 'malformed JSON', payload: '{"name": "x",', contentType: 'application/json' },
    { label: 'text/plain body', payload: 'hello', contentType: 'text/plain' },
  ]
  for (const p of props) {
    out.push(json(`${p}: wrong type`, { ...base, [p]: pick(WRONG) }))
    out.push({
      label: `${p}: 5,000 levels deep`,
      payload: `{${JSON.stringify(base).slice(1, -1)}${Object.keys(base).length ? ',' : ''}"${p}":${DEEP(5000)}}`,
      contentType: 'application/json',
    })
    if (rnd() < 0.5)
      out.push(
        json(`${p}: oversized`, {
          ...base,
          [p]: pick(['y'.repeat(300_000), Array.from({ length: 20_000 }, () => 'z'), Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i]))]),
        }),
      )
  }
  for (const p of schema?.required ?? []) {
    const missing = { ...base }
    delete missing[p]
    out.push(json(`${p}: missing`, missing))
  }
  return out
}

// No bare `..` (nor `%2E%2E`): a client resolves it away (RFC 3986, WHATWG URL), so that request is another path.
const JUNK_IDS = [
  'x',
  '%ZZ',
  'does_not_exist',
  '0',
  '-1',
  `scr_${'a'.repeat(300)}`,
  '%2F..%2F',
  '%E2%98%83',
  '%00',
  'null',
  "'; DROP TABLE screens; --",
  '%7B%7D',
]
const JUNK_QUERY = ['abc', '-1', '0', '99999999999999999999', 'x'.repeat(5000), '%00', '%ZZ', '[]', '{}', 'true', '1e999']

type Responses = Record<string, { $ref?: string; content?: Record<string, unknown> }>
interface Doc {
  paths: Record<
    string,
    Record<
      string,
      { parameters?: { in: string; name: string; schema?: Schema }[]; requestBody?: { content?: Record<string, { schema?: Schema }> }; responses?: Responses }
    >
  >
  components?: { responses?: Responses }
}

/**
 * What the document says an operation answers with `status`: whether the status is
 * documented (exactly, as `4XX`, or `default`), and the media types it lists for it.
 */
function documentedAnswer(doc: Doc, responses: Responses | undefined, status: number): { documented: boolean; types: string[] | null } {
  const r = responses ?? {}
  let answer = r[String(status)] ?? r[`${String(status)[0]}XX`] ?? r.default
  if (!answer) return { documented: false, types: null }
  if (answer.$ref) answer = doc.components?.responses?.[answer.$ref.split('/').pop()!] ?? answer
  return { documented: true, types: answer.content ? Object.keys(answer.content) : null }
}

/** `type` (a Content-Type without parameters) matches a documented media range (`image/*`, `*\/*`). */
function typeMatches(range: string, type: string): boolean {
  const [rMain, rSub] = range.toLowerCase().split('/')
  const [tMain, tSub] = type.toLowerCase().split('/')
  return (rMain === '*' || rMain === tMain) && (rSub === '*' || rSub === tSub)
}

function isEnvelope(body: unknown): boolean {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return false
  const b = body as Record<string, unknown>
  return typeof b.error === 'string' && /^[a-z][a-z0-9_]*$/.test(b.error) && typeof b.message === 'string'
}

/** The token endpoint answers in RFC 6749's shape, {error, error_description} (docs/api-guide.md). */
function isOAuthError(body: unknown): boolean {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return false
  const b = body as Record<string, unknown>
  return typeof b.error === 'string' && /^[a-z][a-z0-9_]*$/.test(b.error) && typeof b.error_description === 'string'
}

/** The MCP endpoint answers transport failures as JSON-RPC errors, {jsonrpc, id, error: {code, message}}. */
function isJsonRpcError(body: unknown): boolean {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return false
  const b = body as { jsonrpc?: unknown; error?: { code?: unknown; message?: unknown } }
  return b.jsonrpc === '2.0' && Number.isInteger(b.error?.code) && typeof b.error?.message === 'string'
}

/**
 * A cheap "did anything write?": SQLite's count of rows written on its one connection; on
 * PostgreSQL the next transaction id to be handed out (only a writing transaction takes
 * one; another test writing on the same server only costs an extra snapshot).
 */
async function writes(h: Harness): Promise<number> {
  const db = servicesOf(h.app).db
  // Every write request, refused ones too, is recorded in the audit log (one transaction:
  // its entry and its chain's head): those writes are the record of the request, not its effect.
  const entries = Number((await db.get<{ n: unknown }>('SELECT COUNT(*) AS n FROM audit_entries'))!.n)
  const chains = Number((await db.get<{ n: unknown }>('SELECT COUNT(*) AS n FROM audit_chains'))!.n)
  if (db.dialect === 'postgres') return Number((await db.get<{ n: string }>('SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS n'))!.n) - entries
  return (await db.get<{ n: number }>('SELECT total_changes() AS n'))!.n - 2 * entries - chains
}

/** The audit log's own tables: what they hold is the record of each request (cloud/test/audit/). */
const AUDIT_TABLES = new Set(['audit_entries', 'audit_chains'])

/** Every table's rows (sorted, so the order rows come back in does not matter). */
async function snapshot(h: Harness): Promise<string> {
  const db = servicesOf(h.app).db
  const tables = await tableNames(h)
  const parts: string[] = []
  for (const name of tables) {
    if (AUDIT_TABLES.has(name)) continue
    const rows = await db.all<Record<string, unknown>>(`SELECT * FROM "${name}"`)
    // Authentication stamps last_used_at at most once a minute: not a write by the request.
    if (name === 'api_keys') for (const r of rows) r.last_used_at = null
    parts.push(`${name}:${JSON.stringify(rows.map((r) => JSON.stringify(r)).sort())}`)
  }
  return parts.join('\n')
}

t.test(`fuzz sweep over /v1/openapi.json (seed ${SEED})`, async (t) => {
  const rnd = seededRandom(SEED)
  // Outbound calls (webhook tests, import-url) fail at once instead of reaching the network.
  const lookup: LookupFn = (_h, _o, cb) => cb(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }), '')
  const outbound = new OutboundGuard({ lookup, timeoutMs: HANG_GUARD_MS })
  const h = await build(t, { rateLimitPerMinute: 1_000_000 }, { outbound })
  const { apiKey } = await h.workspace()

  // A few real resources, so that paths with ids reach the handlers and PATCH bodies the services.
  const ids: Record<string, string[]> = {}
  const make = async (collection: string, body: unknown) => {
    const res = await h.req('POST', `/v1/${collection}`, apiKey, body)
    if (res.statusCode < 300) (ids[collection] ??= []).push(res.json().data.id)
  }
  await make('nodes', { name: 'East' })
  await make('creatives', { name: 'Promo', design: { layers: [] } })
  await make('signage-templates', { name: 'Menu', definition: { slots: 2 } })
  await make('app-instances', { name: 'Clock', appKey: 'clock' })
  await make('alert-rules', { name: 'Offline', config: { codes: ['display-off'], thresholds: { minutes: 5 } } })
  await make('media-folders', { name: 'Folder' })
  await make('layouts', { name: 'Layout' })
  await make('banners', { name: 'Banner' })
  await make('playlists', { name: 'List' })
  await make('celebration-entries', { name: 'Party', date: '2026-07-01' })
  await make('serial-templates', { name: 'Panel', items: [] })
  await make('webhooks', { url: 'https://hooks.example.com/in', events: [] })
  ids['api-keys'] = [(await makeKey(h, apiKey, ['screen.view'])).id]
  // An MCP session, so that /v1/mcp requests reach the protocol transport, not only the session check.
  const mcpInit = await h.req(
    'POST',
    '/v1/mcp',
    apiKey,
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } } },
    { accept: 'application/json, text/event-stream' },
  )
  const mcpSession = { accept: 'application/json, text/event-stream', 'mcp-session-id': String(mcpInit.headers['mcp-session-id']) }

  // A held change, so the approval routes reach their handlers with a real request id.
  await h.req('PUT', `/v1/nodes/${ids.nodes![0]}/approval-policy`, apiKey, { required: true })
  const requester = (await makeKey(h, apiKey, ['playlist.edit', 'approval.request'])).secret
  const held = await h.req('POST', '/v1/playlists', requester, { name: 'Held', nodeId: ids.nodes![0] })
  ids.approvals = [held.json().data.approval.requestId]

  const doc = (await h.req('GET', '/v1/openapi.json', null)).json() as Doc
  const ops: { method: string; path: string; op: (typeof doc.paths)[string][string] }[] = []
  for (const [path, methods] of Object.entries(doc.paths)) {
    // An event stream's answer never ends over inject: its one input (Last-Event-ID) is tried over a socket in cloud/test/events/eventStream.test.ts.
    for (const [method, op] of Object.entries(methods))
      if (['get', 'post', 'put', 'patch', 'delete'].includes(method) && path !== '/v1/events/stream') ops.push({ method: method.toUpperCase(), path, op })
  }
  t.ok(ops.length > 50, `${ops.length} operations in the document`)
  // Deletions last, so the fixtures live through the rest of the sweep.
  ops.sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'))

  let sent = 0
  let before = await snapshot(h)
  let written = await writes(h)
  const failures: string[] = []
  const started = Date.now()
  for (const { method, path, op } of ops) {
    const collection = path.split('/')[2]!
    const fillPath = () =>
      path.replace(/\{(\w+)\}/g, (_m, name: string) => {
        const real = name === 'id' ? ids[collection] : name === 'nodeId' ? ids.nodes : undefined
        if (real?.length && rnd() < 0.6) return real[Math.floor(rnd() * real.length)]!
        if (name === 'n') return String(Math.floor(rnd() * 20_000) - 5)
        return JUNK_IDS[Math.floor(rnd() * JUNK_IDS.length)]!
      })
    const query = () => {
      const qs = (op.parameters ?? [])
        .filter((p) => p.in === 'query' && rnd() < 0.7)
        .map((p) => `${encodeURIComponent(p.name)}=${JUNK_QUERY[Math.floor(rnd() * JUNK_QUERY.length)]!}`)
      if (rnd() < 0.2) qs.push('zzUnknown=1')
      return qs.length ? `?${qs.join('&')}` : ''
    }
    const hasBody = ['POST', 'PUT', 'PATCH'].includes(method)
    const schema = op.requestBody?.content?.['application/json']?.schema
    const variants: Variant[] = hasBody
      ? bodyVariants(schema, rnd)
      : [
          { label: 'no body' },
          { label: 'stray JSON body', payload: '{"x":1}', contentType: 'application/json' },
          { label: 'stray malformed JSON', payload: '{"x":', contentType: 'application/json' },
        ]
    // Parameters alone, a few times per operation.
    for (let i = 0; i < 3; i++) variants.push({ label: `parameters ${i}` })
    for (const v of variants) {
      const url = `${fillPath()}${v.label.startsWith('parameters') || rnd() < 0.3 ? query() : ''}`
      const res = await h.app.inject({
        method: method as 'GET',
        url,
        headers: {
          authorization: `Bearer ${apiKey}`,
          ...(v.contentType ? { 'content-type': v.contentType } : {}),
          ...(path === '/v1/mcp' && method !== 'GET' && rnd() < 0.7 ? mcpSession : {}), // a GET with a session opens its (endless) stream
        },
        ...(v.payload !== undefined ? { payload: v.payload } : {}),
      })
      sent++
      const where = `seed ${SEED}: ${method} ${url.slice(0, 120)} [${v.label}] → ${res.statusCode} ${res.body.slice(0, 200)}`
      if (res.statusCode >= 500) failures.push(`5xx: ${where}`)
      // What the server answers is what the document says it answers: the status, and the media type of any body.
      const said = documentedAnswer(doc, op.responses, res.statusCode)
      if (!said.documented) failures.push(`status not in the document: ${where}`)
      const type = String(res.headers['content-type'] ?? '')
        .split(';')[0]!
        .trim()
      if (said.types && res.rawPayload.length > 0 && !said.types.some((range) => typeMatches(range, type))) {
        failures.push(`Content-Type ${type} not in the document (${said.types.join(', ')}): ${where}`)
      }
      if (res.statusCode >= 400) {
        let body: unknown = null
        try {
          body = res.json()
        } catch {
          /* not JSON */
        }
        const shaped = path === '/v1/oauth/token' ? isOAuthError(body) : path === '/v1/mcp' ? isEnvelope(body) || isJsonRpcError(body) : isEnvelope(body)
        if (!shaped) failures.push(`not the envelope: ${where}`)
      }
      const nowWritten = await writes(h)
      if (nowWritten !== written) {
        // Something wrote (or wrote and rolled back): compare the whole database.
        const after = await snapshot(h)
        if (res.statusCode >= 400 && after !== before) failures.push(`refused request changed the database: ${where}`)
        before = after
        written = nowWritten
      }
      if (res.statusCode < 300 && v.unknownFields) t.ok(true, `unknown field accepted: ${method} ${path}`)
      if (res.statusCode < 300 && v.wrongType) failures.push(`a body that is not an object was accepted: ${where}`)
      // A forbidden key is refused by name (the MCP endpoint answers JSON-RPC's parse error instead).
      if (v.names && res.statusCode === 400 && path !== '/v1/mcp' && /not valid JSON/.test(res.body))
        failures.push(`a ${v.names} key answered "not valid JSON" instead of naming it: ${where}`)
    }
  }
  const ms = Date.now() - started
  if (process.env.FUZZ_DUMP) (await import('node:fs')).writeFileSync(process.env.FUZZ_DUMP, failures.join('\n'))
  t.equal((Object.prototype as Record<string, unknown>).polluted, undefined, 'no prototype was polluted')
  t.equal((await h.req('GET', '/v1/me', apiKey)).statusCode, 200, 'the owner key still works after the sweep')
  t.same(failures.slice(0, 60), [], `${failures.length} failures in ${sent} requests`)
  t.ok(sent > 1000, `${sent} requests in ${ms} ms`)
  t.comment(`fuzz: ${sent} requests over ${ops.length} operations in ${ms} ms (seed ${SEED})`)
})
