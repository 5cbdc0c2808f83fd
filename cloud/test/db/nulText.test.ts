// A NUL character (U+0000) in a path id or a body field: PostgreSQL text cannot hold one.
// A lookup by such an id answers 404 on both engines, a write holding one answers the
// error envelope (never a 500), and the database stays usable afterwards.
import t from 'tap'
import { eachEngine } from './engines.js'
import { build } from '../helpers.js'

eachEngine(t, 'NUL in ids and fields: 404 for lookups, never a 500', async (t, db) => {
  const h = await build(t, {}, { db })
  const { apiKey } = await h.workspace()
  for (const url of ['/v1/casts/%00', '/v1/nodes/a%00b', '/v1/app-instances/%00', '/v1/banners/%00']) {
    const res = await h.req('GET', url, apiKey)
    t.equal(res.statusCode, 404, `GET ${url}: ${res.body}`)
    t.equal(res.json().error, 'not_found')
  }
  const counted = await h.req('GET', '/v1/nodes?search=a%00b&count=1&limit=10', apiKey)
  t.equal(counted.statusCode, 200, `a search holding NUL: ${counted.body}`)
  t.equal(counted.json().total, 0, 'counts nothing')
  const created = await h.req('POST', '/v1/nodes', apiKey, { name: 'a\u0000b' })
  t.ok(created.statusCode === 201 || created.statusCode === 422, `POST with NUL: ${created.statusCode} ${created.body}`)
  t.type(created.json().error ?? created.json().data.id, 'string')
  const paired = await h.req('POST', '/v1/screens/pair', apiKey, { code: 'AB\u0000CD', name: 'x' })
  t.ok(paired.statusCode >= 400 && paired.statusCode < 500, `pair with NUL: ${paired.statusCode}`)
  t.type(paired.json().error, 'string')
  t.equal((await h.req('POST', '/v1/nodes', apiKey, { name: 'Lobby' })).statusCode, 201, 'the database still answers')
})
