// Casts and emergencies through inject: every validation error, the content checks,
// pinned-key scoping, permissions, and GET /v1/casts ordering and limit.
import t from 'tap'
import { makeKey } from '../helpers.js'
import { pairScreen } from '../screenHelpers.js'
import { InMemoryContentResolver } from '../../src/domains/content/testing/InMemoryContentResolver.js'
import { forEngines, onOneEngine } from '../db/engines.js'

// What the routes answer (validation, content checks, pinned keys, permissions): one engine
// (SQLite, or SVC_TEST_ENGINE=postgres; db/engines.ts onOneEngine).
onOneEngine(t, (t, build) => {
  t.test('validation errors', async (t) => {
    const content = new InMemoryContentResolver()
    const h = await build(t, {}, { content })
    const { apiKey: k, workspaceId } = await h.workspace()
    content.add(workspaceId, { kind: 'media', id: 'med_ok' }).add(workspaceId, { kind: 'media', id: 'med_busy' }, { unplayable: 'still processing' })
    const s = await pairScreen(h, k)
    const cases: [string, unknown, number, string][] = [
      ['no contentKind', { contentId: 'med_ok' }, 422, 'validation_error'],
      ['bad contentKind', { contentKind: 'layout', contentId: 'med_ok' }, 422, 'validation_error'],
      ['no contentId', { contentKind: 'media' }, 422, 'validation_error'],
      ['bad scopeKind', { contentKind: 'media', contentId: 'med_ok', scopeKind: 'everything' }, 422, 'validation_error'],
      ['screens without screenIds', { contentKind: 'media', contentId: 'med_ok', scopeKind: 'screens' }, 422, 'validation_error'],
      ['empty screenIds', { contentKind: 'media', contentId: 'med_ok', scopeKind: 'screens', screenIds: [] }, 422, 'validation_error'],
      ['screenIds with scope all', { contentKind: 'media', contentId: 'med_ok', screenIds: [s.screenId] }, 422, 'validation_error'],
      ['node without scopeNodeId', { contentKind: 'media', contentId: 'med_ok', scopeKind: 'node' }, 422, 'validation_error'],
      ['unknown scopeNodeId', { contentKind: 'media', contentId: 'med_ok', scopeKind: 'node', scopeNodeId: 'node_x' }, 422, 'invalid_node'],
      ['expiresAt in the past', { contentKind: 'media', contentId: 'med_ok', expiresAt: '2026-06-01T11:59:59Z' }, 422, 'validation_error'],
      ['expiresAt now', { contentKind: 'media', contentId: 'med_ok', expiresAt: Date.parse('2026-06-01T12:00:00Z') }, 422, 'validation_error'],
      ['expiresAt not a date', { contentKind: 'media', contentId: 'med_ok', expiresAt: 'tomorrow' }, 422, 'validation_error'],
      ['expiresAt without zone', { contentKind: 'media', contentId: 'med_ok', expiresAt: '2026-06-02T12:00:00' }, 422, 'validation_error'],
      ['expiresAt fractional', { contentKind: 'media', contentId: 'med_ok', expiresAt: 1.5 }, 422, 'validation_error'],
      ['unknown content', { contentKind: 'media', contentId: 'med_nope' }, 422, 'validation_error'],
      ['unplayable content', { contentKind: 'media', contentId: 'med_busy' }, 422, 'content_unplayable'],
      ['no such screen', { contentKind: 'media', contentId: 'med_ok', scopeKind: 'screens', screenIds: ['scr_nope'] }, 422, 'no_screens'],
    ]
    for (const [name, body, status, error] of cases) {
      for (const path of ['/v1/casts', '/v1/emergencies']) {
        if (path === '/v1/emergencies' && JSON.stringify(body).includes('expiresAt')) continue
        const res = await h.req('POST', path, k, body)
        t.equal(res.statusCode, status, `${path} ${name}`)
        t.equal(res.json().error, error, `${path} ${name}`)
      }
    }
    t.equal((await h.req('GET', '/v1/casts?limit=0', k)).statusCode, 422)
    t.equal((await h.req('GET', '/v1/casts?limit=501', k)).statusCode, 422)
    t.equal((await h.req('GET', '/v1/casts?status=bogus', k)).statusCode, 422)
    t.equal((await h.req('POST', '/v1/casts/cast_nope/clear', k)).statusCode, 404)
    t.equal((await h.req('POST', '/v1/emergencies/emg_nope/clear', k)).statusCode, 404)
  })

  t.test('not_shared, no_screens in an empty workspace, and the default library knows no content', async (t) => {
    const content = new InMemoryContentResolver()
    const h = await build(t, {}, { content })
    const { apiKey: k, workspaceId } = await h.workspace()
    t.equal((await h.req('POST', '/v1/casts', k, { contentKind: 'media', contentId: 'med_x' })).json().error, 'no_screens')
    const node = (await h.req('POST', '/v1/nodes', k, { name: 'Store 1', kind: 'location' })).json().data.id
    await pairScreen(h, k, 'Root screen')
    content.add(workspaceId, { kind: 'media', id: 'med_store' }, { sharedTo: [node] })
    const res = await h.req('POST', '/v1/casts', k, { contentKind: 'media', contentId: 'med_store' })
    t.equal(res.statusCode, 403)
    t.equal(res.json().error, 'not_shared')

    const plain = await build(t)
    const ws = await plain.workspace()
    await pairScreen(plain, ws.apiKey)
    const r2 = await plain.req('POST', '/v1/casts', ws.apiKey, { contentKind: 'media', contentId: 'med_any' })
    t.equal(r2.statusCode, 422)
    t.match(r2.json(), { error: 'validation_error', message: /unknown content/ })
  })

  t.test('a pinned key casts only to its subtree and sees only its casts; permissions', async (t) => {
    const h = await build(t, {}, { content: InMemoryContentResolver.permissive() })
    const { apiKey: k } = await h.workspace()
    const store = (await h.req('POST', '/v1/nodes', k, { name: 'Store', kind: 'location' })).json().data.id
    const other = (await h.req('POST', '/v1/nodes', k, { name: 'Other', kind: 'location' })).json().data.id
    const inStore = await pairScreen(h, k, 'In store', store)
    const elsewhere = await pairScreen(h, k, 'Elsewhere', other)
    const pinned = (await makeKey(h, k, ['screen.cast', 'screen.view', 'emergency.manage', 'emergency.view'], store)).secret

    const cast = await h.req('POST', '/v1/casts', pinned, { contentKind: 'media', contentId: 'med_a' })
    t.equal(cast.statusCode, 201)
    t.equal(cast.json().data.screenCount, 1, 'scope all = the screens the key reaches')
    const outside = await h.req('POST', '/v1/casts', pinned, {
      contentKind: 'media',
      contentId: 'med_a',
      scopeKind: 'screens',
      screenIds: [elsewhere.screenId],
    })
    t.equal(outside.json().error, 'no_screens', 'a screen outside the subtree is not reachable')
    const mixed = await h.req('POST', '/v1/casts', pinned, {
      contentKind: 'media',
      contentId: 'med_a',
      scopeKind: 'screens',
      screenIds: [elsewhere.screenId, inStore.screenId],
    })
    t.equal(mixed.json().data.screenCount, 1, 'only reachable screens are targeted')
    t.equal(
      (await h.req('POST', '/v1/casts', pinned, { contentKind: 'media', contentId: 'med_a', scopeKind: 'node', scopeNodeId: other })).json().error,
      'invalid_node',
    )

    const rootCast = (await h.req('POST', '/v1/casts', k, { contentKind: 'media', contentId: 'med_a' })).json().data
    t.equal(rootCast.screenCount, 2)
    const seen = (await h.req('GET', '/v1/casts', pinned)).json().data.map((c: { id: string }) => c.id)
    t.notOk(seen.includes(rootCast.id), 'a pinned key does not see a workspace-wide cast')
    t.equal((await h.req('POST', `/v1/casts/${rootCast.id}/clear`, pinned)).statusCode, 404)
    const emg = await h.req('POST', '/v1/emergencies', pinned, { contentKind: 'media', contentId: 'med_a' })
    t.equal(emg.json().data.screenCount, 1)

    const viewer = (await makeKey(h, k, ['screen.view'])).secret
    t.match((await h.req('POST', '/v1/casts', viewer, { contentKind: 'media', contentId: 'med_a' })).json(), {
      error: 'forbidden',
      message: 'Missing permission: screen.cast',
    })
    t.match((await h.req('POST', '/v1/emergencies', viewer, { contentKind: 'media', contentId: 'med_a' })).json(), {
      error: 'forbidden',
      message: 'Missing permission: emergency.manage',
    })
    t.equal((await h.req('GET', '/v1/emergencies', viewer)).statusCode, 403)
  })
})

// The listing's order and limit: the SQL, on both engines.
forEngines(t, (t, build) => {
  t.test('GET /v1/casts: newest first, limit default 200 and max 500', async (t) => {
    const h = await build(t, {}, { content: InMemoryContentResolver.permissive() })
    const { apiKey: k } = await h.workspace()
    await pairScreen(h, k)
    const ids: string[] = []
    for (let i = 0; i < 205; i++) {
      h.clock.advance(1000)
      ids.push((await h.req('POST', '/v1/casts', k, { contentKind: 'media', contentId: `med_${i}` })).json().data.id)
    }
    const all = (await h.req('GET', '/v1/casts', k)).json().data
    t.equal(all.length, 200, 'default limit 200')
    t.equal(all[0].id, ids[204], 'newest first')
    t.equal(all[0].status, 'active')
    t.equal(all[1].status, 'replaced')
    t.equal((await h.req('GET', '/v1/casts?limit=500', k)).json().data.length, 205)
    t.same(
      (await h.req('GET', '/v1/casts?limit=3', k)).json().data.map((c: { id: string }) => c.id),
      [ids[204], ids[203], ids[202]],
    )
    t.equal((await h.req('GET', '/v1/casts?status=replaced&limit=500', k)).json().data.length, 204)
    t.notOk('nextCursor' in (await h.req('GET', '/v1/casts', k)).json(), 'no cursor')
  })
})
