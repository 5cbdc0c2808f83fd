// Tenancy sweep for the content library, in the shape of cloud/test/tenancy.test.ts:
// workspace B's all-powerful key gets 404 on every parameterised route for A's item, A's
// item stays, and no list shows B A's ids. CONTENT_FIXTURES is exported so the main
// sweep can include it (`...CONTENT_FIXTURES` in its FIXTURES).
import t from 'tap'
import { CONTENT_FIXTURES } from './tenancyFixtures.js'

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
