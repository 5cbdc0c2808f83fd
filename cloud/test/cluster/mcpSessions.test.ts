// MCP sessions across the instances of one cloud (one database, one Redis): a session
// opened on A continues on B (a real SDK client whose requests alternate between the two,
// as behind a load balancer without stickiness), belongs to its caller on every instance,
// ends everywhere when deleted on one, and the per-caller bound counts the cloud's sessions.
// When Redis does not answer, each instance keeps the sessions it holds.
import { randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { LATEST_PROTOCOL_VERSION, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { redis, toolTest } from '@svc/shared/testing'
import { buildApp, servicesOf } from '../../src/app.js'
import { testConfig } from '../../src/config.js'
import { ManualClock } from '../../src/platform/clock.js'
import type { Database } from '../../src/platform/db/Database.js'
import { eachEngine } from '../db/engines.js'
import { MCP_SESSION_LIMITS } from '../../src/domains/mcp/sessions.js'

interface Cloud {
  a: FastifyInstance
  b: FastifyInstance
  apiKey: string
  workspaceId: string
}

/** Two apps on one database (either engine; the harness closes it) and one Redis, with a fresh key prefix. */
async function twoInstances(t: Test, db: Database, redisUrl: string | null): Promise<Cloud> {
  const config = testConfig({ redisUrl, redisPrefix: `svc-test-${randomUUID()}:` })
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const a = await buildApp(config, { clock, db })
  const b = await buildApp(config, { clock, db })
  t.after(async () => {
    await a.close()
    await b.close()
  })
  const ws = await servicesOf(a).workspaces.create('Shared', 'us')
  const { secret } = await servicesOf(a).apiKeys.createRoot(ws.id, ws.region, 'Owner key', 'all')
  return { a, b, apiKey: secret, workspaceId: ws.id }
}

const ACCEPT = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' }
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'cluster', version: '1' } },
}

function post(app: FastifyInstance, token: string, payload: unknown, headers: Record<string, string> = {}) {
  return app.inject({ method: 'POST', url: '/v1/mcp', headers: { ...ACCEPT, authorization: `Bearer ${token}`, ...headers }, payload: JSON.stringify(payload) })
}

async function open(app: FastifyInstance, token: string): Promise<Record<string, string>> {
  const res = await post(app, token, INITIALIZE)
  if (res.statusCode !== 200) throw new Error(`initialize: ${res.statusCode} ${res.body}`)
  return { 'mcp-session-id': String(res.headers['mcp-session-id']), 'mcp-protocol-version': LATEST_PROTOCOL_VERSION }
}

const ping = (app: FastifyInstance, token: string, session: Record<string, string>) => post(app, token, { jsonrpc: '2.0', id: 7, method: 'ping' }, session)

async function makeKey(c: Cloud): Promise<string> {
  const res = await c.a.inject({
    method: 'POST',
    url: '/v1/api-keys',
    headers: { authorization: `Bearer ${c.apiKey}` },
    payload: { name: 'Other', permissions: ['screen.view'] },
  })
  if (res.statusCode !== 201) throw new Error(`key: ${res.statusCode} ${res.body}`)
  return res.json().data.secret
}

toolTest(t, redis, 'a session opened on A works on B: a real client whose requests alternate between the instances', async (t) =>
  eachEngine(t, 'two instances', async (t, db) => {
    const c = await twoInstances(t, db, process.env.SVC_TEST_REDIS_URL!)
    const bases: string[] = []
    for (const app of [c.a, c.b]) {
      await app.listen({ port: 0, host: '127.0.0.1' })
      bases.push(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`)
    }
    // The "load balancer": request n goes to instance n % 2, whatever the session.
    const served: { instance: 'A' | 'B'; method: string; status: number }[] = []
    let n = 0
    const transport = new StreamableHTTPClientTransport(new URL(`${bases[0]}/v1/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${c.apiKey}` } },
      fetch: async (input, init) => {
        const i = n++ % 2
        const url = new URL(String(input instanceof Request ? input.url : input))
        const res = await fetch(bases[i]! + url.pathname + url.search, init)
        served.push({ instance: i ? 'B' : 'A', method: init?.method ?? 'GET', status: res.status })
        return res
      },
    })
    const client = new Client({ name: 'svc-cluster-test', version: '1.0.0' })
    await client.connect(transport)
    t.after(() => client.close())
    t.equal(served[0]?.instance, 'A', 'initialize went to A')
    const { tools } = await client.listTools()
    t.ok(
      tools.some((x) => x.name === 'getMe'),
      'tools are listed',
    )
    for (let i = 0; i < 4; i++) {
      const me = (await client.callTool({ name: 'getMe', arguments: {} })) as CallToolResult & { structuredContent?: { data: { workspace: { id: string } } } }
      t.notOk(me.isError, `tool call ${i + 1}`)
      t.equal(me.structuredContent?.data.workspace.id, c.workspaceId)
    }
    const posts = served.filter((s) => s.method === 'POST')
    t.ok(
      posts.some((s) => s.instance === 'B'),
      'some of the session requests were served by B',
    )
    t.same(
      posts.filter((s) => s.status >= 400),
      [],
      'none was refused, on either instance',
    )
  }),
)

toolTest(t, redis, 'a session belongs to its caller on every instance, and a DELETE on one ends it on all', async (t) =>
  eachEngine(t, 'two instances', async (t, db) => {
    const c = await twoInstances(t, db, process.env.SVC_TEST_REDIS_URL!)
    const other = await makeKey(c)
    const session = await open(c.a, c.apiKey)
    t.equal((await ping(c.b, c.apiKey, session)).statusCode, 200, 'continued on B')
    t.equal((await ping(c.a, c.apiKey, session)).statusCode, 200, 'and still on A')
    t.equal((await ping(c.b, other, session)).statusCode, 404, "another key finds nothing on B, which holds the session's server now")
    t.equal((await ping(c.b, c.apiKey, { ...session, 'mcp-session-id': randomUUID() })).statusCode, 404, 'an unknown id is 404')

    const del = await c.b.inject({ method: 'DELETE', url: '/v1/mcp', headers: { authorization: `Bearer ${c.apiKey}`, ...session } })
    t.equal(del.statusCode, 200, 'DELETE on B')
    const onA = await ping(c.a, c.apiKey, session)
    t.equal(onA.statusCode, 404, 'A, which still held a copy, answers 404')
    t.equal(onA.json().error.code, -32001)
    t.equal((await ping(c.b, c.apiKey, session)).statusCode, 404, 'and so does B')
  }),
)

toolTest(t, redis, 'the per-caller bound counts the sessions of the whole cloud', async (t) =>
  eachEngine(t, 'two instances', async (t, db) => {
    const c = await twoInstances(t, db, process.env.SVC_TEST_REDIS_URL!)
    const { maxPerCaller } = MCP_SESSION_LIMITS
    const onA: Record<string, string>[] = []
    for (let i = 0; i < maxPerCaller; i++) onA.push(await open(c.a, c.apiKey))
    const onB = await open(c.b, c.apiKey)
    t.equal((await ping(c.a, c.apiKey, onA[0]!)).statusCode, 404, `the ${maxPerCaller + 1}th session, opened on B, ended the oldest one, opened on A`)
    t.equal((await ping(c.b, c.apiKey, onA[0]!)).statusCode, 404, 'on every instance')
    t.equal((await ping(c.b, c.apiKey, onA[1]!)).statusCode, 200, 'the next one lives')
    t.equal((await ping(c.a, c.apiKey, onB)).statusCode, 200, 'as does the new one, on A too')
  }),
)

eachEngine(t, 'without Redis reachable, each instance keeps the sessions it holds', async (t, db) => {
  const c = await twoInstances(t, db, 'redis://127.0.0.1:1')
  const session = await open(c.a, c.apiKey)
  t.equal((await ping(c.a, c.apiKey, session)).statusCode, 200, 'A serves its session')
  t.equal((await ping(c.b, c.apiKey, session)).statusCode, 404, 'B cannot know it: the client starts again there')
})
