// /v1/mcp end to end, with the SDK's own client (Client + StreamableHTTPClientTransport)
// over real HTTP: initialize, tools/list (what a key may use), tool calls that act on a
// real paired screen, another workspace's ids, 401 with the RFC 9728 challenge, the 30 per
// minute limit (counted once against the workspace), OAuth access tokens, idempotency.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import type { AddressInfo } from 'node:net'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { LATEST_PROTOCOL_VERSION, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { Test } from 'tap'
import { makeKey, type Harness } from '../helpers.js'
import { onOneEngine } from '../db/engines.js'
import { pairScreen } from '../screenHelpers.js'
import { InMemoryContentResolver } from '../../src/domains/content/testing/InMemoryContentResolver.js'
import { MCP_OPERATIONS } from '../../src/domains/mcp/tools.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

interface Seen {
  method: string
  status: number
  headers: Headers
}

async function listen(h: Harness): Promise<string> {
  await h.app.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`
}

/** An SDK client connected with `token`; `seen` records every HTTP answer it got. */
async function connect(t: Test, base: string, token: string): Promise<{ client: Client; seen: Seen[] }> {
  const seen: Seen[] = []
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/v1/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    fetch: async (input, init) => {
      const res = await fetch(input, init)
      seen.push({ method: init?.method ?? 'GET', status: res.status, headers: res.headers })
      return res
    },
  })
  const client = new Client({ name: 'svc-test', version: '1.0.0' })
  await client.connect(transport)
  t.after(() => client.close())
  // The client opens the session's event stream right after initialize, without waiting.
  for (const guardEnd = Date.now() + HANG_GUARD_MS; !seen.some((s) => s.method === 'GET') && Date.now() < guardEnd; ) await new Promise((r) => setTimeout(r, 5))
  return { client, seen }
}

type Result = CallToolResult & { structuredContent?: Record<string, unknown> }
const call = async (client: Client, name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as Result
const data = (r: Result): any => (r.structuredContent as { data: unknown }).data

async function oauthToken(h: Harness, key: { id: string; secret: string }): Promise<string> {
  const res = await h.req('POST', '/v1/oauth/token', null, { grant_type: 'client_credentials', client_id: key.id, client_secret: key.secret })
  if (res.statusCode !== 200) throw new Error(`token: ${res.statusCode} ${res.body}`)
  return res.json().access_token
}

// The protocol and what the tools answer, not the SQL: one engine (db/engines.ts onOneEngine).
onOneEngine(t, (t, build) => {
  t.test('initialize, list the tools, and drive a real paired screen through them', async (t) => {
    const h = await build(t, {}, { content: InMemoryContentResolver.permissive() })
    const { apiKey } = await h.workspace()
    const { screenId } = await pairScreen(h, apiKey, 'Lobby')
    const base = await listen(h)
    const { client, seen } = await connect(t, base, apiKey)

    t.equal(client.getServerVersion()?.name, 'signage-control')
    t.ok(client.getServerCapabilities()?.tools, 'the server offers tools')
    t.equal(seen[0]?.headers.get('mcp-session-id')?.length, 36, 'initialize answers a session id')
    t.equal(seen.find((s) => s.method === 'GET')?.status, 200, 'the session event stream opens')

    const { tools } = await client.listTools()
    t.same(tools.map((x) => x.name).sort(), [...MCP_OPERATIONS].sort(), 'an all-powerful key sees every tool')
    const getScreen = tools.find((x) => x.name === 'getScreen')!
    t.same(getScreen.inputSchema.required, ['id'], 'path parameters are required arguments')
    t.equal(tools.find((x) => x.name === 'listScreens')?.annotations?.readOnlyHint, true)

    const listed = await call(client, 'listScreens')
    t.notOk(listed.isError)
    t.same(
      data(listed).map((s: { id: string }) => s.id),
      [screenId],
      'listScreens answers the paired screen',
    )
    t.same(JSON.parse((listed.content[0] as { text: string }).text), listed.structuredContent, 'the text content is the same JSON')
    t.equal(data(await call(client, 'getScreen', { id: screenId })).name, 'Lobby')

    const before = (await h.req('GET', `/v1/screens/${screenId}`, apiKey)).json().data.desiredVersion
    const cast = await call(client, 'createCast', { body: { contentKind: 'media', contentId: 'med_promo', scopeKind: 'screens', screenIds: [screenId] } })
    t.notOk(cast.isError, JSON.stringify(cast.structuredContent))
    const castId = data(cast).id
    t.match(data(cast), { status: 'active', screenCount: 1, contentId: 'med_promo' })
    t.equal((await h.req('GET', `/v1/casts/${castId}`, apiKey)).json().data.status, 'active', 'the cast is real')
    await servicesOf(h.app).desiredPublisher.idle() // the answer comes once the cast is stored; publishing follows
    const afterCast = (await h.req('GET', `/v1/screens/${screenId}`, apiKey)).json().data.desiredVersion
    t.ok(afterCast > before, 'the screen got a new desired state')
    t.match(data(await call(client, 'getScreenTimeline', { id: screenId })).segments[0], { source: 'cast', castId }, 'why the screen plays it: the cast')
    t.equal(data(await call(client, 'clearCast', { id: castId })).status, 'cleared')
    const again = await call(client, 'clearCast', { id: castId })
    t.equal(again.isError, true, 'clearing twice is refused as over HTTP')
    t.match(again.structuredContent, { error: 'already_inactive' })

    const emg = await call(client, 'createEmergency', {
      body: { contentKind: 'media', contentId: 'med_alert', message: 'Evacuate', scopeKind: 'screens', screenIds: [screenId] },
    })
    t.match(data(emg), { status: 'active', message: 'Evacuate' })
    t.match(data(await call(client, 'clearEmergency', { id: data(emg).id })), { status: 'cleared', screensReleased: 1 })

    const job = await call(client, 'sendScreenSerialCommand', { id: screenId, body: { value: 'AA 11 01 01 01 14', encoding: 'hex' } })
    t.notOk(job.isError, JSON.stringify(job.structuredContent))
    const got = data(await call(client, 'getSerialJob', { id: data(job).id }))
    t.match(got, { id: data(job).id, screenId })
    t.equal((await h.req('GET', `/v1/serial-jobs/${got.id}`, apiKey)).json().data.id, got.id)

    t.same(data(await call(client, 'listMedia')), [])

    // Tags and groups: tag the screen, group it by the tag, read the group back, filter the list by tag.
    t.match(data(await call(client, 'bulkTagScreens', { body: { screenIds: [screenId], add: ['Floor:2'] } })), { matched: 1, changed: 1 })
    t.same(data(await call(client, 'listTags')), [{ tag: 'floor:2', count: 1 }])
    t.same(
      data(await call(client, 'listScreens', { tag: ['floor:2'] })).map((s: { id: string }) => s.id),
      [screenId],
      'a repeatable query parameter takes a list',
    )
    t.same(data(await call(client, 'listScreens', { tag: 'nope' })), [])
    const rule = { all: [{ tag: 'floor:2' }] }
    t.match(data(await call(client, 'previewGroups', { body: { rule } })), { count: 1, screens: [{ id: screenId }] })
    t.equal(tools.find((x) => x.name === 'previewGroups')?.annotations?.readOnlyHint, true, 'a preview stores nothing')
    const group = await call(client, 'createGroup', { body: { name: 'Second floor', kind: 'dynamic', rule } })
    t.notOk(group.isError, JSON.stringify(group.structuredContent))
    const groupId = data(group).id
    t.match(data(await call(client, 'getGroup', { id: groupId })), { kind: 'dynamic', memberCount: 1 })
    t.same(
      data(await call(client, 'listGroupMembers', { id: groupId })).map((s: { id: string }) => s.id),
      [screenId],
    )
    t.equal(data(await call(client, 'updateGroup', { id: groupId, body: { name: 'Floor two' } })).name, 'Floor two')
    t.same(
      data(await call(client, 'listGroups')).map((g: { id: string }) => g.id),
      [groupId],
    )
    t.match(await call(client, 'createGroup', { body: { name: 'Loop', kind: 'dynamic', rule: { all: [{ nope: 1 }] } } }), {
      isError: true,
      structuredContent: { error: 'validation_error' },
    })
    t.equal((await h.req('GET', `/v1/groups/${groupId}`, apiKey)).json().data.name, 'Floor two', 'the group is real')
    t.same(data(await call(client, 'listPlaylists')), [])

    const invalid = await call(client, 'createCast', { body: { contentKind: 'nope', contentId: 'x' } })
    t.equal(invalid.isError, true)
    t.match(invalid.structuredContent, { error: 'validation_error', message: /contentKind/ })
    const unknownArg = await call(client, 'getScreen', { id: screenId, zz: 1 })
    t.match(unknownArg, { isError: true, structuredContent: { error: 'validation_error', message: 'zz is not an argument of getScreen.' } })
    await t.rejects(call(client, 'noSuchTool'), /Unknown tool/, 'an unknown tool is a JSON-RPC error')

    // The audit log: each write tool call is recorded as its operation, via mcp; the MCP transport itself and the reads are not.
    const audit = (await h.req('GET', `/v1/audit-log?resourceId=${castId}`, apiKey)).json().data as { action: string; via: string }[]
    t.same(
      audit.map((e) => [e.action, e.via]),
      [
        ['cast.clear', 'mcp'],
        ['cast.clear', 'mcp'],
        ['cast.create', 'mcp'],
      ],
    )
    const all = (await h.req('GET', '/v1/audit-log?limit=500', apiKey)).json().data as { action: string }[]
    t.notOk(
      all.some((e) => e.action.startsWith('mcp.create')),
      'the MCP messages themselves are no entry',
    )
  })

  t.test('a read-only key sees fewer tools and is refused the others; another workspace gets not_found', async (t) => {
    const h = await build(t, {}, { content: InMemoryContentResolver.permissive() })
    const { apiKey } = await h.workspace('A')
    const { apiKey: other } = await h.workspace('B')
    const { screenId } = await pairScreen(h, apiKey, 'A screen')
    const reader = await makeKey(h, apiKey, ['screen.view', 'media.view'])
    const base = await listen(h)

    const { client } = await connect(t, base, reader.secret)
    const names = (await client.listTools()).tools.map((x) => x.name)
    for (const n of ['getMe', 'listScreens', 'getScreen', 'listCasts', 'getSerialJob', 'listMedia', 'listTags', 'listGroups', 'previewGroups'])
      t.ok(names.includes(n), `${n} listed`)
    for (const n of [
      'createCast',
      'clearCast',
      'createEmergency',
      'listEmergencies',
      'sendScreenSerialCommand',
      'listPlaylists',
      'createPlaylist',
      'bulkTagScreens',
      'createGroup',
      'updateGroup',
    ])
      t.notOk(names.includes(n), `${n} not listed`)
    t.ok(names.length < MCP_OPERATIONS.length)
    const refused = await call(client, 'createCast', { body: { contentKind: 'media', contentId: 'med_x', scopeKind: 'screens', screenIds: [screenId] } })
    t.match(refused, { isError: true, structuredContent: { error: 'forbidden', message: 'Missing permission: screen.cast' } })
    t.same((await h.req('GET', '/v1/casts', apiKey)).json().data, [], 'nothing was cast')
    const untagged = await call(client, 'bulkTagScreens', { body: { screenIds: [screenId], add: ['x'] } })
    t.match(untagged, { isError: true, structuredContent: { error: 'forbidden', message: 'Missing permission: screen.edit' } })
    t.same((await h.req('GET', '/v1/tags', apiKey)).json().data, [], 'nothing was tagged')
    t.equal(data(await call(client, 'getScreen', { id: screenId })).id, screenId, 'reads work')

    // A pinned key sees only what its location holds, as over HTTP.
    const node = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Branch' })).json().data.id
    const pinned = await makeKey(h, apiKey, ['screen.view'], node)
    const { client: pc } = await connect(t, base, pinned.secret)
    t.same(data(await call(pc, 'listScreens')), [], 'the root screen is outside the pin')
    t.match(await call(pc, 'getScreen', { id: screenId }), { isError: true, structuredContent: { error: 'not_found' } })

    const { client: bc } = await connect(t, base, other)
    for (const [name, args] of [
      ['getScreen', { id: screenId }],
      ['sendScreenSerialCommand', { id: screenId, body: { value: 'ON' } }],
      ['assignScreen', { id: screenId, body: { contentKind: 'media', contentId: 'med_b' } }],
    ] as const) {
      const r = await call(bc, name, args)
      t.match(r, { isError: true, structuredContent: { error: 'not_found' } }, `${name}: another workspace's screen is not found`)
    }
    t.same(data(await call(bc, 'listScreens')), [], "B's list shows none of A's screens")
    t.equal((await h.req('GET', `/v1/screens/${screenId}/serial-jobs`, apiKey)).json().data.length, 0, 'no job was queued on A')
  })

  t.test('401 with the RFC 9728 challenge; 429 after 30 requests per caller, each counted once against the workspace', async (t) => {
    const h = await build(t, {}, { content: InMemoryContentResolver.permissive() })
    const { apiKey } = await h.workspace()
    const base = await listen(h)
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
    }
    const post = (headers: Record<string, string>) =>
      fetch(`${base}/v1/mcp`, {
        method: 'POST',
        headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...headers },
        body: JSON.stringify(initialize),
      })
    const anonymous = await post({})
    t.equal(anonymous.status, 401)
    t.equal(anonymous.headers.get('www-authenticate'), `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource"`)
    t.match(await anonymous.json(), { error: 'missing_credentials' })
    const wrong = await post({ authorization: 'Bearer ak_us_live_nonsense' })
    t.equal(wrong.status, 401)
    t.equal(wrong.headers.get('www-authenticate'), `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource", error="invalid_token"`)
    const meta = (await (await fetch(`${base}/.well-known/oauth-protected-resource`)).json()) as { resource: string }
    t.equal(meta.resource, base, 'the challenge points at the metadata naming this server')
    await t.rejects(connect(t, base, 'ak_us_live_nonsense'), 'the SDK client cannot connect without a valid credential')

    for (const kind of ['key', 'OAuth token'] as const) {
      const key = await makeKey(h, apiKey, 'all')
      const token = kind === 'key' ? key.secret : await oauthToken(h, key)
      const { client, seen } = await connect(t, base, token)
      let calls = 0
      let refused: unknown = null
      while (calls < 40) {
        try {
          await call(client, 'listScreens')
          calls++
        } catch (e) {
          refused = e
          break
        }
      }
      t.equal(seen.filter((s) => s.status !== 429).length, 30, `${kind}: 30 requests answered (initialize, initialized, stream, ${calls} tool calls)`)
      t.equal(seen.at(-1)?.status, 429, `${kind}: the 31st is refused`)
      t.equal(seen.at(-1)?.headers.get('retry-after'), '60')
      t.match(String(refused), /rate_limited/)
      const ws = seen.filter((s) => s.headers.has('ratelimit-remaining')).map((s) => Number(s.headers.get('ratelimit-remaining')))
      t.same(
        ws.slice(1).map((r, i) => ws[i]! - r),
        ws.slice(1).map(() => 1),
        `${kind}: each MCP request, tool call included, takes exactly one from the workspace limit`,
      )
    }
    // The key's own HTTP traffic is not limited by its MCP use.
    t.equal((await h.req('GET', '/v1/me', apiKey)).statusCode, 200)
    // A new window lets the caller in again.
    h.clock.advance(60_000)
    const key = await makeKey(h, apiKey, ['screen.view'])
    const { client } = await connect(t, base, key.secret)
    t.notOk((await call(client, 'listScreens')).isError)
  })

  t.test('an OAuth token acts as its key: same tools, same session owner, dies with the key', async (t) => {
    const h = await build(t, {}, { content: InMemoryContentResolver.permissive() })
    const { apiKey } = await h.workspace()
    const { screenId } = await pairScreen(h, apiKey)
    const key = await makeKey(h, apiKey, ['screen.view', 'screen.cast'])
    const token = await oauthToken(h, key)
    const base = await listen(h)
    const { client } = await connect(t, base, token)
    t.same(
      (await client.listTools()).tools.map((x) => x.name).sort(),
      [
        'clearCast',
        'createCast',
        'getAgentLog',
        'getCast',
        'getGroup',
        'getMe',
        'getScreen',
        'getScreenPanel',
        'getScreenTimeline',
        'getScreenshot',
        'getSerialJob',
        'listCasts',
        'listGroupMembers',
        'listGroups',
        'listScreenAgentLogs',
        'listScreenSerialJobs',
        'listScreens',
        'listSerialPresets',
        'listSerialTemplates',
        'listTags',
        'previewGroups',
        'previewTimeline',
        'requestScreenshot',
        'summarizePlayLog',
      ].sort(),
    )
    const cast = await call(client, 'createCast', { body: { contentKind: 'media', contentId: 'med_a', scopeKind: 'screens', screenIds: [screenId] } })
    t.match(data(cast), { status: 'active' })
    t.equal((await h.req('GET', '/v1/casts', apiKey)).json().data[0].id, data(cast).id)
    t.equal((await h.req('POST', `/v1/api-keys/${key.id}/revoke`, apiKey, {})).statusCode, 200)
    await t.rejects(call(client, 'listScreens'), /invalid_credentials/, 'a revoked key takes its token and the session with it')
  })

  t.test('an Idempotency-Key passes through: a repeat answers the first result, over MCP and HTTP alike', async (t) => {
    const h = await build(t)
    const { apiKey } = await h.workspace()
    const base = await listen(h)
    const { client } = await connect(t, base, apiKey)
    const tool = (await client.listTools()).tools.find((x) => x.name === 'createPlaylist')!
    t.ok(tool.inputSchema.properties?.idempotencyKey, 'the idempotent create takes idempotencyKey')
    t.notOk((await client.listTools()).tools.find((x) => x.name === 'createCast')!.inputSchema.properties?.idempotencyKey, 'others do not')
    const first = await call(client, 'createPlaylist', { idempotencyKey: 'mcp-1', body: { name: 'Morning' } })
    t.notOk(first.isError, JSON.stringify(first.structuredContent))
    const second = await call(client, 'createPlaylist', { idempotencyKey: 'mcp-1', body: { name: 'Morning' } })
    t.equal(data(second).id, data(first).id, 'the repeat answers the same playlist')
    const viaHttp = await h.req('POST', '/v1/playlists', apiKey, { name: 'Morning' }, { 'idempotency-key': 'mcp-1' })
    t.equal(viaHttp.json().data.id, data(first).id, 'the key space is the route’s own')
    t.equal(viaHttp.headers['idempotent-replayed'], 'true')
    const changed = await call(client, 'createPlaylist', { idempotencyKey: 'mcp-1', body: { name: 'Evening' } })
    t.match(changed, { isError: true, structuredContent: { error: 'validation_error' } }, 'the same key with another body is refused')
    t.equal((await h.req('GET', '/v1/playlists', apiKey)).json().data.length, 1, 'one playlist')
  })
})
