// GET /v1/screens narrowed by status, name text and location (with paging and count), as the
// console's screens page asks for it; on SQLite and, with SVC_TEST_DATABASE_URL, PostgreSQL.
import t from 'tap'
import { servicesOf } from '../../src/app.js'
import { forEngines } from '../db/engines.js'
import { screenRow } from '../fixtures/screenRows.js'

forEngines(t, (t, build) => {
  t.test('status, q and nodeId narrow the list; pages and totals follow; bad values are 422', async (t) => {
    const h = await build(t)
    const { apiKey, workspaceId } = await h.workspace()
    const store = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Store', kind: 'location' })).json().data.id as string
    const aisle = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Aisle', kind: 'location', parentId: store })).json().data.id as string
    const other = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Other', kind: 'location' })).json().data.id as string
    const at = '2026-06-01T12:00:00.000Z'
    const rows = [
      ['scr_a1', 'Front Door', 'online', store],
      ['scr_a2', 'front window', 'offline', aisle],
      ['scr_a3', 'Back office', 'online', other],
      ['scr_a4', 'Till_1 (100%)', 'offline', null],
      ['scr_a5', 'Till 2', 'online', aisle],
    ] as const
    await servicesOf(h.app)
      .db.kysely.insertInto('screens')
      .values(rows.map(([id, name, status, node]) => screenRow(id, workspaceId, at, { name, status, node_id: node })))
      .execute()
    const ids = async (query: string) => {
      const res = await h.req('GET', `/v1/screens?${query}`, apiKey)
      t.equal(res.statusCode, 200, query)
      return res.json()
    }
    t.same(
      (await ids('status=online')).data.map((s: { id: string }) => s.id),
      ['scr_a1', 'scr_a3', 'scr_a5'],
    )
    t.same(
      (await ids('status=offline')).data.map((s: { id: string }) => s.id),
      ['scr_a2', 'scr_a4'],
    )
    t.same(
      (await ids('q=FRONT')).data.map((s: { id: string }) => s.id),
      ['scr_a1', 'scr_a2'],
      'any case',
    )
    t.same(
      (await ids('q=_1')).data.map((s: { id: string }) => s.id),
      ['scr_a4'],
      '_ matches itself only',
    )
    t.same(
      (await ids('q=100%25')).data.map((s: { id: string }) => s.id),
      ['scr_a4'],
      '% matches itself only',
    )
    t.same(
      (await ids(`nodeId=${store}`)).data.map((s: { id: string }) => s.id),
      ['scr_a1', 'scr_a2', 'scr_a5'],
      'the location and below',
    )
    t.same(
      (await ids(`nodeId=${store}&status=online&q=till`)).data.map((s: { id: string }) => s.id),
      ['scr_a5'],
      'together',
    )
    const first = await ids(`nodeId=${store}&limit=2&count=1`)
    t.same(
      first.data.map((s: { id: string }) => s.id),
      ['scr_a1', 'scr_a2'],
    )
    t.equal(first.total, 3)
    const second = await ids(`nodeId=${store}&limit=2&cursor=${first.nextCursor}`)
    t.same(
      second.data.map((s: { id: string }) => s.id),
      ['scr_a5'],
    )
    t.equal(second.nextCursor, null)
    t.equal((await ids('q=nothing like it&count=1&limit=10')).total, 0)

    for (const bad of ['status=sleeping', `q=${'x'.repeat(201)}`]) {
      const res = await h.req('GET', `/v1/screens?${bad}`, apiKey)
      t.equal(res.statusCode, 422, bad.slice(0, 30))
      t.equal(res.json().error, 'validation_error')
    }
    const unknown = await h.req('GET', '/v1/screens?nodeId=node_nope', apiKey)
    t.equal(unknown.statusCode, 422)
    t.equal(unknown.json().error, 'invalid_node')
    // A key pinned to the aisle cannot widen its reach with nodeId.
    const pinned = (await h.req('POST', '/v1/api-keys', apiKey, { name: 'aisle', permissions: ['screen.view'], nodeId: aisle })).json().data.secret
    t.same(
      (await h.req('GET', '/v1/screens', pinned)).json().data.map((s: { id: string }) => s.id),
      ['scr_a2', 'scr_a5'],
    )
    t.equal((await h.req('GET', `/v1/screens?nodeId=${store}`, pinned)).statusCode, 422, 'a location outside its reach')
    // A status change shows at once in the narrowed list (it is not answered from a kept page).
    t.same((await ids('status=offline')).data.length, 2)
    await servicesOf(h.app).db.kysely.updateTable('screens').set({ status: 'offline' }).where('id', '=', 'scr_a1').execute()
    t.same(
      (await ids('status=offline')).data.map((s: { id: string }) => s.id),
      ['scr_a1', 'scr_a2', 'scr_a4'],
    )
  })
})

forEngines(t, (t, build) => {
  t.test('each listed screen shows what it reports playing and its newest screenshot that came back', async (t) => {
    const h = await build(t)
    const { apiKey, workspaceId } = await h.workspace()
    const at = '2026-06-01T12:00:00.000Z'
    const playing = { source: 'cast', contentKind: 'media', contentId: 'med_1', castId: 'cast_1' }
    const k = servicesOf(h.app).db.kysely
    await k
      .insertInto('screens')
      .values([
        screenRow('scr_b1', workspaceId, at, { reported: JSON.stringify({ version: 3, playing, at }), reported_at: at }),
        screenRow('scr_b2', workspaceId, at),
      ])
      .execute()
    const shot = (id: string, status: string, created: string) => ({
      id,
      workspace_id: workspaceId,
      screen_id: 'scr_b1',
      status,
      reason: null,
      sha256: null,
      size_bytes: null,
      width: null,
      height: null,
      created_at: created,
      sent_at: created,
      completed_at: status === 'queued' ? null : created,
    })
    await k
      .insertInto('screenshots')
      .values([
        shot('shot_1', 'ok', '2026-06-01T10:00:00.000Z'),
        shot('shot_2', 'ok', '2026-06-01T11:00:00.000Z'),
        shot('shot_3', 'failed', '2026-06-01T11:30:00.000Z'),
      ])
      .execute()
    const list = (await h.req('GET', '/v1/screens', apiKey)).json().data
    t.same(list[0].playing, playing)
    t.same(list[0].lastScreenshot, { id: 'shot_2', at: '2026-06-01T11:00:00.000Z' }, 'the newest that came back (a failed one does not count)')
    t.equal(list[1].playing, null, 'nothing reported yet')
    t.equal(list[1].lastScreenshot, null)
  })
})
