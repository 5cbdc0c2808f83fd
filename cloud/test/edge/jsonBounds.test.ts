// Free-form JSON fields are bounded at the edge: a body nested thousands of levels deep or
// a huge open object answers 422 validation_error naming the field, on POST and PATCH,
// and nothing is written.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { build, tableNames, type Harness } from '../helpers.js'

const deep = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`

const CASES = [
  { url: '/v1/creatives', table: 'content_items', base: { name: 'Promo' }, field: 'design' },
  { url: '/v1/signage-templates', table: 'content_items', base: { name: 'Menu' }, field: 'definition' },
  { url: '/v1/app-instances', table: 'content_items', base: { name: 'Clock', appKey: 'clock' }, field: 'config' },
  { url: '/v1/alert-rules', table: 'alert_rules', base: { name: 'Offline', config: { codes: ['display-off'] } }, field: 'config' },
] as const

async function send(h: Harness, token: string, method: 'POST' | 'PATCH', url: string, raw: string) {
  return h.app.inject({ method, url, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: raw })
}

// The audit log's rows are the record of each refused request, not its effect: left out.
const AUDIT_TABLES = new Set(['audit_entries', 'audit_chains'])
const countRows = async (h: Harness) => {
  const out: Record<string, number> = {}
  for (const name of await tableNames(h))
    if (!AUDIT_TABLES.has(name)) out[name] = Number((await servicesOf(h.app).db.get<{ n: number | string }>(`SELECT COUNT(*) AS n FROM "${name}"`))!.n)
  return out
}

t.test('5,000 levels of nesting in a free-form field: 422 naming the field, POST and PATCH, nothing written', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  for (const c of CASES) {
    const created = await h.req('POST', c.url, apiKey, c.base)
    t.equal(created.statusCode, 201, `${c.url} ${created.body}`)
    const id = created.json().data.id
    const before = await countRows(h)
    const baseJson = JSON.stringify(c.base).slice(0, -1)
    const nestedField = c.url === '/v1/alert-rules' ? `{"codes":["display-off"],"x":${deep(5000)}}` : deep(5000)
    const post = await send(h, apiKey, 'POST', c.url, `${baseJson},"${c.field}":${nestedField}}`)
    t.equal(post.statusCode, 422, `POST ${c.url}`)
    t.equal(post.json().error, 'validation_error')
    t.match(post.json().message, new RegExp(`^body\\.${c.field} nests deeper than 32 levels`))
    const patch = await send(h, apiKey, 'PATCH', `${c.url}/${id}`, `{"${c.field}":${nestedField}}`)
    t.equal(patch.statusCode, 422, `PATCH ${c.url}`)
    t.match(patch.json().message, new RegExp(`^body\\.${c.field} nests`))
    t.same(await countRows(h), before, `${c.url}: nothing written`)
    t.equal((await h.req('GET', `${c.url}/${id}`, apiKey)).statusCode, 200)
  }
})

t.test('32 levels pass; 33 do not; a huge open object is refused by size', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  const ok = await send(h, apiKey, 'POST', '/v1/creatives', `{"name":"x","design":${deep(32)}}`)
  t.equal(ok.statusCode, 201, ok.body)
  const over = await send(h, apiKey, 'POST', '/v1/creatives', `{"name":"x","design":${deep(33)}}`)
  t.equal(over.statusCode, 422)
  const big = { name: 'x', design: Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`k${i}`, 'v'.repeat(100)])) }
  const res = await h.req('POST', '/v1/creatives', apiKey, big)
  t.equal(res.statusCode, 422)
  t.same(res.json(), { error: 'validation_error', message: 'body.design is larger than 262144 bytes of JSON.' })
  // A deeply nested array body (no free-form field at all) is refused too.
  const arr = await send(h, apiKey, 'POST', '/v1/creatives', '['.repeat(5000) + ']'.repeat(5000))
  t.equal(arr.statusCode, 422)
  t.equal(arr.json().error, 'validation_error')
})
