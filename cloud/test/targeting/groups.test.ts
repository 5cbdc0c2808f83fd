// /v1/groups through the HTTP interface: static and dynamic groups, their members (paged)
// and counts, the preview, the rule's errors (unknown fields, cycles, another workspace's
// group), and what a pinned key sees.
import t from 'tap'
import { servicesOf } from '../../src/app.js'
import { forEngines } from '../db/engines.js'
import { screenRow } from '../fixtures/screenRows.js'
import { makeKey, type Harness } from '../helpers.js'
import { InMemoryContentResolver } from '../../src/domains/content/testing/InMemoryContentResolver.js'

const AT = '2026-06-01T12:00:00.000Z'

async function seed(h: Harness, workspaceId: string, rows: [id: string, nodeId: string | null, tags: string[]][]) {
  const db = servicesOf(h.app).db.kysely
  await db
    .insertInto('screens')
    .values(rows.map(([id, node]) => screenRow(id, workspaceId, AT, { node_id: node, name: `Screen ${id}` })))
    .execute()
  const tags = rows.flatMap(([id, , tags]) => tags.map((tag) => ({ screen_id: id, workspace_id: workspaceId, tag })))
  if (tags.length) await db.insertInto('screen_tags').values(tags).execute()
}

const idsOf = (list: { id: string }[]) => list.map((s) => s.id)

// The tests share one app per engine, each in a workspace of its own; the sweep, which takes
// any content, has an app of its own.
forEngines(t, async (t, build) => {
  const shared = await build(t)
  t.test('static and dynamic groups: members follow the tags, pages, counts, preview stores nothing', async (t) => {
    const h = shared
    const { apiKey, workspaceId } = await h.workspace()
    await seed(h, workspaceId, [
      ['scr_1', null, ['kiosk']],
      ['scr_2', null, ['kiosk', 'floor:2']],
      ['scr_3', null, ['floor:1']],
    ])
    const post = (body: unknown) => h.req('POST', '/v1/groups', apiKey, body)
    let res = await post({ name: 'Kiosks', kind: 'dynamic', rule: { all: [{ tag: 'KIOSK' }] } })
    t.equal(res.statusCode, 201, res.body)
    const kiosks = res.json().data
    t.match(kiosks, { name: 'Kiosks', kind: 'dynamic', nodeId: null, screenIds: null, rule: { all: [{ tag: 'kiosk' }] }, memberCount: 2 })
    t.match(kiosks.id, /^grp_/)
    res = await post({ name: 'Picked', kind: 'static', screenIds: ['scr_3', 'scr_1', 'scr_3'] })
    t.equal(res.statusCode, 201, res.body)
    const picked = res.json().data
    t.same([picked.screenIds, picked.memberCount, picked.rule], [['scr_1', 'scr_3'], 2, null])

    // Members follow the tags.
    await h.req('PATCH', '/v1/screens/scr_3', apiKey, { tags: ['kiosk'] })
    t.equal((await h.req('GET', `/v1/groups/${kiosks.id}`, apiKey)).json().data.memberCount, 3)
    res = await h.req('GET', `/v1/groups/${kiosks.id}/members?limit=2&count=1`, apiKey)
    t.same(idsOf(res.json().data), ['scr_1', 'scr_2'])
    t.equal(res.json().total, 3)
    res = await h.req('GET', `/v1/groups/${kiosks.id}/members?limit=2&cursor=${res.json().nextCursor}`, apiKey)
    t.same([idsOf(res.json().data), res.json().nextCursor], [['scr_3'], null])
    t.same(res.json().data[0], { id: 'scr_3', name: 'Screen scr_3', nodeId: null, status: 'offline', agentVersion: null })

    // A group of groups; the list filter by group.
    res = await post({ name: 'Both', kind: 'dynamic', rule: { all: [{ group: kiosks.id }, { group: picked.id }, { not: { tag: 'floor:2' } }] } })
    t.equal(res.json().data.memberCount, 2, res.body)
    const both = res.json().data.id
    t.same(idsOf((await h.req('GET', `/v1/screens?group=${both}`, apiKey)).json().data), ['scr_1', 'scr_3'])
    t.same(idsOf((await h.req('GET', `/v1/screens?group=${picked.id}&tag=kiosk`, apiKey)).json().data), ['scr_1', 'scr_3'])

    res = await h.req('POST', '/v1/groups/preview', apiKey, { rule: { any: [{ tagPrefix: 'FLOOR:' }, { name: '*1' }] } })
    t.equal(res.statusCode, 200, res.body)
    t.same([res.json().data.count, idsOf(res.json().data.screens)], [2, ['scr_1', 'scr_2']])
    t.equal((await h.req('GET', '/v1/groups', apiKey)).json().data.length, 3, 'the preview stored nothing')

    // PATCH: rename, change the rule, turn static into dynamic.
    res = await h.req('PATCH', `/v1/groups/${picked.id}`, apiKey, { screenIds: ['scr_2'] })
    t.same([res.json().data.screenIds, res.json().data.memberCount], [['scr_2'], 1])
    res = await h.req('PATCH', `/v1/groups/${picked.id}`, apiKey, { kind: 'dynamic', rule: { any: [{ tag: 'floor:1' }] }, name: 'Floor 1' })
    t.match(res.json().data, { kind: 'dynamic', name: 'Floor 1', screenIds: null, memberCount: 0 })

    // A group named by another's rule is not deleted; then it is.
    res = await h.req('DELETE', `/v1/groups/${kiosks.id}`, apiKey)
    t.equal(res.statusCode, 409)
    t.match(res.json().message, both)
    t.equal((await h.req('DELETE', `/v1/groups/${both}`, apiKey)).statusCode, 200)
    t.equal((await h.req('DELETE', `/v1/groups/${kiosks.id}`, apiKey)).statusCode, 200)
    t.equal((await h.req('GET', `/v1/groups/${kiosks.id}`, apiKey)).statusCode, 404)
  })

  t.test('bad rules are 422 naming the condition: unknown fields, cycles, groups of another workspace, bad versions', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const other = await h.workspace('Other')
    const foreign = (await h.req('POST', '/v1/groups', other.apiKey, { name: 'F', kind: 'static', screenIds: [] })).json().data.id as string
    const a = (await h.req('POST', '/v1/groups', apiKey, { name: 'A', kind: 'dynamic', rule: { all: [{ tag: 'x' }] } })).json().data.id as string
    const b = (await h.req('POST', '/v1/groups', apiKey, { name: 'B', kind: 'dynamic', rule: { all: [{ group: a }] } })).json().data.id as string
    const cases: [unknown, RegExp][] = [
      [{ all: [{ tag: 'x', colour: 'red' }] }, /rule\.all\[0\]: unknown field "colour"/],
      [{ all: [{ not: { shape: 1 } }] }, /rule\.all\[0\]\.not: unknown field "shape"/],
      [{ every: [] }, /unknown field "every"/],
      [{ all: [] }, /rule\.all: a list of at least one condition/],
      [{ all: [{ tag: 'has space' }] }, /rule\.all\[0\]\.tag/],
      [{ all: [{ agentVersion: { lt: '1.2' } }] }, /agentVersion\.lt: a version "x\.y\.z"/],
      [{ all: [{ agentVersion: { below: '1.2.3' } }] }, /unknown field "below"/],
      [{ all: [{ group: foreign }] }, /is not a group of this workspace/],
      [{ all: [{ group: 'grp_nope' }] }, /is not a group of this workspace/],
      [{ all: [{ nodeId: 'node_nope' }] }, /not a location/],
    ]
    for (const [rule, message] of cases) {
      for (const [method, url, body] of [
        ['POST', '/v1/groups', { name: 'N', kind: 'dynamic', rule }],
        ['POST', '/v1/groups/preview', { rule }],
        ['PATCH', `/v1/groups/${a}`, { rule }],
      ] as const) {
        const res = await h.req(method, url, apiKey, body)
        t.equal(res.statusCode, 422, `${method} ${url} ${JSON.stringify(rule)}`)
        t.match(res.json().message, message)
        t.notMatch(res.body, /"name":"F"/, 'nothing of the other workspace shows')
      }
    }
    // A names nothing yet; B names A. A naming B (or itself) is a cycle.
    for (const rule of [{ all: [{ group: b }] }, { any: [{ tag: 'y' }, { not: { group: a } }] }]) {
      const res = await h.req('PATCH', `/v1/groups/${a}`, apiKey, { rule })
      t.equal(res.statusCode, 422)
      t.match(res.json().message, /cycle/)
    }
    t.same((await h.req('GET', `/v1/groups/${a}`, apiKey)).json().data.rule, { all: [{ tag: 'x' }] }, 'unchanged')
    for (const body of [
      { name: 'S', kind: 'static', rule: { all: [{ tag: 'x' }] } },
      { name: 'D', kind: 'dynamic', screenIds: [] },
      { name: 'D', kind: 'dynamic' },
      { name: 'S', kind: 'static', screenIds: ['scr_nope'] },
    ]) {
      t.equal((await h.req('POST', '/v1/groups', apiKey, body)).statusCode, 422, JSON.stringify(body))
    }
    t.equal((await h.req('GET', `/v1/groups/${foreign}`, apiKey)).statusCode, 404, 'another workspace: 404')
    t.equal((await h.req('GET', `/v1/groups/${foreign}/members`, apiKey)).statusCode, 404)
    t.equal((await h.req('DELETE', `/v1/groups/${foreign}`, apiKey)).statusCode, 404)
  })

  t.test('a pinned key sees groups homed in its subtree and, of any group, only the members it reaches', async (t) => {
    const h = shared
    const { apiKey, workspaceId } = await h.workspace()
    const east = (await h.req('POST', '/v1/nodes', apiKey, { name: 'East', kind: 'location' })).json().data.id as string
    const west = (await h.req('POST', '/v1/nodes', apiKey, { name: 'West', kind: 'location' })).json().data.id as string
    await seed(h, workspaceId, [
      ['scr_e', east, ['lobby']],
      ['scr_w', west, ['lobby']],
    ])
    const pinned = (await makeKey(h, apiKey, ['screen.view', 'screen.edit'], east)).secret
    const root = (await h.req('POST', '/v1/groups', apiKey, { name: 'Root', kind: 'dynamic', rule: { all: [{ tag: 'lobby' }] } })).json().data.id
    const homed = (await h.req('POST', '/v1/groups', apiKey, { name: 'East lobby', nodeId: east, kind: 'static', screenIds: ['scr_e', 'scr_w'] })).json().data
      .id
    t.same(idsOf((await h.req('GET', '/v1/groups', pinned)).json().data), [homed])
    t.equal((await h.req('GET', `/v1/groups/${root}`, pinned)).statusCode, 404)
    const seen = (await h.req('GET', `/v1/groups/${homed}`, pinned)).json().data
    t.same([seen.screenIds, seen.memberCount], [['scr_e'], 1])
    t.same(idsOf((await h.req('GET', `/v1/groups/${homed}/members`, pinned)).json().data), ['scr_e'])
    t.equal((await h.req('POST', '/v1/groups', pinned, { name: 'X', kind: 'static', screenIds: ['scr_w'] })).statusCode, 422)
    t.equal((await h.req('POST', '/v1/groups', pinned, { name: 'X', kind: 'dynamic', rule: { all: [{ group: root }] } })).statusCode, 422)
    t.equal((await h.req('POST', '/v1/groups', pinned, { name: 'X', nodeId: west, kind: 'static' })).statusCode, 422)
    let res = await h.req('POST', '/v1/groups/preview', pinned, { rule: { all: [{ tag: 'lobby' }] } })
    t.same(res.json().data.count, 1)
    // Replacing the screens keeps the member the pinned key cannot see.
    res = await h.req('PATCH', `/v1/groups/${homed}`, pinned, { screenIds: [] })
    t.same(res.json().data.screenIds, [])
    t.same((await h.req('GET', `/v1/groups/${homed}`, apiKey)).json().data.screenIds, ['scr_w'])
    t.equal((await h.req('GET', `/v1/screens?group=${root}`, pinned)).statusCode, 422)
  })

  t.test('pinned-key sweep: every tags and groups route, and every write that takes a group, keeps a pinned key inside its reach', async (t) => {
    const h = await build(t, {}, { content: InMemoryContentResolver.permissive() })
    const { apiKey, workspaceId } = await h.workspace()
    const east = (await h.req('POST', '/v1/nodes', apiKey, { name: 'East', kind: 'location' })).json().data.id as string
    const west = (await h.req('POST', '/v1/nodes', apiKey, { name: 'West', kind: 'location' })).json().data.id as string
    await seed(h, workspaceId, [
      ['scr_e', east, ['lobby', 'east-only']],
      ['scr_w', west, ['lobby', 'west-only']],
    ])
    const pinned = (await makeKey(h, apiKey, 'all', east)).secret
    const group = async (body: object) => (await h.req('POST', '/v1/groups', apiKey, body)).json().data.id as string
    const root = await group({ name: 'Root lobby', kind: 'dynamic', rule: { all: [{ tag: 'lobby' }] } })
    const homed = await group({ name: 'East list', nodeId: east, kind: 'static', screenIds: ['scr_e', 'scr_w'] })
    const outside = ['scr_w', 'west-only', root, west]
    const leaks = (body: string) => outside.filter((x) => body.includes(x))
    const req = (method: string, url: string, body?: unknown) => h.req(method as 'GET', url, pinned, body)

    // Per route of the targeting domain: what the pinned key tries, and what it must get.
    const CASES: Record<string, () => Promise<void>> = {
      'GET /v1/groups': async () => {
        const res = await req('GET', '/v1/groups')
        t.same(idsOf(res.json().data), [homed], 'list: the group homed in its reach only')
        t.same(leaks(res.body), [])
      },
      'POST /v1/groups': async () => {
        t.equal((await req('POST', '/v1/groups', { name: 'X', kind: 'static', screenIds: ['scr_w'] })).statusCode, 422, 'create: a screen outside')
        t.equal((await req('POST', '/v1/groups', { name: 'X', kind: 'dynamic', rule: { all: [{ group: root }] } })).statusCode, 422, 'a group outside')
        t.equal((await req('POST', '/v1/groups', { name: 'X', kind: 'dynamic', rule: { all: [{ nodeId: west }] } })).statusCode, 422, 'a location outside')
        t.equal((await req('POST', '/v1/groups', { name: 'X', nodeId: west, kind: 'static' })).statusCode, 422, 'homed outside')
      },
      'POST /v1/groups/preview': async () => {
        const res = await req('POST', '/v1/groups/preview', { rule: { all: [{ tag: 'lobby' }] } })
        t.same([res.json().data.count, idsOf(res.json().data.screens)], [1, ['scr_e']], 'preview: the screens it reaches')
        t.same(leaks(res.body), [])
      },
      'GET /v1/groups/:id': async () => {
        t.equal((await req('GET', `/v1/groups/${root}`)).statusCode, 404, 'get: a group homed outside is not found')
        const res = await req('GET', `/v1/groups/${homed}`)
        t.same([res.json().data.screenIds, res.json().data.memberCount], [['scr_e'], 1])
        t.same(leaks(res.body), [])
      },
      'GET /v1/groups/:id/members': async () => {
        t.equal((await req('GET', `/v1/groups/${root}/members`)).statusCode, 404)
        const res = await req('GET', `/v1/groups/${homed}/members?count=1`)
        t.same([idsOf(res.json().data), res.json().total], [['scr_e'], 1], 'members: those it reaches')
        t.same(leaks(res.body), [])
      },
      'PATCH /v1/groups/:id': async () => {
        t.equal((await req('PATCH', `/v1/groups/${root}`, { name: 'Mine' })).statusCode, 404)
        t.equal((await req('PATCH', `/v1/groups/${homed}`, { nodeId: west })).statusCode, 422, 'moved outside')
        t.equal((await h.req('GET', `/v1/groups/${root}`, apiKey)).json().data.name, 'Root lobby')
      },
      'DELETE /v1/groups/:id': async () => {
        t.equal((await req('DELETE', `/v1/groups/${root}`)).statusCode, 404)
        t.equal((await h.req('GET', `/v1/groups/${root}`, apiKey)).statusCode, 200, 'the root group stays')
      },
      'GET /v1/tags': async () => {
        const res = await req('GET', '/v1/tags')
        const counts = Object.fromEntries((res.json().data as { tag: string; count: number }[]).map((x) => [x.tag, x.count]))
        t.match(counts, { 'east-only': 1, lobby: 1 }, 'tags: counted over the screens it reaches')
        t.same(leaks(res.body), [])
      },
      'POST /v1/screens/bulk-tag': async () => {
        t.equal((await req('POST', '/v1/screens/bulk-tag', { groupId: root, add: ['x'] })).statusCode, 422, 'bulk tag: a group outside')
        const res = await req('POST', '/v1/screens/bulk-tag', { groupId: homed, add: ['swept'] })
        t.match(res.json().data, { matched: 1, changed: 1 }, "bulk tag: the group's members it reaches")
        t.same((await h.req('GET', '/v1/screens/scr_w', apiKey)).json().data.tags, ['lobby', 'west-only'], 'the screen outside is untouched')
      },
    }
    const routes = h.app.routeCatalog
      .filter((r) => r.url.startsWith('/v1/groups') || r.url.startsWith('/v1/tags') || r.url === '/v1/screens/bulk-tag')
      .map((r) => `${r.method} ${r.url}`)
    t.ok(routes.length >= 9, routes.join(', '))
    const uncovered = routes.filter((r) => !CASES[r])
    t.same(uncovered, [], 'every tags and groups route has a case here')
    for (const r of routes) if (CASES[r]) await CASES[r]!()

    // Every write that takes a group refuses one outside the reach (422), and reaches only what the key reaches.
    const content = { contentKind: 'media', contentId: 'med_a' }
    for (const [url, body] of [
      ['/v1/casts', { ...content, scopeKind: 'group', groupId: root }],
      ['/v1/emergencies', { ...content, scopeKind: 'group', groupId: root }],
      ['/v1/screens/bulk-assign', { ...content, groupId: root }],
      ['/v1/serial-jobs', { value: 'ON', groupId: root }],
      ['/v1/alert-rules', { name: 'X', config: { codes: ['connection-lost'], scopeKind: 'group', scopeId: root } }],
    ] as const) {
      const res = await req('POST', url, body)
      t.equal(res.statusCode, 422, `${url}: a group outside the reach`)
      // (The answer may repeat the id the caller sent; it tells nothing of the group.)
      t.same(
        leaks(res.body).filter((x) => x !== root),
        [],
        `${url}: names nothing outside`,
      )
    }
    t.equal((await req('GET', `/v1/screens?group=${root}`)).statusCode, 422)
    t.same(idsOf((await req('GET', `/v1/screens?group=${homed}`)).json().data), ['scr_e'])
    const cast = await req('POST', '/v1/casts', { ...content, scopeKind: 'group', groupId: homed })
    t.equal(cast.statusCode, 201, cast.body)
    t.equal(cast.json().data.screenCount, 1, 'a cast to the group takes the member it reaches')
    const rule = await req('POST', '/v1/alert-rules', { name: 'East', config: { codes: ['connection-lost'], scopeKind: 'group', scopeId: homed } })
    t.equal(rule.statusCode, 201, rule.body)
  })
})
