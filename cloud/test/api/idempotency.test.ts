import { servicesOf } from '../../src/app.js'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { build, makeKey } from '../helpers.js'
import { buildMedia, GIF_3x2, PNG_1x1 } from '../content/fixtures.js'
import { IdempotencyRepository } from '../../src/platform/http/IdempotencyRepository.js'

t.test('Idempotency-Key: a repeat returns the first success', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  const first = await h.req('POST', '/v1/nodes', apiKey, { name: 'Lobby' }, { 'idempotency-key': 'abc-1' })
  t.equal(first.statusCode, 201)
  const again = await h.req('POST', '/v1/nodes', apiKey, { name: 'Lobby' }, { 'idempotency-key': 'abc-1' })
  t.equal(again.statusCode, 201)
  t.same(again.json(), first.json())
  t.equal(again.headers['idempotent-replayed'], 'true')
  t.equal((await h.req('GET', '/v1/nodes', apiKey)).json().data.length, 1)

  const different = await h.req('POST', '/v1/nodes', apiKey, { name: 'Other' }, { 'idempotency-key': 'abc-1' })
  t.equal(different.statusCode, 422)
  t.match(different.json().message, /different request body/)

  // Scoped per workspace: another workspace may use the same key.
  const { apiKey: other } = await h.workspace('B')
  const theirs = await h.req('POST', '/v1/nodes', other, { name: 'Lobby' }, { 'idempotency-key': 'abc-1' })
  t.equal(theirs.statusCode, 201)
  t.not(theirs.json().data.id, first.json().data.id)

  // Kept 24 hours.
  h.clock.advance(24 * 3600_000 + 1)
  const later = await h.req('POST', '/v1/nodes', apiKey, { name: 'Lobby' }, { 'idempotency-key': 'abc-1' })
  t.equal(later.statusCode, 201)
  t.not(later.json().data.id, first.json().data.id)
  t.equal(await servicesOf(h.app).idempotency.purgeExpired(), 1, "workspace B's key expired")
  h.clock.advance(24 * 3600_000 + 1)
  t.equal(await servicesOf(h.app).idempotency.purgeExpired(), 1)
})

t.test('409 idempotency_in_progress while the first is still running', async (t) => {
  const h = await build(t)
  const { apiKey, workspaceId } = await h.workspace()
  // The first attempt, still running (on this instance or another sharing the database),
  // is nothing but its record: the repeat learns of it from the database alone.
  const repo = new IdempotencyRepository(servicesOf(h.app).db.kysely)
  const keyId = (await h.req('GET', '/v1/me', apiKey)).json().data.actor.id
  const scope = { workspaceId, credential: `apikey:${keyId}`, route: 'POST /v1/nodes', key: 'held' }
  const body = { name: 'Lobby' }
  await repo.claim(scope, createHash('sha256').update(JSON.stringify(body)).digest('hex'), h.clock.now().toISOString())
  const held = await h.req('POST', '/v1/nodes', apiKey, body, { 'idempotency-key': 'held' })
  t.equal(held.statusCode, 409)
  t.equal(held.json().error, 'idempotency_in_progress')
  await repo.complete(scope, 201, JSON.stringify({ data: { id: 'node_first' } }))
  const replayed = await h.req('POST', '/v1/nodes', apiKey, body, { 'idempotency-key': 'held' })
  t.equal(replayed.statusCode, 201)
  t.same(replayed.json(), { data: { id: 'node_first' } }, 'the recorded answer, once the first attempt finished')

  // Two at once: exactly one runs; the other waits its turn out (409) or replays it.
  const headers = { 'idempotency-key': 'same' }
  const [a, b] = await Promise.all([h.req('POST', '/v1/nodes', apiKey, body, headers), h.req('POST', '/v1/nodes', apiKey, body, headers)])
  const codes = [a.statusCode, b.statusCode].sort()
  t.ok(codes[0] === 201 && (codes[1] === 409 || b.headers['idempotent-replayed'] === 'true' || a.headers['idempotent-replayed'] === 'true'), `${codes}`)
  t.equal((await h.req('GET', '/v1/nodes', apiKey)).json().data.length, 1)
})

t.test('a failed first attempt frees the key; bad keys are refused', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  const bad = await h.req('POST', '/v1/nodes', apiKey, { name: 'x', parentId: 'node_nope' }, { 'idempotency-key': 'k2' })
  t.equal(bad.statusCode, 422)
  const retry = await h.req('POST', '/v1/nodes', apiKey, { name: 'x', parentId: 'node_nope' }, { 'idempotency-key': 'k2' })
  t.equal(retry.statusCode, 422, 'not replayed')
  const ok = await h.req('POST', '/v1/nodes', apiKey, { name: 'x' }, { 'idempotency-key': 'k3' })
  t.equal(ok.statusCode, 201)
  const long = await h.req('POST', '/v1/nodes', apiKey, { name: 'x' }, { 'idempotency-key': 'k'.repeat(256) })
  t.equal(long.statusCode, 422)
  t.match(long.json().message, /Idempotency-Key/)
})

t.test('scoped per credential: another credential repeating a key gets its own answer, never the first one', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  const store = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Store' })).json().data.id as string
  const headers = { 'idempotency-key': 'shared-1' }
  const owner = await h.req('POST', '/v1/nodes', apiKey, { name: 'Annex' }, headers)
  t.equal(owner.statusCode, 201)
  // A key pinned to the store sends the owner's key with the same body: not the owner's node
  // (at the root, outside its pin), but its own, under its pin.
  const pinned = (await makeKey(h, apiKey, ['node.view', 'node.edit'], store)).secret
  const mine = await h.req('POST', '/v1/nodes', pinned, { name: 'Annex' }, headers)
  t.equal(mine.statusCode, 201, mine.body)
  t.notOk(mine.headers['idempotent-replayed'], 'not a replay')
  t.not(mine.json().data.id, owner.json().data.id, "not the owner's answer")
  t.equal(mine.json().data.parentId, store, 'made under its own pin')
  const again = await h.req('POST', '/v1/nodes', pinned, { name: 'Annex' }, headers)
  t.equal(again.headers['idempotent-replayed'], 'true', 'its own repeat replays its own answer')
  t.same(again.json(), mine.json())
  t.same((await h.req('POST', '/v1/nodes', apiKey, { name: 'Annex' }, headers)).json(), owner.json(), "the owner's repeat still replays the owner's")
  // A user session is a credential of its own too.
  const user = (await h.req('POST', '/v1/users', apiKey, { email: 'u@example.com', role: 'admin' })).json().data.sessionToken
  const byUser = await h.req('POST', '/v1/nodes', user, { name: 'Annex' }, headers)
  t.equal(byUser.statusCode, 201)
  t.notOk(byUser.headers['idempotent-replayed'])
  t.not(byUser.json().data.id, owner.json().data.id)
})

t.test('uploads: the file and the form fields are part of the request; another file under the same key is 422', async (t) => {
  const h = await buildMedia(t)
  const { apiKey } = await h.workspace()
  const key = { 'idempotency-key': 'upload-1' }
  const first = await h.upload(apiKey, { name: 'Logo', file: { filename: 'logo.png', data: PNG_1x1 } }, key)
  t.equal(first.statusCode, 201, first.body)
  const list = async () => (await h.req('GET', '/v1/media', apiKey)).json().data.map((m: { id: string }) => m.id)

  const replay = await h.upload(apiKey, { name: 'Logo', file: { filename: 'logo.png', data: PNG_1x1 } }, key)
  t.equal(replay.statusCode, 201)
  t.equal(replay.headers['idempotent-replayed'], 'true', 'the same form again: a replay')
  t.same(replay.json(), first.json())

  for (const [what, fields] of [
    ['another file', { name: 'Logo', file: { filename: 'logo.png', data: GIF_3x2 } }],
    ['another file name', { name: 'Logo', file: { filename: 'other.png', data: PNG_1x1 } }],
    ['another field', { name: 'Logo 2', file: { filename: 'logo.png', data: PNG_1x1 } }],
    ['a field more', { name: 'Logo', nodeId: '', file: { filename: 'logo.png', data: PNG_1x1 } }],
  ] as const) {
    const res = await h.upload(apiKey, fields, key)
    t.equal(res.statusCode, 422, what)
    t.equal(res.json().error, 'validation_error', what)
    t.match(res.json().message, /Idempotency-Key was already used with a different request/)
  }
  t.same(await list(), [first.json().data.id], 'one media item; nothing kept from the refused repeats')
  t.same(fs.readdirSync(path.join(h.dataDir, 'media', 'tmp')), [], 'no staged file left behind')
  // Another credential may use the same key for its own upload.
  const other = (await makeKey(h, apiKey, ['media.view', 'media.create'])).secret
  const theirs = await h.upload(other, { name: 'Logo', file: { filename: 'logo.png', data: GIF_3x2 } }, key)
  t.equal(theirs.statusCode, 201, theirs.body)
  t.notOk(theirs.headers['idempotent-replayed'])
  t.equal(theirs.json().data.mimeType, 'image/gif')
})
