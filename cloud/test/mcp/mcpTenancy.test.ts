// Tenancy sweep over the MCP tools: for EVERY tool with a path parameter, workspace B's
// all-powerful key calling it through /v1/mcp with workspace A's id answers a tool error
// `not_found` (never forbidden), and A's resource is untouched; every list tool shows B
// none of A's ids. A tool added later without a fixture here fails until it is covered.
import t from 'tap'
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js'
import type { Harness } from '../helpers.js'
import { onOneEngine } from '../db/engines.js'
import { InMemoryContentResolver } from '../../src/domains/content/testing/InMemoryContentResolver.js'
import { CONTENT_FIXTURES } from '../content/tenancyFixtures.js'
import { HOOKS_FIXTURES, type TenancyFixture } from '../fixtures/hooksTenancy.js'
import { APPROVALS_FIXTURES } from '../fixtures/approvalsTenancy.js'
import { mcpStateOf } from '../../src/domains/mcp/mcpRoutes.js'

const getOk = (path: string) => async (h: Harness, a: string, id: string) => (await h.req('GET', path.replace(':id', id), a)).statusCode === 200
const pair = async (h: Harness, a: string) => {
  const code = (await h.req('POST', '/v1/devices/register', null, {})).json().data.pairingCode
  return (await h.req('POST', '/v1/screens/pair', a, { code, name: 'A screen' })).json().data.id as string
}

// Keyed by the route prefix up to and including the resource's `:id`, like tenancy.test.ts.
const FIXTURES: Record<string, TenancyFixture> = {
  ...CONTENT_FIXTURES,
  ...HOOKS_FIXTURES,
  ...APPROVALS_FIXTURES,
  '/v1/nodes/:id': { create: async (h, a) => (await h.req('POST', '/v1/nodes', a, { name: 'A node' })).json().data.id, exists: getOk('/v1/nodes/:id') },
  '/v1/screens/:id': { create: pair, body: { contentKind: 'media', contentId: 'med_b', value: 'ON' }, exists: getOk('/v1/screens/:id') },
  '/v1/groups/:id': {
    create: async (h, a) => {
      const screen = await pair(h, a)
      return (await h.req('POST', '/v1/groups', a, { name: 'A group', kind: 'static', screenIds: [screen] })).json().data.id
    },
    body: { name: 'renamed' },
    exists: async (h, a, id) => (await h.req('GET', `/v1/groups/${id}`, a)).json().data?.name === 'A group',
  },
  '/v1/casts/:id': {
    create: async (h, a) => {
      await pair(h, a)
      return (await h.req('POST', '/v1/casts', a, { contentKind: 'media', contentId: 'med_a' })).json().data.id
    },
    exists: async (h, a, id) => (await h.req('GET', `/v1/casts/${id}`, a)).json().data?.status === 'active',
  },
  '/v1/emergencies/:id': {
    create: async (h, a) => {
      await pair(h, a)
      return (await h.req('POST', '/v1/emergencies', a, { contentKind: 'media', contentId: 'med_a' })).json().data.id
    },
    exists: async (h, a, id) => (await h.req('GET', `/v1/emergencies/${id}`, a)).json().data?.status === 'active',
  },
  '/v1/serial-jobs/:id': {
    create: async (h, a) => (await h.req('POST', `/v1/screens/${await pair(h, a)}/serial`, a, { value: 'ON' })).json().data.id,
    exists: getOk('/v1/serial-jobs/:id'),
  },
  '/v1/screenshots/:id': {
    create: async (h, a) => (await h.req('POST', `/v1/screens/${await pair(h, a)}/screenshot`, a)).json().data.id,
    exists: getOk('/v1/screenshots/:id'),
  },
  '/v1/agent-logs/:id': {
    create: async (h, a) => (await h.req('POST', `/v1/screens/${await pair(h, a)}/logs`, a)).json().data.id,
    exists: getOk('/v1/agent-logs/:id'),
  },
}

/** A minimal MCP client over inject: one session, tools/list and tools/call. */
async function mcp(h: Harness, token: string) {
  const headers = { authorization: `Bearer ${token}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json' }
  const send = (payload: unknown, extra: Record<string, string> = {}) =>
    h.app.inject({ method: 'POST', url: '/v1/mcp', headers: { ...headers, ...extra }, payload: JSON.stringify(payload) })
  const init = await send({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'sweep', version: '1' } },
  })
  const session = { 'mcp-session-id': String(init.headers['mcp-session-id']), 'mcp-protocol-version': LATEST_PROTOCOL_VERSION }
  let id = 1
  const request = async (method: string, params: unknown) => {
    const res = await send({ jsonrpc: '2.0', id: id++, method, params }, session)
    if (res.statusCode !== 200) throw new Error(`${method}: ${res.statusCode} ${res.body}`)
    return res.json().result
  }
  return {
    tools: async () => (await request('tools/list', {})).tools as { name: string; inputSchema: { properties: Record<string, unknown>; required?: string[] } }[],
    call: async (name: string, args: Record<string, unknown>) =>
      (await request('tools/call', { name, arguments: args })) as {
        isError?: boolean
        structuredContent?: Record<string, unknown>
        content: { text: string }[]
      },
  }
}

// The protocol and what the tools answer, not the SQL: one engine (db/engines.ts onOneEngine).
onOneEngine(t, (t, build) => {
  t.test("another workspace's ids answer not_found through every MCP tool with a path parameter", async (t) => {
    // The MCP limit (30 a minute) is per caller: the sweep moves the clock past it as it goes.
    const h = await build(t, {}, { content: InMemoryContentResolver.permissive() })
    const { apiKey: a } = await h.workspace('A')
    const { apiKey: b } = await h.workspace('B')
    const client = await mcp(h, b)
    const tools = await client.tools()
    const runner = mcpStateOf(h.app)!.runner
    const defs = await runner.all()
    const withId = tools.filter((x) => defs.get(x.name)!.pathParams.length > 0)
    t.ok(withId.length >= 10, `${withId.length} tools take an id`)
    const uncovered: string[] = []
    const created: string[] = []
    for (const tool of withId) {
      const route = defs.get(tool.name)!.path.replace(/\{(\w+)\}/g, ':$1')
      const key = Object.keys(FIXTURES).find((k) => route === k || route.startsWith(`${k}/`))
      if (!key) {
        uncovered.push(tool.name)
        continue
      }
      const f = FIXTURES[key]!
      const resource = await f.create(h, a)
      created.push(resource)
      const props = tool.inputSchema.properties
      const bodyProps = Object.keys(((props.body as { properties?: object } | undefined)?.properties ?? {}) as object)
      const body = Object.fromEntries(Object.entries((f.body ?? {}) as object).filter(([k]) => bodyProps.includes(k)))
      const args: Record<string, unknown> = { id: resource, ...(props.body ? { body } : {}) }
      const r = await client.call(tool.name, args)
      t.equal(r.isError, true, `${tool.name}: refused`)
      t.equal(r.structuredContent?.error, 'not_found', `${tool.name}: not_found, ${r.content[0]?.text}`)
      t.ok(await f.exists(h, a, resource), `${tool.name}: A's resource untouched`)
      h.clock.advance(60_000)
    }
    t.same(uncovered, [], 'every MCP tool with a path parameter has a tenancy fixture')

    const lists = tools.filter((x) => defs.get(x.name)!.pathParams.length === 0 && defs.get(x.name)!.method === 'GET')
    t.ok(lists.length >= 8, `${lists.length} list tools`)
    // Required query arguments (a window) get a value that reaches everything.
    const REQUIRED: Record<string, string> = { from: '2000-01-01T00:00:00Z', to: '2000-03-01T00:00:00Z' }
    for (const tool of lists) {
      const required = (tool.inputSchema.required ?? []) as string[]
      const r = await client.call(tool.name, Object.fromEntries(required.map((k) => [k, REQUIRED[k] ?? ''])))
      t.notOk(r.isError, `${tool.name} answers`)
      for (const id of created) t.notOk(r.content[0]!.text.includes(id), `${tool.name} does not leak ${id}`)
      h.clock.advance(2_000)
    }
  })
})
