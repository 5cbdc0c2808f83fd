// Tenancy sweep for the content library, in the shape of cloud/test/tenancy.test.ts:
// workspace B's all-powerful key gets 404 on every parameterised route for A's item, A's
// item stays, and no list shows B A's ids. CONTENT_FIXTURES is exported so the main
// sweep can include it (`...CONTENT_FIXTURES` in its FIXTURES).
import t from 'tap'
import type { Harness } from '../helpers.js'
import { form, PNG_1x1 } from './fixtures.js'

interface Fixture {
  create(h: Harness, a: string): Promise<string>
  body?: unknown
  exists(h: Harness, a: string, id: string): Promise<boolean>
}

const getOk = (path: string) => async (h: Harness, a: string, id: string) => (await h.req('GET', path.replace(':id', id), a)).statusCode === 200
const BODY = { name: 'renamed', nodeId: 'node_x', reason: 'x' }

const generic = (path: string, extra: Record<string, unknown> = {}): Fixture => ({
  create: async (h, a) => {
    const res = await h.req('POST', `/v1/${path}`, a, { name: `A ${path}`, ...extra })
    if (res.statusCode !== 201) throw new Error(`${path}: ${res.statusCode} ${res.body}`)
    return res.json().data.id
  },
  body: BODY,
  exists: getOk(`/v1/${path}/:id`),
})

export const CONTENT_FIXTURES: Record<string, Fixture> = {
  '/v1/media/:id': {
    create: async (h, a) => {
      const f = form({ file: { filename: 'a.png', data: PNG_1x1 } })
      return (await h.app.inject({ method: 'POST', url: '/v1/media/upload', headers: { authorization: `Bearer ${a}`, ...f.headers }, payload: f.payload })).json().data.id
    },
    body: BODY,
    exists: getOk('/v1/media/:id'),
  },
  '/v1/media/upload/multipart/:id': {
    create: async (h, a) => (await h.req('POST', '/v1/media/upload/multipart/initiate', a, { name: 'big' })).json().data.id,
    body: BODY,
    exists: getOk('/v1/media/upload/multipart/:id'),
  },
  '/v1/media-folders/:id': generic('media-folders'),
  '/v1/playlists/:id': generic('playlists'),
  '/v1/schedules/:id': generic('schedules'),
  '/v1/creatives/:id': generic('creatives'),
  '/v1/layouts/:id': generic('layouts'),
  '/v1/banners/:id': generic('banners', { text: 'hello' }),
  '/v1/signage-templates/:id': generic('signage-templates'),
  '/v1/app-instances/:id': generic('app-instances', { appKey: 'clock' }),
  '/v1/celebration-entries/:id': generic('celebration-entries', { person: 'Ada', date: '2026-01-02' }),
}

const CONTENT_PREFIXES = Object.keys(CONTENT_FIXTURES).map((k) => k.replace('/:id', '/'))

t.test('another workspace answers 404 on every content route with a path parameter', async (t) => {
  const { buildMedia } = await import('./fixtures.js')
  const h = await buildMedia(t)
  const { apiKey: a } = await h.workspace('A')
  const { apiKey: b } = await h.workspace('B')
  const routes = h.app.routeCatalog.filter((r) => r.url.includes('/:') && CONTENT_PREFIXES.some((p) => r.url.startsWith(p)))
  t.ok(routes.length >= 60, `${routes.length} content routes swept`)
  const uncovered: string[] = []
  for (const r of routes) {
    const key = Object.keys(CONTENT_FIXTURES).find((k) => r.url === k || r.url.startsWith(k + '/'))
    if (!key) {
      uncovered.push(`${r.method} ${r.url}`)
      continue
    }
    const f = CONTENT_FIXTURES[key]!
    const id = await f.create(h, a)
    const url = r.url.replace(':id', id)
    const res = await h.req(r.method, url, b, r.method === 'GET' || r.method === 'DELETE' ? undefined : (f.body ?? {}))
    t.equal(res.statusCode, 404, `${r.method} ${r.url}`)
    t.equal(res.json().error, 'not_found', `${r.method} ${r.url}`)
    t.ok(await f.exists(h, a, id), `${r.method} ${r.url}: A's resource untouched`)
  }
  t.same(uncovered, [], 'every parameterised content route has a fixture')
})

t.test("content lists never show another workspace's items", async (t) => {
  const { buildMedia } = await import('./fixtures.js')
  const h = await buildMedia(t)
  const { apiKey: a } = await h.workspace('A')
  const { apiKey: b } = await h.workspace('B')
  const ids: string[] = []
  for (const f of Object.values(CONTENT_FIXTURES)) ids.push(await f.create(h, a))
  const lists = h.app.routeCatalog.filter((r) => r.method === 'GET' && !r.url.includes('/:') && r.auth === 'bearer')
  for (const r of lists) {
    const res = await h.req('GET', r.url, b)
    t.ok(res.statusCode < 500, `${r.url} answers`)
    for (const id of ids) t.notOk(res.body.includes(id), `${r.url} does not leak ${id}`)
  }
})
