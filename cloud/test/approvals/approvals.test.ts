// Approvals through inject on the real content library: policies and inheritance, held
// creations (unplayable until approved), held updates (the live item unchanged until the
// last level approves), levels with escalation, who may decide, 409 once decided,
// withdrawal, media held too, and the approval.* events through the outbox.
import { servicesOf } from '../../src/app.js'
import t, { type Test } from 'tap'
import { makeKey } from '../helpers.js'
import { pairScreen } from '../screenHelpers.js'
import { buildMedia, PNG_1x1 } from '../content/fixtures.js'
import type { DomainEvent } from '../../src/domains/events/EventBus.js'

async function setup(t: Test) {
  const h = await buildMedia(t)
  const { apiKey, workspaceId } = await h.workspace()
  const node = async (name: string, parentId: string | null = null) => (await h.req('POST', '/v1/nodes', apiKey, { name, parentId })).json().data.id as string
  const region = await node('Region')
  const store = await node('Store', region)
  const user = async (email: string, name: string) => {
    const d = (await h.req('POST', '/v1/users', apiKey, { email, name, role: 'editor' })).json().data
    return { id: d.id as string, token: d.sessionToken as string }
  }
  const ann = await user('ann@example.com', 'Ann')
  const bob = await user('bob@example.com', 'Bob')
  const editor = (
    await makeKey(h, apiKey, ['playlist.view', 'playlist.edit', 'media.view', 'media.create', 'media.edit', 'approval.view', 'approval.request', 'screen.view'])
  ).secret
  const events: DomainEvent[] = []
  servicesOf(h.app).events.subscribe((e) => {
    if (e.event.startsWith('approval.')) events.push(e)
  })
  const flush = () => servicesOf(h.app).outbox.dispatch()
  return { h, apiKey, workspaceId, region, store, ann, bob, editor, events, flush }
}

t.test('policies: the default, partial PUT, inheritance, approvers must be users of the workspace', async (t) => {
  const { h, apiKey, region, store, ann } = await setup(t)
  const fresh = await h.req('GET', `/v1/nodes/${store}/approval-policy`, apiKey)
  t.equal(fresh.statusCode, 200)
  t.match(fresh.json().data, {
    nodeId: store,
    required: false,
    inheritFromParent: true,
    escalateUpTiers: false,
    allowSharedExemptions: false,
    approvers: [],
    effective: { required: false, sourceNodeId: null },
  })

  const put = await h.req('PUT', `/v1/nodes/${region}/approval-policy`, apiKey, { required: true, approvers: [ann.id, ann.id] })
  t.equal(put.statusCode, 200, put.body)
  t.match(put.json().data, { required: true, inheritFromParent: true, approvers: [ann.id], effective: { required: true, sourceNodeId: region } })
  t.match((await h.req('GET', `/v1/nodes/${store}/approval-policy`, apiKey)).json().data, {
    required: false,
    effective: { required: true, approvers: [ann.id], sourceNodeId: region },
  })
  const own = await h.req('PUT', `/v1/nodes/${store}/approval-policy`, apiKey, { inheritFromParent: false })
  t.match(own.json().data, { required: false, inheritFromParent: false, effective: { required: false, sourceNodeId: store } })
  const self = await h.req('PUT', `/v1/nodes/${store}/approval-policy`, apiKey, { inheritFromParent: true, required: true })
  t.match(
    self.json().data,
    { effective: { required: true, approvers: [], sourceNodeId: store } },
    'a location that requires approval itself uses its own policy',
  )

  for (const body of [{ approvers: ['usr_nobody'] }, { required: 'yes' }, { colour: 'red' }, { approvers: 'x' }]) {
    const r = await h.req('PUT', `/v1/nodes/${region}/approval-policy`, apiKey, body)
    t.equal(r.statusCode, 422, JSON.stringify(body))
    t.equal(r.json().error, 'validation_error')
  }
  const { apiKey: other } = await h.workspace('Other')
  const foreign = (await h.req('POST', '/v1/users', other, { email: 'zed@example.com', role: 'viewer' })).json().data.id
  t.equal((await h.req('PUT', `/v1/nodes/${region}/approval-policy`, apiKey, { approvers: [foreign] })).statusCode, 422, "another workspace's user")
  t.match((await h.req('GET', `/v1/nodes/${region}/approval-policy`, apiKey)).json().data, { approvers: [ann.id] }, 'refused PUTs changed nothing')
  t.equal((await h.req('GET', '/v1/nodes/nod_nope/approval-policy', apiKey)).statusCode, 404)
  const viewer = (await makeKey(h, apiKey, ['node.view'])).secret
  t.equal((await h.req('PUT', `/v1/nodes/${region}/approval-policy`, viewer, { required: false })).statusCode, 403, 'approval.decide needed')
})

t.test('a credential held by a policy cannot switch it off: changing a policy needs approval.decide', async (t) => {
  const { h, apiKey, region, store, editor } = await setup(t)
  t.equal((await h.req('PUT', `/v1/nodes/${store}/approval-policy`, apiKey, { required: true })).statusCode, 200)
  // Everything a location manager and content editor holds, but not approval.decide.
  const manager = (
    await makeKey(h, apiKey, ['node.view', 'node.edit', 'playlist.view', 'playlist.edit', 'approval.view', 'approval.request', 'screen.view', 'screen.edit'])
  ).secret
  for (const [node, body] of [
    [store, { required: false }],
    [store, { inheritFromParent: true }],
    [region, { required: true, approvers: [] }],
  ] as const) {
    const off = await h.req('PUT', `/v1/nodes/${node}/approval-policy`, manager, body)
    t.equal(off.statusCode, 403, JSON.stringify(body))
    t.same(off.json(), { error: 'forbidden', message: 'Missing permission: approval.decide' })
  }
  t.match((await h.req('GET', `/v1/nodes/${store}/approval-policy`, manager)).json().data, { required: true }, 'reading stays with node.view')
  t.match((await h.req('POST', '/v1/playlists', manager, { name: 'Still held', nodeId: store })).json().data, { approval: { state: 'pending' } })
  t.match((await h.req('POST', '/v1/playlists', editor, { name: 'Held too', nodeId: store })).json().data, { approval: { state: 'pending' } })
  // A key that decides approvals may change the policy; so does the owner.
  const decider = (await makeKey(h, apiKey, ['node.view', 'approval.decide'])).secret
  const byDecider = await h.req('PUT', `/v1/nodes/${store}/approval-policy`, decider, { escalateUpTiers: true })
  t.equal(byDecider.statusCode, 200, byDecider.body)
  const byOwner = await h.req('PUT', `/v1/nodes/${store}/approval-policy`, apiKey, { required: false })
  t.equal(byOwner.statusCode, 200)
  t.match(byOwner.json().data, { required: false, escalateUpTiers: true })
})

t.test('a held creation: unplayable until every level approved; levels, who decides, 409 once decided', async (t) => {
  const { h, apiKey, region, store, ann, bob, editor, events, flush } = await setup(t)
  await h.req('PUT', `/v1/nodes/${region}/approval-policy`, apiKey, { required: true, inheritFromParent: false, approvers: [ann.id] })
  await h.req('PUT', `/v1/nodes/${store}/approval-policy`, apiKey, { required: true, inheritFromParent: false, approvers: [bob.id], escalateUpTiers: true })
  const img = await h.ready(apiKey, 'a.png', PNG_1x1)
  const screen = await pairScreen(h, apiKey, 'Store screen', store)

  const created = await h.req('POST', '/v1/playlists', editor, { name: 'Deals', nodeId: store, items: [{ kind: 'media', id: img.id }] })
  t.equal(created.statusCode, 201, created.body)
  const pl = created.json().data
  t.match(pl, { name: 'Deals', approval: { state: 'pending', requestId: /^ar_/ } })
  const id = pl.approval.requestId as string

  const assign = () => h.req('POST', `/v1/screens/${screen.screenId}/assign`, apiKey, { contentKind: 'playlist', contentId: pl.id })
  const refused = await assign()
  t.equal(refused.statusCode, 422)
  t.equal(refused.json().error, 'content_unplayable')
  const cast = await h.req('POST', '/v1/casts', apiKey, { contentKind: 'playlist', contentId: pl.id, scopeKind: 'screens', screenIds: [screen.screenId] })
  t.equal(cast.statusCode, 422, cast.body)
  t.equal(cast.json().error, 'content_unplayable')

  const req = (await h.req('GET', `/v1/approvals/${id}`, editor)).json().data
  t.match(req, {
    id,
    contentKind: 'playlist',
    contentId: pl.id,
    contentName: 'Deals',
    nodeId: store,
    nodeName: 'Store',
    requestedById: /^apikey:/,
    state: 'pending',
    currentLevel: 0,
    levels: [
      { nodeId: store, nodeName: 'Store', approverIds: [bob.id], approverNames: ['Bob'] },
      { nodeId: region, nodeName: 'Region', approverIds: [ann.id], approverNames: ['Ann'] },
    ],
    decisions: [],
    changes: [{ kind: 'created', label: 'New playlist', detail: 'Deals' }],
  })
  const list = (await h.req('GET', '/v1/approvals?state=pending', editor)).json()
  t.same(
    list.data.map((r: { id: string }) => r.id),
    [id],
  )
  t.same((await h.req('GET', '/v1/approvals?state=approved', editor)).json().data, [])
  t.equal((await h.req('GET', '/v1/approvals?state=maybe', editor)).statusCode, 422)

  t.equal((await h.req('POST', `/v1/approvals/${id}/approve`, editor)).statusCode, 403, 'no approval.decide')
  const annFirst = await h.req('POST', `/v1/approvals/${id}/approve`, ann.token)
  t.equal(annFirst.statusCode, 403, 'Ann is not an approver of level 0')
  t.equal(annFirst.json().error, 'forbidden')
  const bobOk = await h.req('POST', `/v1/approvals/${id}/approve`, bob.token, { note: 'fine by me' })
  t.equal(bobOk.statusCode, 200, bobOk.body)
  t.match(bobOk.json().data, { state: 'pending', currentLevel: 1, decisions: [{ level: 0, decidedById: bob.id, decidedByName: 'Bob', note: 'fine by me' }] })
  t.equal((await assign()).statusCode, 422, 'still not playable after the first level')
  t.equal((await h.req('POST', `/v1/approvals/${id}/approve`, bob.token)).statusCode, 403, 'Bob does not decide level 1')
  const annOk = await h.req('POST', `/v1/approvals/${id}/approve`, ann.token)
  t.equal(annOk.statusCode, 200)
  t.match(annOk.json().data, { state: 'approved', currentLevel: 1 })
  t.equal((await assign()).statusCode, 200, 'approved content plays')
  for (const action of ['approve', 'reject', 'withdraw']) {
    const again = await h.req('POST', `/v1/approvals/${id}/${action}`, action === 'withdraw' ? editor : ann.token)
    t.equal(again.statusCode, 409, `${action} after the decision`)
    t.equal(again.json().error, 'conflict')
  }
  t.notOk((await h.req('GET', `/v1/playlists/${pl.id}`, editor)).json().data.approval, 'no pending mark once approved')

  await flush()
  t.match(
    events.map((e) => [e.event, e.data]),
    [
      ['approval.requested', { approvalId: id, contentKind: 'playlist', contentId: pl.id, contentName: 'Deals', nodeId: store, requestedById: /^apikey:/ }],
      ['approval.decided', { approvalId: id, state: 'approved', decidedById: ann.id, decidedByName: 'Ann' }],
    ],
  )
  t.equal(events.length, 2, 'the intermediate approval sends nothing')

  // The owner key holds approval.decide: its changes are not held.
  const direct = await h.req('POST', '/v1/playlists', apiKey, { name: 'Owner list', nodeId: store })
  t.notOk(direct.json().data.approval)
  // A key pinned outside the level's location cannot decide it; one pinned at the store can.
  const held = (await h.req('POST', '/v1/playlists', editor, { name: 'Second', nodeId: store })).json().data.approval.requestId
  const otherNode = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Elsewhere' })).json().data.id
  const outside = (await makeKey(h, apiKey, ['approval.decide', 'approval.view'], otherNode)).secret
  t.equal((await h.req('POST', `/v1/approvals/${held}/approve`, outside)).statusCode, 404, 'outside its pin the request does not exist')
  const inside = (await makeKey(h, apiKey, ['approval.decide', 'approval.view'], store)).secret
  t.match((await h.req('POST', `/v1/approvals/${held}/approve`, inside)).json().data, { state: 'pending', currentLevel: 1 })
  t.equal((await h.req('POST', `/v1/approvals/${held}/approve`, inside)).statusCode, 403, 'level 1 (Region) is above its pin')
  t.equal((await h.req('GET', `/v1/approvals/${held}`, outside)).statusCode, 404)
  t.same((await h.req('GET', '/v1/approvals', outside)).json().data, [], 'the list keeps to the pin')
})

t.test('a held update keeps the approved version; rejection and withdrawal discard it', async (t) => {
  const { h, apiKey, store, ann, editor, events, flush } = await setup(t)
  await h.req('PUT', `/v1/nodes/${store}/approval-policy`, apiKey, { required: true, approvers: [ann.id] })
  const a = await h.ready(apiKey, 'a.png', PNG_1x1)
  const b = await h.ready(apiKey, 'b.png', PNG_1x1)
  const pl = (await h.req('POST', '/v1/playlists', apiKey, { name: 'Live', nodeId: store, items: [{ kind: 'media', id: a.id }] })).json().data
  t.notOk(pl.approval)

  const patch = await h.req('PATCH', `/v1/playlists/${pl.id}`, editor, { name: 'Live v2', items: [{ kind: 'media', id: b.id }] })
  t.equal(patch.statusCode, 200, patch.body)
  t.match(patch.json().data, { name: 'Live v2', items: [{ id: b.id }], approval: { state: 'pending' } })
  const rid = patch.json().data.approval.requestId
  const live = (await h.req('GET', `/v1/playlists/${pl.id}`, editor)).json().data
  t.match(live, { name: 'Live', items: [{ id: a.id }], approval: { state: 'pending', requestId: rid } }, 'the item is unchanged while held')
  t.match((await h.req('GET', `/v1/approvals/${rid}`, editor)).json().data.changes, [
    { kind: 'name', label: 'Name', detail: '"Live" → "Live v2"' },
    { kind: 'list', label: 'items' },
  ])
  const second = await h.req('PATCH', `/v1/playlists/${pl.id}`, editor, { name: 'Live v3' })
  t.equal(second.statusCode, 409, 'one held change at a time')

  const rejected = await h.req('POST', `/v1/approvals/${rid}/reject`, ann.token, { note: 'wrong prices' })
  t.match(rejected.json().data, { state: 'rejected', decisions: [{ note: 'wrong prices' }] })
  t.match((await h.req('GET', `/v1/playlists/${pl.id}`, editor)).json().data, { name: 'Live', items: [{ id: a.id }] })

  const again = (await h.req('PATCH', `/v1/playlists/${pl.id}`, editor, { name: 'Live v4' })).json().data.approval.requestId
  const otherEditor = (await makeKey(h, apiKey, ['approval.request', 'approval.view'])).secret
  t.equal((await h.req('POST', `/v1/approvals/${again}/withdraw`, otherEditor)).statusCode, 403, 'only the requester withdraws')
  t.match((await h.req('POST', `/v1/approvals/${again}/withdraw`, editor)).json().data, { state: 'withdrawn' })
  t.equal((await h.req('GET', `/v1/playlists/${pl.id}`, editor)).json().data.name, 'Live')

  const third = (await h.req('PATCH', `/v1/playlists/${pl.id}`, editor, { name: 'Live v5' })).json().data.approval.requestId
  t.match((await h.req('POST', `/v1/approvals/${third}/approve`, ann.token)).json().data, { state: 'approved' })
  t.equal((await h.req('GET', `/v1/playlists/${pl.id}`, editor)).json().data.name, 'Live v5', 'the approval makes it live')

  await flush()
  t.same(
    events.filter((e) => e.event === 'approval.decided').map((e) => e.data.state),
    ['rejected', 'withdrawn', 'approved'],
  )

  // A rejected new item is discarded.
  const fresh = (await h.req('POST', '/v1/playlists', editor, { name: 'Fresh', nodeId: store })).json().data
  await h.req('POST', `/v1/approvals/${fresh.approval.requestId}/reject`, ann.token)
  t.equal((await h.req('GET', `/v1/playlists/${fresh.id}`, editor)).statusCode, 404)
})

t.test('media are held too: a new file is not playable until approved; a rename waits', async (t) => {
  const { h, apiKey, store, ann, editor } = await setup(t)
  await h.req('PUT', `/v1/nodes/${store}/approval-policy`, apiKey, { required: true, approvers: [ann.id] })
  const screen = await pairScreen(h, apiKey, 'Store screen', store)
  const up = await h.upload(editor, { name: 'new.png', nodeId: store, file: { filename: 'new.png', data: PNG_1x1 } })
  t.equal(up.statusCode, 201, up.body)
  t.match(up.json().data, { approval: { state: 'pending', requestId: /^ar_/ } })
  await servicesOf(h.app).media.processPending()
  const id = up.json().data.id
  const assign = () => h.req('POST', `/v1/screens/${screen.screenId}/assign`, apiKey, { contentKind: 'media', contentId: id })
  t.equal((await assign()).json().error, 'content_unplayable')
  await h.req('POST', `/v1/approvals/${up.json().data.approval.requestId}/approve`, ann.token)
  t.equal((await assign()).statusCode, 200)

  const rename = await h.req('PATCH', `/v1/media/${id}`, editor, { name: 'renamed.png' })
  t.equal(rename.statusCode, 200, rename.body)
  t.match(rename.json().data, { name: 'renamed.png', approval: { state: 'pending' } })
  t.equal((await h.req('GET', `/v1/media/${id}`, editor)).json().data.name, 'new.png')
  await h.req('POST', `/v1/approvals/${rename.json().data.approval.requestId}/approve`, ann.token)
  t.equal((await h.req('GET', `/v1/media/${id}`, editor)).json().data.name, 'renamed.png')
})
