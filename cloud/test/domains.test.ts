// The domain-level harness (domains.ts): it wires only what the named provisions need, builds
// the broker only for a module that needs it, and a domain's rules run through its services
// with the other domains joined by their hooks, as in the app.
import t from 'tap'
import { ApiError } from '../src/platform/errors.js'
import { KINDS } from '../src/domains/content/kinds.js'
import { modulesFor, owner, wireDomains, workspace } from './domains.js'

const playlist = KINDS.find((k) => k.kind === 'playlist')!

t.test('the modules of the named provisions and what they need, in wiring order', async (t) => {
  t.same(
    modulesFor(['content']).map((m) => m.name),
    ['audit', 'events', 'mail', 'nodes', 'access', 'approvals', 'content'],
  )
  t.ok(
    modulesFor(['desiredState'])
      .map((m) => m.name)
      .includes('takeover records'),
    'the device link brings the takeovers’ records it reads',
  )
})

t.test('content without the broker: a location holding an item cannot be deleted, an empty one can', async (t) => {
  const d = await wireDomains(t, ['content', 'nodes'])
  t.equal(d.broker, false, 'no module needed the broker')
  t.notOk(d.modules.includes('devicelink'), 'nor the device link')
  const { content, nodes } = d.provided
  const p = owner(await workspace(d))
  const store = await nodes.create(p, { name: 'Store', kind: 'location' })
  const empty = await nodes.create(p, { name: 'Empty', kind: 'location' })
  await content.create(playlist, p, { name: 'Menu', nodeId: store.id, items: [] })
  const refused = await nodes.remove(p, store.id).catch((e: unknown) => e)
  t.ok(refused instanceof ApiError, 'refused')
  t.match(refused, { code: 'node_not_empty', message: /1 content item/ }, 'naming what the content module keeps there')
  t.same(await nodes.remove(p, empty.id), { id: empty.id, deleted: true })
})

t.test('the device link needs the broker: it is built, and closed with the rest', async (t) => {
  const d = await wireDomains(t, ['desiredState'])
  t.equal(d.broker, true)
  t.ok(d.modules.indexOf('takeover records') < d.modules.indexOf('devicelink'), 'the records before the device link')
  t.equal(await d.provided.desiredState.build(await workspace(d), 'scr_missing'), null, 'a screen not in the workspace has no desired state')
})
