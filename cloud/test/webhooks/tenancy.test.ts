// Tenancy sweep for the webhook and alert routes (the same check as cloud/test/tenancy.test.ts
// on main, with this branch's fixtures): workspace B's all-powerful key gets 404 for every
// parameterised route on A's resource, A's resource is untouched, and lists leak nothing.
import t from 'tap'
import { build } from '../helpers.js'
import { HOOKS_FIXTURES } from '../fixtures/hooksTenancy.js'

const MINE = ['/v1/webhooks', '/v1/alert-rules', '/v1/alert-events']

t.test('another workspace answers 404 on every webhook and alert route with a path parameter', async (t) => {
  const h = await build(t)
  const { apiKey: a } = await h.workspace('A')
  const { apiKey: b } = await h.workspace('B')
  const routes = h.app.routeCatalog.filter((r) => r.url.includes('/:') && MINE.some((m) => r.url.startsWith(m + '/')))
  t.equal(routes.length, 9, 'the sweep sees the parameterised routes')
  const uncovered: string[] = []
  for (const r of routes) {
    const key = Object.keys(HOOKS_FIXTURES).find((k) => r.url === k || r.url.startsWith(k + '/'))
    if (!key) {
      uncovered.push(`${r.method} ${r.url}`)
      continue
    }
    const f = HOOKS_FIXTURES[key]!
    const id = await f.create(h, a)
    const res = await h.req(r.method, r.url.replace(':id', id), b, r.method === 'GET' || r.method === 'DELETE' ? undefined : (f.body ?? {}))
    t.equal(res.statusCode, 404, `${r.method} ${r.url}`)
    t.equal(res.json().error, 'not_found', `${r.method} ${r.url}`)
    t.ok(await f.exists(h, a, id), `${r.method} ${r.url}: A's resource untouched`)
  }
  t.same(uncovered, [], 'every parameterised route has a tenancy fixture')
})

t.test("list routes never show another workspace's items", async (t) => {
  const h = await build(t)
  const { apiKey: a } = await h.workspace('A')
  const { apiKey: b } = await h.workspace('B')
  const ids: string[] = []
  for (const f of Object.values(HOOKS_FIXTURES)) ids.push(await f.create(h, a))
  for (const url of ['/v1/webhooks', '/v1/webhooks/deliveries', '/v1/alert-rules', '/v1/alert-events']) {
    const res = await h.req('GET', url, b)
    t.equal(res.statusCode, 200, url)
    for (const id of ids) t.notOk(res.body.includes(id), `${url} does not leak ${id}`)
  }
})
