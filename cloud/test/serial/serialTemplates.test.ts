// Serial templates (SPEC "SerialTemplate", "Serial templates") through inject: every rule,
// bad input with the cause named, ids kept across edits, permissions per location.
import t from 'tap'
import { makeKey, type Harness } from '../helpers.js'
import { onOneEngine } from '../db/engines.js'

// The interface, not the SQL: one engine (SQLite, or SVC_TEST_ENGINE=postgres; db/engines.ts onOneEngine).
// The tests share one app, each in a workspace of its own (the templates it lists are that workspace's).
onOneEngine(t, async (t, build) => {
  const shared = await build(t)
  const path = '/v1/serial-templates'
  const create = (h: Harness, key: string, body: unknown) => h.req('POST', path, key, body)

  t.test('create: ids, defaults, hexPreview, name cut to 120, read back whole', async (t) => {
    const h = shared
    const { apiKey, workspaceId } = await h.workspace()
    const res = await create(h, apiKey, {
      name: ` ${'N'.repeat(130)}`,
      model: 'QM55B',
      items: [
        { name: 'Power on', value: 'AA 11 01 01 01 14', encoding: 'hex' },
        { name: 'LG on', value: 'ka 01 01', eol: 'cr' },
        { name: 'Weird', value: 'AB', encoding: 'base64', eol: 'tab' },
        { name: 'Both', value: '0xAA 0x0D', encoding: 'HEX', eol: 'CRLF' },
      ],
    })
    t.equal(res.statusCode, 201, res.body)
    const d = res.json().data
    t.match(d.id, /^sertpl_[0-9a-z]{26}$/)
    t.equal(d.spaceId, workspaceId)
    t.equal(d.name, 'N'.repeat(120), 'trimmed and cut to 120')
    t.equal(d.model, 'QM55B')
    t.equal(d.nodeId, null)
    t.ok(d.createdAt && d.updatedAt)
    t.equal(d.items.length, 4)
    for (const it of d.items) t.match(it.id, /^sti_[0-9a-z]{26}$/)
    t.equal(new Set(d.items.map((i: { id: string }) => i.id)).size, 4, 'distinct item ids')
    t.match(d.items[0], { name: 'Power on', value: 'AA 11 01 01 01 14', encoding: 'hex', eol: 'none', hexPreview: 'AA 11 01 01 01 14' })
    t.match(d.items[1], { encoding: 'ascii', eol: 'cr', hexPreview: '6B 61 20 30 31 20 30 31 0D' })
    t.match(d.items[2], { encoding: 'ascii', eol: 'none', hexPreview: '41 42' }, 'unknown encoding reads as ascii, unknown eol as none')
    t.match(d.items[3], { encoding: 'hex', eol: 'crlf', hexPreview: 'AA 0D 0D 0A' })
    const got = await h.req('GET', `${path}/${d.id}`, apiKey)
    t.equal(got.statusCode, 200)
    t.same(got.json().data, d)
    const bare = await create(h, apiKey, { name: 'Empty' })
    t.equal(bare.statusCode, 201)
    t.same(bare.json().data.items, [], 'items are optional')
    t.equal(bare.json().data.model, null)
  })

  t.test('422 validation_error names the cause', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const item = (x: object) => ({ name: 'T', items: [x] })
    const cases: [string, unknown, RegExp][] = [
      ['missing name', { items: [] }, /name is required/],
      ['empty name', { name: '   ' }, /name must not be empty/],
      ['no command name', item({ value: 'A' }), /items\[0\]: name is required/],
      ['no value', item({ name: 'x' }), /value is required/],
      ['empty value', item({ name: 'x', value: '' }), /value is required/],
      ['too long', item({ name: 'x', value: 'A'.repeat(513) }), /too long.*513/],
      ['no bytes', item({ name: 'x', value: '   ', encoding: 'hex' }), /no bytes/],
      ['bad hex', item({ name: 'x', value: 'GG', encoding: 'hex' }), /non-hex character "G"/],
      ['odd hex', item({ name: 'x', value: 'AA1', encoding: 'hex' }), /odd number of digits/],
      ['non-ascii', item({ name: 'x', value: 'é' }), /non-ASCII/],
      [
        'duplicate id',
        {
          name: 'T',
          items: [
            { id: 'sti_one', name: 'a', value: 'A' },
            { id: 'sti_one', name: 'b', value: 'B' },
          ],
        },
        /duplicate id/,
      ],
      ['bad id', item({ id: 'xyz', name: 'x', value: 'A' }), /command id/],
      ['over 200', { name: 'T', items: Array.from({ length: 201 }, (_, i) => ({ name: `c${i}`, value: 'A' })) }, /201 commands; at most 200/],
      ['items not an array', { name: 'T', items: 'x' }, /items/],
    ]
    for (const [label, body, message] of cases) {
      const res = await create(h, apiKey, body)
      t.equal(res.statusCode, 422, label)
      t.equal(res.json().error, 'validation_error', label)
      t.match(res.json().message, message, label)
    }
    const ok512 = await create(h, apiKey, item({ name: 'x', value: 'A'.repeat(512) }))
    t.equal(ok512.statusCode, 201, '512 characters are allowed')
    const ok200 = await create(h, apiKey, { name: 'T', items: Array.from({ length: 200 }, (_, i) => ({ name: `c${i}`, value: 'A' })) })
    t.equal(ok200.statusCode, 201, '200 commands are allowed')
    const node = await create(h, apiKey, { name: 'T', nodeId: 'node_nope' })
    t.equal(node.statusCode, 422)
    t.equal(node.json().error, 'invalid_node')
    t.equal((await h.req('GET', path, apiKey)).json().data.length, 2, 'nothing invalid was stored')
  })

  t.test('PATCH: items replace the list, existing ids are kept, new ones issued, unknown refused', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const tpl = (
      await create(h, apiKey, {
        name: 'T',
        items: [
          { name: 'on', value: 'ON' },
          { name: 'off', value: 'OFF' },
        ],
      })
    ).json().data
    const [on, off] = tpl.items
    h.clock.advance(1000)
    const res = await h.req('PATCH', `${path}/${tpl.id}`, apiKey, {
      items: [
        { id: off.id, name: 'off!', value: '4F', encoding: 'hex' },
        { name: 'mute', value: 'M' },
      ],
    })
    t.equal(res.statusCode, 200, res.body)
    const d = res.json().data
    t.equal(d.items.length, 2, 'the given list replaces the stored one')
    t.equal(d.items[0].id, off.id, 'an item carrying an existing id keeps it')
    t.match(d.items[0], { name: 'off!', hexPreview: '4F', encoding: 'hex' })
    t.not(d.items[1].id, on.id)
    t.match(d.items[1].id, /^sti_/, 'one without an id gets a new id')
    t.equal(d.name, 'T', 'omitted fields stay')
    t.not(d.updatedAt, tpl.updatedAt)
    t.equal(d.createdAt, tpl.createdAt)

    const unknown = await h.req('PATCH', `${path}/${tpl.id}`, apiKey, { items: [{ id: on.id, name: 'x', value: 'A' }] })
    t.equal(unknown.statusCode, 422, 'an id not (or no longer) in the template is refused')
    t.match(unknown.json().message, /not a command of this template/)
    const dup = await h.req('PATCH', `${path}/${tpl.id}`, apiKey, {
      items: [
        { id: off.id, name: 'a', value: 'A' },
        { id: off.id, name: 'b', value: 'B' },
      ],
    })
    t.equal(dup.statusCode, 422)
    t.match(dup.json().message, /duplicate id/)
    const empty = await h.req('PATCH', `${path}/${tpl.id}`, apiKey, { name: '' })
    t.equal(empty.statusCode, 422)
    t.equal(empty.json().error, 'validation_error')
    const badNode = await h.req('PATCH', `${path}/${tpl.id}`, apiKey, { nodeId: 'node_nope' })
    t.equal(badNode.json().error, 'invalid_node')
    const renamed = await h.req('PATCH', `${path}/${tpl.id}`, apiKey, { name: 'R'.repeat(200), model: null })
    t.equal(renamed.json().data.name.length, 120)
    t.equal(renamed.json().data.model, null)
    t.same(renamed.json().data.items, d.items, 'items untouched when not given')
    t.equal((await h.req('PATCH', `${path}/sertpl_nope`, apiKey, { name: 'x' })).statusCode, 404)
  })

  t.test('DELETE answers data.ok; the template is gone; GET list is not paged', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const ids: string[] = []
    for (let i = 0; i < 3; i++) ids.push((await create(h, apiKey, { name: `T${i}` })).json().data.id)
    const list = await h.req('GET', `${path}?limit=1`, apiKey)
    t.equal(list.statusCode, 200)
    t.equal(list.json().data.length, 3, 'not paged')
    t.notOk('nextCursor' in list.json())
    const del = await h.req('DELETE', `${path}/${ids[0]}`, apiKey)
    t.equal(del.statusCode, 200)
    t.same(del.json(), { data: { ok: true } })
    t.equal((await h.req('GET', `${path}/${ids[0]}`, apiKey)).statusCode, 404)
    t.equal((await h.req('DELETE', `${path}/${ids[0]}`, apiKey)).statusCode, 404)
    t.equal((await h.req('GET', path, apiKey)).json().data.length, 2)
  })

  t.test('permissions per location: screen.view reads, screen.edit changes, pinned keys see their subtree', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const north = (await h.req('POST', '/v1/nodes', apiKey, { name: 'North' })).json().data.id
    const south = (await h.req('POST', '/v1/nodes', apiKey, { name: 'South' })).json().data.id
    const inner = (await h.req('POST', '/v1/nodes', apiKey, { name: 'North lobby', parentId: north })).json().data.id
    const atRoot = (await create(h, apiKey, { name: 'root' })).json().data
    const atNorth = (await create(h, apiKey, { name: 'north', nodeId: north })).json().data
    const atInner = (await create(h, apiKey, { name: 'inner', nodeId: inner })).json().data
    const atSouth = (await create(h, apiKey, { name: 'south', nodeId: south })).json().data

    const viewer = (await makeKey(h, apiKey, ['screen.view'])).secret
    const none = (await makeKey(h, apiKey, ['node.view'])).secret
    const pinned = (await makeKey(h, apiKey, ['screen.view', 'screen.edit'], north)).secret

    t.equal((await h.req('GET', path, viewer)).json().data.length, 4)
    const noView = await h.req('GET', path, none)
    t.equal(noView.statusCode, 403)
    t.equal(noView.json().message, 'Missing permission: screen.view')
    t.equal((await h.req('GET', `${path}/${atRoot.id}`, none)).statusCode, 403)
    for (const [m, u, b] of [
      ['POST', path, { name: 'x' }],
      ['PATCH', `${path}/${atRoot.id}`, { name: 'x' }],
      ['DELETE', `${path}/${atRoot.id}`, undefined],
    ] as const) {
      const res = await h.req(m, u, viewer, b)
      t.equal(res.statusCode, 403, `${m} needs screen.edit`)
      t.equal(res.json().message, 'Missing permission: screen.edit')
    }

    const seen = (await h.req('GET', path, pinned))
      .json()
      .data.map((x: { id: string }) => x.id)
      .sort()
    t.same(seen, [atNorth.id, atInner.id].sort(), 'a pinned key lists only its subtree')
    t.equal((await h.req('GET', `${path}/${atSouth.id}`, pinned)).statusCode, 404)
    t.equal((await h.req('GET', `${path}/${atRoot.id}`, pinned)).statusCode, 404)
    t.equal((await h.req('PATCH', `${path}/${atSouth.id}`, pinned, { name: 'x' })).statusCode, 404)

    const made = (await create(h, pinned, { name: 'mine' })).json().data
    t.equal(made.nodeId, north, 'a pinned key creates at its own location by default')
    t.equal((await create(h, pinned, { name: 'x', nodeId: inner })).statusCode, 201)
    const elsewhere = await create(h, pinned, { name: 'x', nodeId: south })
    t.equal(elsewhere.statusCode, 403, 'no screen.edit at the destination')
    t.equal(elsewhere.json().error, 'forbidden')
    const move = await h.req('PATCH', `${path}/${atInner.id}`, pinned, { nodeId: south })
    t.equal(move.statusCode, 403, 'moving out of reach is refused')
    t.equal((await h.req('PATCH', `${path}/${atInner.id}`, pinned, { nodeId: null })).statusCode, 403, 'so is moving to the root')
    t.equal((await h.req('PATCH', `${path}/${atInner.id}`, pinned, { nodeId: 'node_nope' })).json().error, 'invalid_node')
    const within = await h.req('PATCH', `${path}/${atInner.id}`, pinned, { nodeId: north })
    t.equal(within.statusCode, 200)
    t.equal(within.json().data.nodeId, north)
    t.equal((await h.req('GET', `${path}/${atInner.id}`, apiKey)).json().data.nodeId, north)

    const nodeDel = await h.req('DELETE', `/v1/nodes/${south}`, apiKey)
    t.equal(nodeDel.statusCode, 409, 'a location holding a template is not deleted')
    t.match(nodeDel.json().message, /serial template/)
  })
})
