// Every kind that can go on a screen is held by an approval policy: the kinds are read
// from the kind registry (content/kinds.ts), so a new playable kind without approvals
// fails here. For each one, a key without approval.decide creates it at a location that
// requires approval (held, unplayable: 422 content_unplayable on assign), and an edit of
// an approved, assigned item leaves the screen's desired state on the approved version
// until the approval.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { makeKey } from '../helpers.js'
import { pairScreen } from '../screenHelpers.js'
import { buildMedia, PNG_1x1 } from '../content/fixtures.js'
import { KINDS, type ItemKind } from '../../src/domains/content/kinds.js'

/** A valid create body per playable kind, carrying `marker` somewhere a device sees; and an edit carrying another. */
const bodies: Partial<Record<ItemKind, (mediaId: string, marker: string) => Record<string, unknown>>> = {
  playlist: (mediaId, marker) => ({ items: [{ kind: 'media', id: mediaId, durationMs: marker.length * 1000 }] }),
  schedule: (mediaId, marker) => ({ fallback: { kind: 'media', id: mediaId }, timezone: marker.endsWith('2') ? 'Europe/Paris' : 'Europe/Berlin' }),
  creative: (_m, marker) => ({ design: { text: marker } }),
  layout: (_m, marker) => ({ zones: [{ id: marker, x: 0, y: 0, width: 100, height: 100, content: null }] }),
  signage: (_m, marker) => ({ category: 'menu', definition: { text: marker } }),
  app: (_m, marker) => ({ appKey: 'weather', config: { location: marker } }),
}

const playable = KINDS.filter((k) => k.playable)

t.test('the governed kinds are the playable kinds of the registry, and media', async (t) => {
  const h = await buildMedia(t)
  const { approvals } = servicesOf(h.app)
  t.ok(playable.length >= 6, 'the registry lists playable kinds')
  for (const k of ['media', ...playable.map((k) => k.kind)]) t.ok(approvals.governs(k), `${k} is held`)
  for (const k of KINDS) if (!k.playable) t.notOk(approvals.governs(k.kind), `${k.kind} cannot play and is not held`)
})

t.test('every playable kind is held: creation unplayable, an edit never reaches the screen before approval', async (t) => {
  const h = await buildMedia(t)
  const { apiKey, workspaceId } = await h.workspace()
  const store = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Store' })).json().data.id as string
  const ann = (await h.req('POST', '/v1/users', apiKey, { email: 'ann@example.com', name: 'Ann', role: 'editor' })).json().data
  t.equal((await h.req('PUT', `/v1/nodes/${store}/approval-policy`, apiKey, { required: true, approvers: [ann.id] })).statusCode, 200)
  // Everything an editor of content needs, but not approval.decide.
  const editor = (
    await makeKey(h, apiKey, [
      'playlist.view',
      'playlist.edit',
      'schedule.view',
      'schedule.edit',
      'content.view',
      'content.edit',
      'media.view',
      'approval.view',
      'approval.request',
      'screen.view',
      'screen.edit',
    ])
  ).secret
  const img = await h.ready(apiKey, 'a.png', PNG_1x1, { nodeId: store })
  const screen = await pairScreen(h, apiKey, 'Till', store)
  const desired = async () => JSON.stringify(await servicesOf(h.app).desiredState.build(workspaceId, screen.screenId))

  for (const def of playable) {
    await t.test(def.kind, async (t) => {
      const body = bodies[def.kind]
      if (!body) {
        t.fail(`no create body for the playable kind ${def.kind}: add one to this test`)
        return
      }
      // Held creation.
      const created = await h.req('POST', `/v1/${def.path}`, editor, { name: `New ${def.kind}`, nodeId: store, ...body(img.id, 'held-1') })
      t.equal(created.statusCode, 201, created.body)
      t.match(created.json().data, { approval: { state: 'pending', requestId: /^ar_/ } }, 'the creation waits for approval')
      const assignHeld = await h.req('POST', `/v1/screens/${screen.screenId}/assign`, editor, { contentKind: def.kind, contentId: created.json().data.id })
      t.equal(assignHeld.statusCode, 422, assignHeld.body)
      t.equal(assignHeld.json().error, 'content_unplayable')

      // An approved item on the screen; the editor's change is held and never reaches it.
      const live = await h.req('POST', `/v1/${def.path}`, apiKey, { name: `Live ${def.kind} v1`, nodeId: store, ...body(img.id, 'live-1') })
      t.equal(live.statusCode, 201, live.body)
      t.notOk(live.json().data.approval, "the owner's creation is not held")
      const id = live.json().data.id as string
      const assigned = await h.req('POST', `/v1/screens/${screen.screenId}/assign`, editor, { contentKind: def.kind, contentId: id })
      t.equal(assigned.statusCode, 200, assigned.body)
      t.match(await desired(), `Live ${def.kind} v1`)

      const edit = await h.req('PATCH', `/v1/${def.path}/${id}`, editor, { name: `Live ${def.kind} v2`, ...body(img.id, 'edit-22') })
      t.equal(edit.statusCode, 200, edit.body)
      t.match(edit.json().data, { approval: { state: 'pending' } }, 'the edit waits for approval')
      const before = await desired()
      t.match(before, `Live ${def.kind} v1`, 'the screen keeps the approved version')
      t.notMatch(before, `Live ${def.kind} v2`)
      if (def.kind === 'signage') {
        t.match(before, '"text":"live-1"', 'the signage text on the screen is the approved one')
        t.notMatch(before, 'edit-22', 'the edited text is not on the screen')
      }
      t.equal((await h.req('POST', `/v1/approvals/${edit.json().data.approval.requestId}/approve`, ann.sessionToken)).statusCode, 200)
      const after = await desired()
      t.match(after, `Live ${def.kind} v2`, 'the approval makes the edit live')
      if (def.kind === 'signage') t.match(after, '"text":"edit-22"')
    })
  }
})
