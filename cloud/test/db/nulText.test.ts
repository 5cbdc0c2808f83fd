// A NUL character (U+0000) in a path id or a body field: PostgreSQL text cannot hold one,
// SQLite's can; both engines answer the same. A lookup by such an id answers 404; any
// string in a JSON body holding one (a plain field, a nested one, a free-form object, an
// array item, a field name) and an upload's form field answer 422 validation_error naming
// the field, and nothing is written; the database stays usable afterwards.
import t from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { eachEngine } from './engines.js'
import { build } from '../helpers.js'
import { PNG_1x1, form } from '../content/fixtures.js'

eachEngine(t, 'NUL in ids and fields: 404 for lookups, 422 for every body, the same on both engines', async (t, db) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-nul-'))
  t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }))
  const h = await build(t, { dataDir, webhookAllowHosts: ['localhost'] }, { db })
  const { apiKey } = await h.workspace()
  for (const url of ['/v1/casts/%00', '/v1/nodes/a%00b', '/v1/app-instances/%00', '/v1/banners/%00']) {
    const res = await h.req('GET', url, apiKey)
    t.equal(res.statusCode, 404, `GET ${url}: ${res.body}`)
    t.equal(res.json().error, 'not_found')
  }
  const counted = await h.req('GET', '/v1/nodes?search=a%00b&count=1&limit=10', apiKey)
  t.equal(counted.statusCode, 200, `a search holding NUL: ${counted.body}`)
  t.equal(counted.json().total, 0, 'counts nothing')

  const refused: [string, string, unknown, string][] = [
    ['POST', '/v1/nodes', { name: 'a\u0000b' }, 'body.name'],
    ['POST', '/v1/screens/pair', { code: 'AB\u0000CD', name: 'x' }, 'body.code'],
    ['POST', '/v1/creatives', { name: 'Poster', design: { layers: [{ text: 'x\u0000' }] } }, 'body.design.layers[0].text'],
    ['POST', '/v1/playlists', { name: 'P', items: [{ contentKind: 'media', contentId: 'med_\u0000' }] }, 'body.items[0].contentId'],
    ['POST', '/v1/creatives', { name: 'Poster', design: { 'a\u0000': 1 } }, 'body.design (a field name)'],
    // Webhook routes answer their own validation failures 400; a NUL is refused before them, alike.
    ['POST', '/v1/webhooks', { url: 'https://localhost/hook\u0000', events: ['screen.online'] }, 'body.url'],
  ]
  for (const [method, url, body, field] of refused) {
    const res = await h.req(method, url, apiKey, body)
    t.equal(res.statusCode, 422, `${method} ${url}: ${res.body}`)
    t.same(res.json(), { error: 'validation_error', message: `${field} must not contain the NUL character (U+0000).` })
  }
  const upload = form({ name: 'Logo\u0000', file: { filename: 'logo.png', data: PNG_1x1, type: 'image/png' } })
  const uploaded = await h.app.inject({
    method: 'POST',
    url: '/v1/media/upload',
    headers: { authorization: `Bearer ${apiKey}`, ...upload.headers },
    payload: upload.payload,
  })
  t.equal(uploaded.statusCode, 422, `upload with a NUL name: ${uploaded.body}`)
  t.same(uploaded.json(), { error: 'validation_error', message: 'body.name must not contain the NUL character (U+0000).' })

  t.same(await db.kysely.selectFrom('nodes').select('id').where('name', 'like', 'a%').execute(), [], 'nothing written')
  t.same(await db.kysely.selectFrom('media').select('id').execute(), [], 'no media written')
  t.same(await db.kysely.selectFrom('webhook_endpoints').select('id').execute(), [], 'no endpoint written')
  t.equal((await h.req('POST', '/v1/nodes', apiKey, { name: 'Lobby' })).statusCode, 201, 'the database still answers')
  t.equal((await h.req('POST', '/v1/creatives', apiKey, { name: 'Poster', design: { layers: [] } })).statusCode, 201, 'the same body without NUL is accepted')
})
