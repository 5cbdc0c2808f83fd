// /v1/mcp at the edge, through inject: malformed JSON-RPC answers JSON-RPC errors (never a
// 500), sessions belong to their caller, expire when idle (injected clock), are bounded
// per caller, and end on DELETE; the tools are the document's operations, argument by
// argument. The session store's bounds are checked on their own at the end.
import t from 'tap'
import type { Test } from 'tap'
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js'
import { build, makeKey, type Harness } from '../helpers.js'
import { ManualClock } from '../../src/platform/clock.js'
import { mcpStateOf } from '../../src/domains/mcp/mcpRoutes.js'
import { McpSessionStore } from '../../src/domains/mcp/sessions.js'
import { buildTools, MCP_OPERATIONS, toolRequest, type OpenApiDocument } from '../../src/domains/mcp/tools.js'

const ACCEPT = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' }
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'edge', version: '1' } },
}

function post(h: Harness, token: string | null, payload: unknown, headers: Record<string, string> = {}) {
  return h.app.inject({
    method: 'POST',
    url: '/v1/mcp',
    headers: { ...ACCEPT, ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    payload: typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : JSON.stringify(payload),
  })
}

async function open(h: Harness, token: string): Promise<Record<string, string>> {
  const res = await post(h, token, INITIALIZE)
  if (res.statusCode !== 200) throw new Error(`initialize: ${res.statusCode} ${res.body}`)
  const headers = { 'mcp-session-id': String(res.headers['mcp-session-id']), 'mcp-protocol-version': LATEST_PROTOCOL_VERSION }
  await post(h, token, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers)
  return headers
}

const ping = (h: Harness, token: string, session: Record<string, string>) => post(h, token, { jsonrpc: '2.0', id: 7, method: 'ping' }, session)

function rpcError(t: Test, res: { statusCode: number; json(): unknown }, status: number, code: number, what: string) {
  t.equal(res.statusCode, status, `${what}: ${status}`)
  t.match(res.json(), { jsonrpc: '2.0', id: null, error: { code, message: String } }, `${what}: JSON-RPC error ${code}`)
}

t.test('malformed messages answer JSON-RPC errors, and refusals leave no session behind', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  const state = mcpStateOf(h.app)!
  rpcError(t, await post(h, apiKey, '{"jsonrpc": "2.0",'), 400, -32700, 'invalid JSON')
  rpcError(t, await post(h, apiKey, ''), 400, -32700, 'empty body')
  rpcError(t, await post(h, apiKey, Buffer.from([0x7b, 0xff, 0xfe, 0x7d])), 400, -32700, 'not UTF-8')
  rpcError(t, await post(h, apiKey, { jsonrpc: '2.0', id: 2, method: 'tools/list' }), 400, -32000, 'no session, not initialize')
  rpcError(t, await post(h, apiKey, [1, 2]), 400, -32000, 'an array that is no initialize')
  rpcError(t, await post(h, apiKey, INITIALIZE, { accept: 'application/json' }), 406, -32000, 'Accept without text/event-stream')
  rpcError(t, await post(h, apiKey, { ...INITIALIZE, params: { protocolVersion: 7 } }), 400, -32000, 'initialize with bad params')
  t.equal(state.sessions.size, 0, 'no refused initialize opened a session')
  const text = await post(h, apiKey, 'hello', { 'content-type': 'text/plain' })
  t.equal(text.statusCode, 415)
  t.equal(text.json().error, 'unsupported_type', 'a body that is not JSON at all is refused at the edge, in the envelope')

  const session = await open(h, apiKey)
  t.equal(state.sessions.size, 1)
  rpcError(t, await post(h, apiKey, { foo: 1 }, session), 400, -32700, 'not a JSON-RPC message')
  const badCall = await post(h, apiKey, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 42 } }, session)
  t.equal(badCall.statusCode, 200)
  t.match(badCall.json(), { jsonrpc: '2.0', id: 3, error: { code: Number, message: /name/ } }, 'tools/call with a bad name: a JSON-RPC error')
  rpcError(t, await post(h, apiKey, INITIALIZE, session), 400, -32600, 'initialize twice')
  rpcError(
    t,
    await post(h, apiKey, { jsonrpc: '2.0', id: 4, method: 'tools/list' }, { ...session, 'mcp-protocol-version': '1999-01-01' }),
    400,
    -32000,
    'unknown protocol version',
  )
  rpcError(t, await post(h, apiKey, { jsonrpc: '2.0', id: 5, method: 'tools/list' }, { ...session, 'mcp-session-id': 'nope' }), 404, -32001, 'unknown session')
  const unknownMethod = await post(h, apiKey, { jsonrpc: '2.0', id: 6, method: 'resources/list' }, session)
  t.match(unknownMethod.json(), { id: 6, error: { code: -32601 } }, 'a method the server lacks')
  const deep = await post(
    h,
    apiKey,
    { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'getMe', arguments: JSON.parse(`${'{"a":'.repeat(40)}1${'}'.repeat(40)}`) } },
    session,
  )
  t.ok(deep.statusCode < 500, `a deeply nested call answers ${deep.statusCode}`)

  const get = (headers: Record<string, string>) => h.app.inject({ method: 'GET', url: '/v1/mcp', headers: { authorization: `Bearer ${apiKey}`, ...headers } })
  rpcError(t, await get({ accept: 'text/event-stream' }), 400, -32000, 'GET without a session')
  rpcError(t, await get({ accept: 'text/event-stream', 'mcp-session-id': 'nope' }), 404, -32001, 'GET of an unknown session')
  rpcError(t, await get({ accept: 'application/json', ...session }), 406, -32000, 'GET that does not accept events')

  const del = (headers: Record<string, string>) =>
    h.app.inject({ method: 'DELETE', url: '/v1/mcp', headers: { authorization: `Bearer ${apiKey}`, ...headers } })
  rpcError(t, await del({}), 400, -32000, 'DELETE without a session')
  t.equal((await del(session)).statusCode, 200, 'DELETE ends the session')
  t.equal(state.sessions.size, 0)
  rpcError(t, await ping(h, apiKey, session), 404, -32001, 'the ended session')
  rpcError(t, await del(session), 404, -32001, 'DELETE again')
})

t.test('a session belongs to its caller: a key and its tokens, nobody else', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace('A')
  const { apiKey: other } = await h.workspace('B')
  const key = await makeKey(h, apiKey, ['screen.view'])
  const sibling = await makeKey(h, apiKey, ['screen.view'])
  const token = (await h.req('POST', '/v1/oauth/token', null, { grant_type: 'client_credentials', client_id: key.id, client_secret: key.secret })).json()
    .access_token
  const session = await open(h, key.secret)
  t.equal((await ping(h, key.secret, session)).statusCode, 200)
  t.equal((await ping(h, token, session)).statusCode, 200, "the key's OAuth token continues its session")
  rpcError(t, await ping(h, sibling.secret, session), 404, -32001, 'another key of the workspace')
  rpcError(t, await ping(h, other, session), 404, -32001, 'another workspace')
  const anonymous = await ping(h, '', session)
  t.equal(anonymous.statusCode, 401)
  t.match(anonymous.headers['www-authenticate'], /^Bearer resource_metadata="http:\/\/[^"]+\/\.well-known\/oauth-protected-resource"$/)
  t.equal((await ping(h, key.secret, session)).statusCode, 200, 'the owner still has it')
})

t.test('idle sessions expire on the clock; a caller holds at most 10, the least recently used going first', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  const state = mcpStateOf(h.app)!
  const { idleMs, maxPerCaller } = state.sessions.limits
  t.equal(idleMs, 30 * 60_000)
  t.equal(maxPerCaller, 10)

  const kept = await open(h, apiKey)
  const idle = await open(h, apiKey)
  for (let i = 0; i < 2; i++) {
    h.clock.advance(idleMs / 2)
    t.equal((await ping(h, apiKey, kept)).statusCode, 200, 'use keeps a session alive')
  }
  rpcError(t, await ping(h, apiKey, idle), 404, -32001, 'idle for 30 minutes')
  t.equal(state.sessions.size, 1)

  h.clock.advance(60_000) // a fresh rate window
  const many: Record<string, string>[] = []
  for (let i = 0; i < maxPerCaller; i++) many.push(await open(h, apiKey))
  t.equal(state.sessions.size, maxPerCaller)
  rpcError(t, await ping(h, apiKey, kept), 404, -32001, 'the least recently used session made room')
  h.clock.advance(60_000) // a fresh rate window
  for (const s of many) t.equal((await ping(h, apiKey, s)).statusCode, 200)
  const { apiKey: b } = await h.workspace('B')
  await open(h, b)
  t.equal(state.sessions.size, maxPerCaller + 1, "another caller's sessions do not count against this one")
})

t.test('tools are the OpenAPI operations: names, permissions, parameters and bodies as the document has them', async (t) => {
  const h = await build(t)
  const doc = (await h.req('GET', '/v1/openapi.json', null)).json() as OpenApiDocument & {
    paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>>
  }
  const tools = buildTools(doc)
  t.equal(tools.length, MCP_OPERATIONS.length)
  for (const tool of tools) {
    const op = doc.paths[tool.path]![tool.method.toLowerCase()] as Record<string, unknown> & {
      parameters?: { name: string; in: string; description?: string; schema: object }[]
    }
    t.equal(op.operationId, tool.name)
    t.equal(op['x-svc-permission'], tool.permission, `${tool.name}: permission`)
    for (const p of op.parameters ?? []) {
      if (p.in !== 'header')
        t.same(tool.inputSchema.properties[p.name], { ...p.schema, ...(p.description ? { description: p.description } : {}) }, `${tool.name}: ${p.name}`)
    }
    const body = (op.requestBody as { content: Record<string, { schema: Record<string, unknown> }> } | undefined)?.content['application/json']?.schema
    if (body) t.same({ ...tool.inputSchema.properties.body, description: undefined }, { ...body, description: undefined }, `${tool.name}: body as documented`)
    else t.notOk(tool.inputSchema.properties.body, `${tool.name}: no body`)
    t.notOk(JSON.stringify(tool.inputSchema).includes('$ref'), `${tool.name}: the schema stands alone`)
  }
  t.throws(() => buildTools(doc, ['listScreens', 'noSuchOperation']), /no operation noSuchOperation/, 'a name the document lacks fails the build')

  const byName = new Map(tools.map((x) => [x.name, x]))
  t.same(toolRequest(byName.get('getScreen')!, { id: 'scr_1/../x' }), { method: 'GET', url: '/v1/screens/scr_1%2F..%2Fx' }, 'path values are escaped')
  t.same(toolRequest(byName.get('listScreens')!, { limit: 5, cursor: 'a&b' }), { method: 'GET', url: '/v1/screens?limit=5&cursor=a%26b' })
  t.throws(() => toolRequest(byName.get('getScreen')!, {}), /id is required/)
  t.throws(() => toolRequest(byName.get('listScreens')!, { limit: { a: 1 } }), /limit must be/)
  t.throws(() => toolRequest(byName.get('createCast')!, {}), /body is required/)
  t.same(toolRequest(byName.get('createPlaylist')!, { body: { name: 'x' }, idempotencyKey: 'k' }), {
    method: 'POST',
    url: '/v1/playlists',
    body: { name: 'x' },
    idempotencyKey: 'k',
  })
})

t.test('the session store: LRU eviction per caller and overall, no expiry under a running request', async (t) => {
  const clock = new ManualClock('2026-06-01T00:00:00Z')
  const closed: string[] = []
  const item = (name: string) => ({ close: () => void closed.push(name) })
  const store = new McpSessionStore<{ close(): void }>(clock, { idleMs: 1000, maxSessions: 3, maxPerCaller: 2 })
  store.add('a1', 'A', item('a1'))
  store.add('a2', 'A', item('a2'))
  t.ok(store.get('a1', 'A'))
  t.equal(store.get('a1', 'B'), null, "another caller's id finds nothing")
  store.begin('a1')
  store.end('a1')
  store.add('a3', 'A', item('a3'))
  await Promise.resolve()
  await Promise.resolve()
  t.same(closed, ['a2'], "over the caller's limit, its least recently used session closes")
  store.add('b1', 'B', item('b1'))
  store.add('b2', 'B', item('b2'))
  await new Promise((r) => setImmediate(r))
  t.same(closed, ['a2', 'a1'], 'over the overall limit, the least recently used session closes')
  t.equal(store.size, 3)

  store.begin('a3')
  clock.advance(1000)
  store.sweep()
  await new Promise((r) => setImmediate(r))
  t.same(closed.sort(), ['a1', 'a2', 'b1', 'b2'], 'idle sessions expire; one with a request running does not')
  t.ok(store.get('a3', 'A'))
  store.end('a3')
  clock.advance(1000)
  t.equal(store.get('a3', 'A'), null, 'it expires once idle')
  await store.closeAll()
  t.equal(store.size, 0)
})
