import { createHash } from 'node:crypto'
import t from 'tap'
import { build } from './helpers.js'
import { IdempotencyRepository } from '../src/repositories/IdempotencyRepository.js'

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
  t.equal(await h.app.services.idempotency.purgeExpired(), 1, "workspace B's key expired")
  h.clock.advance(24 * 3600_000 + 1)
  t.equal(await h.app.services.idempotency.purgeExpired(), 1)
})

t.test('409 idempotency_in_progress while the first is still running', async (t) => {
  const h = await build(t)
  const { apiKey, workspaceId } = await h.workspace()
  // The first attempt, still running (on this instance or another sharing the database),
  // is nothing but its record: the repeat learns of it from the database alone.
  const repo = new IdempotencyRepository(h.app.services.db.kysely)
  const scope = { workspaceId, route: 'POST /v1/nodes', key: 'held' }
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
