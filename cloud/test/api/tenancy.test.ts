// Tenancy sweep: for EVERY /v1 route with a path parameter, workspace B's all-powerful key
// gets 404 not_found for workspace A's resource (never 403), and A's resource is untouched;
// every list route shows B none of A's ids. A route added later without a fixture here
// fails this test until it is covered.
import t from 'tap'
import { build, makeKey, type Harness } from '../helpers.js'
import { InMemoryContentResolver } from '../../src/domains/content/testing/InMemoryContentResolver.js'
import { CONTENT_FIXTURES } from '../content/tenancyFixtures.js'
import { HOOKS_FIXTURES } from '../fixtures/hooksTenancy.js'
import { APPROVALS_FIXTURES } from '../fixtures/approvalsTenancy.js'
import { AGENT_UPDATES_FIXTURES } from '../fixtures/agentUpdatesTenancy.js'
import { openApiPath } from '../../src/platform/http/openapi.js'

interface Fixture {
  /** Creates the resource in workspace A and returns its id. */
  create(h: Harness, a: string): Promise<string>
  /** Body to send, so validation cannot answer before the lookup. */
  body?: unknown
  /** Confirms A's resource still exists after B's attempt. */
  exists(h: Harness, a: string, id: string): Promise<boolean>
}

const getOk = (path: string) => async (h: Harness, a: string, id: string) => (await h.req('GET', path.replace(':id', id), a)).statusCode === 200

// Keyed by the route prefix up to and including the resource's `:id`.
const FIXTURES: Record<string, Fixture> = {
  ...CONTENT_FIXTURES,
  ...HOOKS_FIXTURES,
  ...APPROVALS_FIXTURES,
  ...AGENT_UPDATES_FIXTURES,
  '/v1/nodes/:id': {
    create: async (h, a) => (await h.req('POST', '/v1/nodes', a, { name: 'A node' })).json().data.id,
    // `weekly` and `exceptions`: the operating hours' body (each route keeps the fields it takes).
    body: { name: 'renamed', weekly: [], exceptions: [] },
    exists: getOk('/v1/nodes/:id'),
  },
  '/v1/api-keys/:id': {
    create: async (h, a) => (await makeKey(h, a, ['node.view'])).id,
    exists: async (h, a, id) => (await h.req('GET', `/v1/api-keys/${id}`, a)).json().data?.revokedAt === null,
  },
  '/v1/screens/:id': {
    create: async (h, a) => {
      const code = (await h.req('POST', '/v1/devices/register', null, {})).json().data.pairingCode
      return (await h.req('POST', '/v1/screens/pair', a, { code, name: 'A screen' })).json().data.id
    },
    body: { name: 'renamed', weekly: [], exceptions: [] },
    exists: getOk('/v1/screens/:id'),
  },
  '/v1/casts/:id': {
    create: async (h, a) => {
      const code = (await h.req('POST', '/v1/devices/register', null, {})).json().data.pairingCode
      await h.req('POST', '/v1/screens/pair', a, { code, name: 'A cast screen' })
      return (await h.req('POST', '/v1/casts', a, { contentKind: 'media', contentId: 'med_a' })).json().data.id
    },
    exists: async (h, a, id) => (await h.req('GET', `/v1/casts/${id}`, a)).json().data?.status === 'active',
  },
  '/v1/emergencies/:id': {
    create: async (h, a) => {
      const code = (await h.req('POST', '/v1/devices/register', null, {})).json().data.pairingCode
      await h.req('POST', '/v1/screens/pair', a, { code, name: 'A emergency screen' })
      return (await h.req('POST', '/v1/emergencies', a, { contentKind: 'media', contentId: 'med_a' })).json().data.id
    },
    exists: async (h, a, id) => (await h.req('GET', `/v1/emergencies/${id}`, a)).json().data?.status === 'active',
  },
  '/v1/report-subscriptions/:id': {
    create: async (h, a) =>
      (await h.req('POST', '/v1/report-subscriptions', a, { report: 'availability', cadence: 'weekly', recipients: ['ops@example.com'] })).json().data.id,
    exists: getOk('/v1/report-subscriptions/:id'),
  },
  '/v1/groups/:id': {
    create: async (h, a) => (await h.req('POST', '/v1/groups', a, { name: 'A group', kind: 'dynamic', rule: { all: [{ tag: 'a' }] } })).json().data.id,
    body: { name: 'renamed' },
    exists: async (h, a, id) => (await h.req('GET', `/v1/groups/${id}`, a)).json().data?.name === 'A group',
  },
  '/v1/cap-feeds/:id': {
    create: async (h, a) => (await h.req('POST', '/v1/cap-feeds', a, { name: 'A feed', contentKind: 'media', contentId: 'med_a' })).json().data.id,
    // screenId / alertId: the sample routes' bodies.
    body: { name: 'renamed', screenId: 'scr_x', alertId: 'capa_x' },
    exists: async (h, a, id) => (await h.req('GET', `/v1/cap-feeds/${id}`, a)).json().data?.name === 'A feed',
  },
  '/v1/serial-templates/:id': {
    create: async (h, a) => (await h.req('POST', '/v1/serial-templates', a, { name: 'A template', items: [{ name: 'on', value: 'ON' }] })).json().data.id,
    body: { name: 'renamed' },
    exists: getOk('/v1/serial-templates/:id'),
  },
  '/v1/users/:id': {
    create: async (h, a) =>
      (await h.req('POST', '/v1/users', a, { email: `t${Math.random().toString(36).slice(2)}@example.com`, role: 'viewer' })).json().data.id,
    body: { name: 'renamed', role: 'admin' },
    exists: async (h, a, id) => (await h.req('GET', `/v1/users/${id}`, a)).json().data?.role === 'viewer',
  },
  '/v1/serial-jobs/:id': {
    create: async (h, a) => {
      const code = (await h.req('POST', '/v1/devices/register', null, {})).json().data.pairingCode
      const screenId = (await h.req('POST', '/v1/screens/pair', a, { code, name: 'A screen' })).json().data.id
      return (await h.req('POST', `/v1/screens/${screenId}/serial`, a, { value: 'ON' })).json().data.id
    },
    exists: getOk('/v1/serial-jobs/:id'),
  },
  '/v1/screenshots/:id': {
    create: async (h, a) => {
      const code = (await h.req('POST', '/v1/devices/register', null, {})).json().data.pairingCode
      const screenId = (await h.req('POST', '/v1/screens/pair', a, { code, name: 'A screen' })).json().data.id
      return (await h.req('POST', `/v1/screens/${screenId}/screenshot`, a)).json().data.id
    },
    exists: getOk('/v1/screenshots/:id'),
  },
  '/v1/agent-logs/:id': {
    create: async (h, a) => {
      const code = (await h.req('POST', '/v1/devices/register', null, {})).json().data.pairingCode
      const screenId = (await h.req('POST', '/v1/screens/pair', a, { code, name: 'A screen' })).json().data.id
      return (await h.req('POST', `/v1/screens/${screenId}/logs`, a)).json().data.id
    },
    exists: getOk('/v1/agent-logs/:id'),
  },
}

t.test('another workspace answers 404 on every route with a path parameter', async (t) => {
  const h = await build(t, {}, { content: InMemoryContentResolver.permissive() })
  const { apiKey: a } = await h.workspace('A')
  const { apiKey: b } = await h.workspace('B')
  // Auth: none routes carry no workspace credential; each is tested on its own below.
  const routes = h.app.routeCatalog.filter((r) => r.url.includes('/:') && r.auth !== 'none')
  // A fixture body holds the fields of every route under its resource; each route gets the
  // ones its body takes (an unknown field would be refused before the lookup).
  const doc = (await h.req('GET', '/v1/openapi.json', null)).json() as {
    paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { properties?: object } }> } }>>
  }
  const bodyFor = (method: string, url: string, body: unknown) => {
    const props = doc.paths[openApiPath(url)]?.[method.toLowerCase()]?.requestBody?.content['application/json']?.schema.properties ?? {}
    return Object.fromEntries(Object.entries((body ?? {}) as object).filter(([k]) => k in props))
  }
  t.ok(routes.length >= 6, 'the sweep sees the parameterised routes')
  const uncovered: string[] = []
  for (const r of routes) {
    const key = Object.keys(FIXTURES).find((k) => r.url === k || r.url.startsWith(`${k}/`))
    if (!key) {
      uncovered.push(`${r.method} ${r.url}`)
      continue
    }
    const f = FIXTURES[key]!
    const id = await f.create(h, a)
    const url = r.url.replace(':id', id)
    const res = await h.req(r.method, url, b, r.method === 'GET' || r.method === 'DELETE' ? undefined : bodyFor(r.method, r.url, f.body))
    t.equal(res.statusCode, 404, `${r.method} ${r.url}`)
    t.equal(res.json().error, 'not_found', `${r.method} ${r.url}`)
    t.ok(await f.exists(h, a, id), `${r.method} ${r.url}: A's resource untouched`)
  }
  t.same(uncovered, [], 'every parameterised route has a tenancy fixture')
})

t.test("list routes never show another workspace's items", async (t) => {
  const h = await build(t, {}, { content: InMemoryContentResolver.permissive() })
  const { apiKey: a } = await h.workspace('A')
  const { apiKey: b } = await h.workspace('B')
  const ids: string[] = []
  for (const f of Object.values(FIXTURES)) ids.push(await f.create(h, a))
  // The live event stream never ends an answer: its tenancy is checked over a socket (cloud/test/events/eventStream.test.ts).
  const lists = h.app.routeCatalog.filter((r) => r.method === 'GET' && !r.url.includes('/:') && r.auth === 'bearer' && r.url !== '/v1/events/stream')
  t.ok(lists.length >= 3)
  for (const r of lists) {
    const res = await h.req('GET', r.url, b)
    t.ok(res.statusCode < 500, `${r.url} answers`)
    for (const id of ids) t.notOk(res.body.includes(id), `${r.url} does not leak ${id}`)
  }
})

t.test('the Auth: none registration poll answers nothing to a workspace credential', async (t) => {
  const h = await build(t, {}, { content: InMemoryContentResolver.permissive() })
  const { apiKey: a } = await h.workspace('A')
  const { apiKey: b } = await h.workspace('B')
  const reg = (await h.req('POST', '/v1/devices/register', null, {})).json().data
  t.equal((await h.req('POST', '/v1/screens/pair', a, { code: reg.pairingCode, name: 'A screen' })).statusCode, 201)
  for (const token of [b, a]) {
    const res = await h.req('GET', `/v1/devices/register/${reg.registrationId}`, token)
    t.equal(res.statusCode, 401, 'an API key is not the poll secret')
    t.equal(res.json().error, 'invalid_credentials')
    t.notOk(res.body.includes('scr_'), 'no screen id leaks')
  }
  t.equal((await h.req('GET', '/v1/devices/register/reg_unknown', b)).statusCode, 404)
})

t.test("the play-log export (screen ids in the query) answers 404 for another workspace's screen", async (t) => {
  const h = await build(t)
  const { apiKey: a } = await h.workspace('A')
  const { apiKey: b } = await h.workspace('B')
  const screenId = await FIXTURES['/v1/screens/:id']!.create(h, a)
  const own = await FIXTURES['/v1/screens/:id']!.create(h, b)
  const range = 'from=2026-06-01T00:00:00Z&to=2026-06-02T00:00:00Z'
  for (const ids of [screenId, `${own},${screenId}`]) {
    const res = await h.req('GET', `/v1/play-log.csv?${range}&screenIds=${ids}`, b)
    t.equal(res.statusCode, 404, ids)
    t.equal(res.json().error, 'not_found')
  }
  t.equal((await h.req('GET', `/v1/play-log.csv?${range}&screenIds=${screenId}`, a)).statusCode, 200, 'A exports its own screen')
})
