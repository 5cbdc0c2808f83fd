// /v1/screens: list paged by id, get, rename/move, delete; pinned-key scope; tenancy;
// a node holding screens cannot be deleted.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { build, makeKey } from '../helpers.js'
import { pairScreen } from '../screenHelpers.js'

// The tests share one app, each in a workspace of its own (the screens it lists are that workspace's).
t.test('screens over HTTP, on one app', async (t) => {
  const shared = await build(t)
  t.test('the list pages by id ascending; without limit it is the whole list', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const made: string[] = []
    for (let i = 0; i < 5; i++) made.push((await pairScreen(h, apiKey, `S${i}`)).screenId)
    const sorted = [...made].sort()

    const whole = await h.req('GET', '/v1/screens', apiKey)
    t.equal(whole.statusCode, 200)
    t.same(
      whole.json().data.map((s: { id: string }) => s.id),
      sorted,
    )
    t.notOk('nextCursor' in whole.json(), 'no paging without limit')
    t.same(
      Object.keys(whole.json().data[0]).sort(),
      [
        'agentVersion',
        'contentId',
        'contentKind',
        'contentName',
        'drift',
        'id',
        'lastScreenshot',
        'lastSeenAt',
        'name',
        'nodeId',
        'playing',
        'playingName',
        'playingThumbnailUrl',
        'status',
        'tags',
      ],
      'the trimmed list item plus nodeId, agentVersion, drift, what it plays (with the names beside the ids), its last screenshot and its tags',
    )

    const seen: string[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const res = await h.req('GET', `/v1/screens?limit=2${cursor ? `&cursor=${cursor}` : ''}`, apiKey)
      t.equal(res.statusCode, 200)
      const body = res.json()
      t.ok(body.data.length <= 2)
      seen.push(...body.data.map((s: { id: string }) => s.id))
      cursor = body.nextCursor
      pages++
    } while (cursor && pages < 10)
    t.equal(pages, 3)
    t.same(seen, sorted, 'every screen once, in id order')

    for (const bad of ['0', '501']) {
      const res = await h.req('GET', `/v1/screens?limit=${bad}`, apiKey)
      t.equal(res.statusCode, 422, `limit=${bad}`)
      t.equal(res.json().error, 'validation_error')
    }
    t.equal((await h.req('GET', '/v1/screens?limit=500', apiKey)).json().data.length, 5)
    t.equal((await h.req('GET', '/v1/screens?cursor=garbage&limit=2', apiKey)).statusCode, 422)
  })

  t.test('the list (serialised by the database) answers each item as the screen itself reads; count, cursors and page ends', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const node = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Store' })).json().data.id
    const ids: string[] = []
    for (let i = 0; i < 4; i++) ids.push((await pairScreen(h, apiKey, `S${i}`, i % 2 ? node : undefined)).screenId)
    ids.sort()
    const tricky = 'Quote " back \\ slash </script> ✓ 😀 ,{"id":"x"} \u2028 end'
    t.equal((await h.req('PATCH', `/v1/screens/${ids[1]}`, apiKey, { name: tricky })).statusCode, 200)
    const list = (await h.req('GET', '/v1/screens', apiKey)).json()
    t.equal(list.data.length, 4)
    for (const item of list.data as Record<string, unknown>[]) {
      const one = (await h.req('GET', `/v1/screens/${item.id}`, apiKey)).json().data
      t.same(
        item,
        {
          id: one.id,
          name: one.name,
          status: one.status,
          contentKind: one.contentKind,
          contentId: one.contentId,
          lastSeenAt: one.lastSeenAt,
          nodeId: one.nodeId,
          agentVersion: one.agentVersion,
          drift: one.drift,
          playing: one.reported?.playing ?? null,
          lastScreenshot: null,
          tags: one.tags,
          contentName: one.contentName,
          playingName: one.playingName,
          playingThumbnailUrl: one.playingThumbnailUrl,
        },
        `${item.id} as GET reads it`,
      )
    }
    t.equal(list.data[1].name, tricky, 'quotes, backslashes, emoji and JSON-looking text come back as sent')

    const exact = await h.req('GET', '/v1/screens?limit=4&count=1', apiKey)
    t.match(exact.headers['content-type'], /^application\/json/)
    t.same(
      exact.json().data.map((s: { id: string }) => s.id),
      ids,
    )
    t.equal(exact.json().nextCursor, null, 'a page that ends exactly at the last screen has no cursor')
    t.equal(exact.json().total, 4)
    const first = (await h.req('GET', '/v1/screens?limit=3&count=1', apiKey)).json()
    t.same(
      first.data.map((s: { id: string }) => s.id),
      ids.slice(0, 3),
    )
    t.equal(first.total, 4, 'total counts the whole list, not the page')
    const rest = (await h.req('GET', `/v1/screens?limit=3&cursor=${first.nextCursor}`, apiKey)).json()
    t.same(
      rest.data.map((s: { id: string }) => s.id),
      ids.slice(3),
    )
    t.equal(rest.nextCursor, null)
    const empty = await makeKey(h, apiKey, ['screen.view'], (await h.req('POST', '/v1/nodes', apiKey, { name: 'Empty' })).json().data.id)
    t.same((await h.req('GET', '/v1/screens?limit=2&count=1', empty.secret)).json(), { data: [], nextCursor: null, total: 0 }, 'an empty list')
  })

  t.test('get, rename and move a screen', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const { screenId } = await pairScreen(h, apiKey, 'Old name')
    const node = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Hall' })).json().data.id
    const got = await h.req('GET', `/v1/screens/${screenId}`, apiKey)
    t.equal(got.statusCode, 200)
    t.match(got.json().data, { id: screenId, name: 'Old name', nodeId: null, status: 'offline' })
    t.notOk(got.body.includes('hash'), 'no credential material')

    h.clock.advance(1000)
    const patched = await h.req('PATCH', `/v1/screens/${screenId}`, apiKey, { name: '  New name ', nodeId: node })
    t.equal(patched.statusCode, 200)
    t.match(patched.json().data, { name: 'New name', nodeId: node, updatedAt: '2026-06-01T12:00:01.000Z' })
    const bad = await h.req('PATCH', `/v1/screens/${screenId}`, apiKey, { nodeId: 'node_nope' })
    t.equal(bad.statusCode, 422)
    t.equal(bad.json().error, 'invalid_node')
    const back = await h.req('PATCH', `/v1/screens/${screenId}`, apiKey, { nodeId: null })
    t.equal(back.json().data.nodeId, null, 'null moves it to the root')
    t.equal((await h.req('GET', '/v1/screens/scr_nope', apiKey)).statusCode, 404)
  })

  t.test('delete needs screen.delete, removes the screen and its registration', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const p = await pairScreen(h, apiKey)
    const editor = await makeKey(h, apiKey, ['screen.view', 'screen.edit'])
    const denied = await h.req('DELETE', `/v1/screens/${p.screenId}`, editor.secret)
    t.equal(denied.statusCode, 403)
    t.equal(denied.json().message, 'Missing permission: screen.delete')
    const del = await h.req('DELETE', `/v1/screens/${p.screenId}`, apiKey)
    t.equal(del.statusCode, 200)
    t.same(del.json().data, { id: p.screenId, deleted: true })
    t.equal((await h.req('GET', `/v1/screens/${p.screenId}`, apiKey)).statusCode, 404)
    t.equal((await h.req('DELETE', `/v1/screens/${p.screenId}`, apiKey)).statusCode, 404)
    t.equal((await h.req('GET', `/v1/devices/register/${p.registrationId}`, p.pollSecret)).statusCode, 404, 'the device learns to register again')
    t.equal(await servicesOf(h.app).screens.countAtNode('x', 'y'), 0)
  })

  t.test('a pinned key sees and changes only screens in its subtree', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const region = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Region' })).json().data.id
    const store = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Store', parentId: region })).json().data.id
    const elsewhere = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Elsewhere' })).json().data.id
    const inStore = (await pairScreen(h, apiKey, 'in store', store)).screenId
    const inRegion = (await pairScreen(h, apiKey, 'in region', region)).screenId
    const outside = (await pairScreen(h, apiKey, 'outside', elsewhere)).screenId
    const atRoot = (await pairScreen(h, apiKey, 'root')).screenId
    const pinned = await makeKey(h, apiKey, ['screen.view', 'screen.edit', 'screen.delete'], region)

    const list = (await h.req('GET', '/v1/screens', pinned.secret)).json().data.map((s: { id: string }) => s.id)
    t.same(list, [inStore, inRegion].sort())
    const paged = await h.req('GET', '/v1/screens?limit=1', pinned.secret)
    t.equal(paged.json().data.length, 1)
    t.ok(paged.json().nextCursor)
    for (const id of [outside, atRoot]) {
      for (const [m, body] of [
        ['GET', undefined],
        ['PATCH', { name: 'x' }],
        ['DELETE', undefined],
      ] as const) {
        const res = await h.req(m, `/v1/screens/${id}`, pinned.secret, body)
        t.equal(res.statusCode, 404, `${m} outside the subtree`)
        t.equal(res.json().error, 'not_found')
      }
    }
    const move = await h.req('PATCH', `/v1/screens/${inStore}`, pinned.secret, { nodeId: elsewhere })
    t.equal(move.statusCode, 422)
    t.equal(move.json().error, 'invalid_node')
    t.equal((await h.req('PATCH', `/v1/screens/${inStore}`, pinned.secret, { nodeId: region })).statusCode, 200, 'moving inside the subtree works')
    t.equal((await h.req('GET', `/v1/screens/${outside}`, apiKey)).json().data.name, 'outside', 'untouched')
  })

  t.test("another workspace's screens answer 404 and never show in its list", async (t) => {
    const h = shared
    const { apiKey: a } = await h.workspace('A')
    const { apiKey: b } = await h.workspace('B')
    const { screenId } = await pairScreen(h, a)
    for (const [m, body] of [
      ['GET', undefined],
      ['PATCH', { name: 'x' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await h.req(m, `/v1/screens/${screenId}`, b, body)
      t.equal(res.statusCode, 404, m)
      t.equal(res.json().error, 'not_found')
    }
    t.same((await h.req('GET', '/v1/screens', b)).json().data, [])
    t.equal((await h.req('GET', `/v1/screens/${screenId}`, a)).json().data.name, 'Screen')
  })

  t.test('a node holding screens cannot be deleted', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const node = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Lobby' })).json().data.id
    const { screenId } = await pairScreen(h, apiKey, 'S', node)
    const refused = await h.req('DELETE', `/v1/nodes/${node}`, apiKey)
    t.equal(refused.statusCode, 409)
    t.equal(refused.json().error, 'node_not_empty')
    t.match(refused.json().message, /1 screen/)
    await h.req('PATCH', `/v1/screens/${screenId}`, apiKey, { nodeId: null })
    t.equal((await h.req('DELETE', `/v1/nodes/${node}`, apiKey)).statusCode, 200, 'empty once the screen moved')
  })

  t.test('lists of the same shape (the statement is kept per shape) each answer their own workspace, subtree and page', async (t) => {
    const h = shared
    const { apiKey: a } = await h.workspace('A')
    const { apiKey: b } = await h.workspace('B')
    const nodeA1 = (await h.req('POST', '/v1/nodes', a, { name: 'A1' })).json().data.id
    const nodeA2 = (await h.req('POST', '/v1/nodes', a, { name: 'A2' })).json().data.id
    const inA1 = [(await pairScreen(h, a, 'a1-x', nodeA1)).screenId, (await pairScreen(h, a, 'a1-y', nodeA1)).screenId].sort()
    const inA2 = [(await pairScreen(h, a, 'a2-x', nodeA2)).screenId].sort()
    const inB = [(await pairScreen(h, b, 'b-x')).screenId, (await pairScreen(h, b, 'b-y')).screenId, (await pairScreen(h, b, 'b-z')).screenId].sort()
    const k1 = await makeKey(h, a, ['screen.view'], nodeA1)
    const k2 = await makeKey(h, a, ['screen.view'], nodeA2)
    const ids = async (key: string, q = '') => {
      const res = await h.req('GET', `/v1/screens${q}`, key)
      t.equal(res.statusCode, 200, res.body)
      return { ids: res.json().data.map((s: { id: string }) => s.id) as string[], next: res.json().nextCursor as string | undefined }
    }
    for (let round = 0; round < 2; round++) {
      t.same((await ids(a)).ids, [...inA1, ...inA2].sort(), 'workspace A, whole')
      t.same((await ids(b)).ids, inB, 'workspace B, whole')
      t.same((await ids(k1.secret)).ids, inA1, 'subtree A1')
      t.same((await ids(k2.secret)).ids, inA2, 'subtree A2 (same scope size as A1)')
      const first = await ids(b, '?limit=2')
      t.same(first.ids, inB.slice(0, 2), 'B, first page')
      const second = await ids(b, `?limit=2&cursor=${first.next}`)
      t.same(second.ids, inB.slice(2), 'B, second page')
      const firstA1 = await ids(k1.secret, '?limit=1')
      t.same(firstA1.ids, inA1.slice(0, 1))
      t.same((await ids(k1.secret, `?limit=1&cursor=${firstA1.next}`)).ids, inA1.slice(1), 'A1, second page (same shape as B, second page)')
    }
  })
})
