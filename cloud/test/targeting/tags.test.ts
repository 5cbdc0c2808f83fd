// Tags on screens through the HTTP interface: PATCH replaces them (lower case, checked),
// bulk-tag adds and removes them on screenIds, a location or a group, GET /v1/screens?tag=
// narrows to screens holding all, GET /v1/tags counts them; a pinned key sees its own.
import t from 'tap'
import { servicesOf } from '../../src/app.js'
import { forEngines } from '../db/engines.js'
import { screenRow } from '../fixtures/screenRows.js'
import { makeKey, type Harness } from '../helpers.js'

const AT = '2026-06-01T12:00:00.000Z'

async function seed(h: Harness, workspaceId: string, rows: [id: string, nodeId: string | null][]) {
  await servicesOf(h.app)
    .db.kysely.insertInto('screens')
    .values(rows.map(([id, node]) => screenRow(id, workspaceId, AT, { node_id: node })))
    .execute()
}

// Every test here runs on SQLite and on PostgreSQL (SVC_TEST_DATABASE_URL). The tests share one
// app per engine, each in a workspace of its own; the bulk-tag one writes screens with literal
// ids, so it has an app of its own.
forEngines(t, async (t, build) => {
  const shared = await build(t)
  t.test('PATCH sets tags; the list filters by all of them; /v1/tags counts; bad tags are 422 and change nothing', async (t) => {
    const h = shared
    const { apiKey, workspaceId } = await h.workspace()
    await seed(h, workspaceId, [
      ['scr_1', null],
      ['scr_2', null],
      ['scr_3', null],
    ])
    const patch = (id: string, body: unknown) => h.req('PATCH', `/v1/screens/${id}`, apiKey, body)
    let res = await patch('scr_1', { tags: ['Format:Kiosk', 'floor:2', 'format:kiosk'] })
    t.equal(res.statusCode, 200, res.body)
    t.same(res.json().data.tags, ['floor:2', 'format:kiosk'], 'lower case, once each, sorted')
    t.equal((await patch('scr_2', { tags: ['format:kiosk'] })).statusCode, 200)
    t.same((await h.req('GET', '/v1/screens/scr_1', apiKey)).json().data.tags, ['floor:2', 'format:kiosk'])
    t.same((await h.req('GET', '/v1/screens/scr_3', apiKey)).json().data.tags, [])

    const ids = async (q: string) => ((await h.req('GET', `/v1/screens?${q}`, apiKey)).json().data as { id: string }[]).map((s) => s.id)
    t.same(await ids('tag=FORMAT:kiosk'), ['scr_1', 'scr_2'])
    t.same(await ids('tag=format:kiosk&tag=floor:2'), ['scr_1'], 'all of them')
    t.same(await ids('tag=nothing'), [])
    t.same(await ids('tag=format:kiosk&limit=1&count=1'), ['scr_1'])
    // The list's items carry their tags (sorted; none: an empty list), on every page form.
    for (const q of ['', 'limit=2', 'tag=format:kiosk'])
      t.same(
        ((await h.req('GET', `/v1/screens?${q}`, apiKey)).json().data as { id: string; tags: string[] }[]).map((s) => [s.id, s.tags]),
        q === 'tag=format:kiosk'
          ? [
              ['scr_1', ['floor:2', 'format:kiosk']],
              ['scr_2', ['format:kiosk']],
            ]
          : [
              ['scr_1', ['floor:2', 'format:kiosk']],
              ['scr_2', ['format:kiosk']],
              ['scr_3', []],
            ].slice(0, q ? 2 : 3),
        `tags on the list items (${q || 'whole list'})`,
      )

    res = await h.req('GET', '/v1/tags', apiKey)
    t.same(res.json().data, [
      { tag: 'floor:2', count: 1 },
      { tag: 'format:kiosk', count: 2 },
    ])

    for (const bad of [['has space'], [''], ['x'.repeat(65)], Array.from({ length: 51 }, (_, i) => `t${i}`), ['ok', 'bad!']]) {
      res = await patch('scr_1', { tags: bad, name: 'Renamed' })
      t.equal(res.statusCode, 422, JSON.stringify(bad).slice(0, 40))
      t.equal(res.json().error, 'validation_error')
    }
    const s1 = (await h.req('GET', '/v1/screens/scr_1', apiKey)).json().data
    t.same([s1.name, s1.tags], ['scr_1', ['floor:2', 'format:kiosk']], 'nothing written')
    t.equal((await h.req('GET', '/v1/screens?tag=bad!', apiKey)).statusCode, 422)
    t.equal((await patch('scr_nope', { tags: ['a'] })).statusCode, 404)
    t.same((await patch('scr_1', { tags: [] })).json().data.tags, [], 'an empty list clears')
  })

  t.test('bulk-tag by screenIds, by location and by group answers matched and changed; limits hold', async (t) => {
    const h = await build(t)
    const { apiKey, workspaceId } = await h.workspace()
    const store = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Store', kind: 'location' })).json().data.id as string
    await seed(h, workspaceId, [
      ['scr_1', store],
      ['scr_2', store],
      ['scr_3', null],
    ])
    const bulk = (body: unknown) => h.req('POST', '/v1/screens/bulk-tag', apiKey, body)
    let res = await bulk({ screenIds: ['scr_1', 'scr_3', 'scr_unknown'], add: ['A', 'b'] })
    t.equal(res.statusCode, 200, res.body)
    t.same(res.json().data, { matched: 2, changed: 2 })
    res = await bulk({ nodeId: store, add: ['a'] })
    t.same(res.json().data, { matched: 2, changed: 1 }, 'scr_1 already had it')
    res = await bulk({ nodeId: store, add: ['a'] })
    t.same(res.json().data, { matched: 2, changed: 0 })
    const group = (await h.req('POST', '/v1/groups', apiKey, { name: 'B', kind: 'dynamic', rule: { all: [{ tag: 'b' }] } })).json().data.id
    res = await bulk({ groupId: group, remove: ['a'], add: ['c'] })
    t.same(res.json().data, { matched: 2, changed: 2 })
    t.same((await h.req('GET', '/v1/tags', apiKey)).json().data, [
      { tag: 'a', count: 1 },
      { tag: 'b', count: 2 },
      { tag: 'c', count: 2 },
    ])
    for (const body of [
      { add: ['a'] },
      { screenIds: ['scr_1'], nodeId: store, add: ['a'] },
      { screenIds: ['scr_1'] },
      { screenIds: ['scr_1'], add: ['a'], remove: ['A'] },
      { groupId: 'grp_nope', add: ['a'] },
      { nodeId: 'node_nope', add: ['a'] },
    ]) {
      res = await bulk(body)
      t.equal(res.statusCode, 422, JSON.stringify(body))
    }
    // 50 tags at most per screen: a change that would pass it is refused whole.
    await h.req('PATCH', '/v1/screens/scr_2', apiKey, { tags: Array.from({ length: 50 }, (_, i) => `t${i}`) })
    res = await bulk({ nodeId: store, add: ['one-more'] })
    t.equal(res.statusCode, 422)
    t.match(res.json().message, /scr_2 would hold more than 50 tags/)
    t.same((await h.req('GET', '/v1/screens?tag=one-more', apiKey)).json().data, [], 'nothing written')
    res = await bulk({ nodeId: store, add: ['one-more'], remove: ['t0'] })
    t.same(res.json().data, { matched: 2, changed: 2 }, 'removing one makes room')
  })

  t.test('a pinned key tags, lists and counts only the screens it reaches; another workspace sees none', async (t) => {
    const h = shared
    const { apiKey, workspaceId } = await h.workspace()
    const east = (await h.req('POST', '/v1/nodes', apiKey, { name: 'East', kind: 'location' })).json().data.id as string
    const west = (await h.req('POST', '/v1/nodes', apiKey, { name: 'West', kind: 'location' })).json().data.id as string
    await seed(h, workspaceId, [
      ['scr_e', east],
      ['scr_w', west],
    ])
    await h.req('POST', '/v1/screens/bulk-tag', apiKey, { screenIds: ['scr_e', 'scr_w'], add: ['lobby'] })
    const pinned = (await makeKey(h, apiKey, ['screen.view', 'screen.edit'], east)).secret
    t.same((await h.req('GET', '/v1/tags', pinned)).json().data, [{ tag: 'lobby', count: 1 }])
    t.same(
      (await h.req('GET', '/v1/screens?tag=lobby', pinned)).json().data.map((s: { id: string }) => s.id),
      ['scr_e'],
    )
    const res = await h.req('POST', '/v1/screens/bulk-tag', pinned, { screenIds: ['scr_e', 'scr_w'], add: ['x'] })
    t.same(res.json().data, { matched: 1, changed: 1 })
    t.equal((await h.req('PATCH', '/v1/screens/scr_w', pinned, { tags: ['x'] })).statusCode, 404)
    const other = await h.workspace('Other')
    t.same((await h.req('GET', '/v1/tags', other.apiKey)).json().data, [])
    t.same((await h.req('POST', '/v1/screens/bulk-tag', other.apiKey, { screenIds: ['scr_e'], add: ['y'] })).json().data, { matched: 0, changed: 0 })
    t.equal((await h.req('PATCH', '/v1/screens/scr_e', other.apiKey, { tags: ['y'] })).statusCode, 404)
  })
})
