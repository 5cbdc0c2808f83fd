// The audit log through the HTTP interface, on both engines: writes recorded at the edge with
// the actor, the way they came, the resource and the field-level changes (secrets masked);
// sign-ins and refused sign-ins; filters and paging; the CSV export; the hash chain checked
// by /verify, which finds an entry edited, removed or added in the database; retention
// cutting the oldest end without breaking verification; who may read it.
import t from 'tap'
import { servicesOf } from '../../src/app.js'
import { forEngines } from '../db/engines.js'
import { makeKey, type Harness } from '../helpers.js'

async function log(h: Harness, key: string, query = ''): Promise<{ data: Entry[]; nextCursor: string | null }> {
  const res = await h.req('GET', `/v1/audit-log${query}`, key)
  if (res.statusCode !== 200) throw new Error(`audit log: ${res.statusCode} ${res.body}`)
  return res.json()
}

interface Entry {
  id: string
  seq: number
  at: string
  actor: { kind: string; id: string | null; name: string | null }
  via: string
  action: string
  resource: { kind: string; id: string | null; name: string | null }
  nodeId: string | null
  changes: { path: string; before: unknown; after: unknown }[]
  requestId: string | null
  ip: string | null
  outcome: string
  hash: string
  prevHash: string
}

forEngines(t, (t, build) => {
  t.test('a create, an update and a delete: actor, via, resource and field-level changes', async (t) => {
    const h = await build(t)
    const { apiKey } = await h.workspace()
    const editor = await makeKey(h, apiKey, ['playlist.edit', 'playlist.view'])
    const created = await h.req('POST', '/v1/playlists', editor.secret, { name: 'Lobby' })
    t.equal(created.statusCode, 201)
    const id = created.json().data.id
    const patched = await h.req('PATCH', `/v1/playlists/${id}`, editor.secret, { name: 'Lobby loop' })
    t.equal(patched.statusCode, 200)
    t.equal((await h.req('DELETE', `/v1/playlists/${id}`, editor.secret)).statusCode, 200)

    const { data } = await log(h, apiKey, `?resourceId=${id}`)
    t.same(
      data.map((e) => e.action),
      ['playlist.delete', 'playlist.update', 'playlist.create'],
      'newest first',
    )
    const [del, upd, cre] = data as [Entry, Entry, Entry]
    t.same(cre.actor, { kind: 'apiKey', id: editor.id, name: 'k' })
    t.equal(cre.via, 'api')
    t.same(cre.resource, { kind: 'playlist', id, name: 'Lobby' })
    t.ok(
      cre.changes.some((c) => c.path === 'name' && c.before === null && c.after === 'Lobby'),
      'a create shows the new fields',
    )
    t.same(
      upd.changes.filter((c) => c.path === 'name'),
      [{ path: 'name', before: 'Lobby', after: 'Lobby loop' }],
      'an update shows what changed, before and after',
    )
    t.notOk(
      upd.changes.some((c) => c.path === 'id'),
      'unchanged fields are not listed',
    )
    t.ok(
      del.changes.some((c) => c.path === 'name' && c.before === 'Lobby loop' && c.after === null),
      'a delete shows what was removed',
    )
    t.equal(upd.requestId, patched.headers['x-svc-request-id'])
    t.equal(upd.outcome, 'success')
  })

  t.test('secrets are masked: a webhook secret, an API key, a password', async (t) => {
    const h = await build(t, { webhookAllowHosts: ['hooks.example.com'] })
    const { apiKey } = await h.workspace()
    const key = await makeKey(h, apiKey, ['node.view'])
    const { data } = await log(h, apiKey, '?action=api-key.create')
    t.equal(data.length, 1)
    const text = JSON.stringify(data)
    t.notOk(text.includes(key.secret), 'the key secret is not in the log')
    t.ok(
      data[0]!.changes.some((c) => c.path === 'secret' && c.after === '•••'),
      'the secret field shows masked',
    )
    const user = await h.req('POST', '/v1/users', apiKey, { email: 'ann@example.com', role: 'viewer' })
    t.equal(user.statusCode, 201)
    const invite = user.json().data.inviteUrl as string | undefined
    const all = JSON.stringify((await log(h, apiKey)).data)
    t.ok(invite, 'the answer holds an invite link')
    t.notOk(all.includes(invite!.split(/[#=/]/).pop()!), 'the invite token is not in the log')
  })

  t.test('a refused write is recorded with its outcome; a request without a credential is not', async (t) => {
    const h = await build(t)
    const { apiKey } = await h.workspace()
    const viewer = await makeKey(h, apiKey, ['playlist.view'])
    const res = await h.req('POST', '/v1/playlists', viewer.secret, { name: 'Nope' })
    t.equal(res.statusCode, 403)
    t.equal((await h.req('POST', '/v1/playlists', null, { name: 'Nope' })).statusCode, 401)
    const { data } = await log(h, apiKey, '?action=playlist.create')
    t.equal(data.length, 1)
    t.equal(data[0]!.outcome, 'denied')
    t.same(data[0]!.changes, [])
    t.equal(data[0]!.actor.id, viewer.id)
  })

  t.test('sign-ins and refused sign-ins; the console cookie is via console', async (t) => {
    const h = await build(t)
    const { apiKey, workspaceId } = await h.workspace()
    const invite = (await h.req('POST', '/v1/users', apiKey, { email: 'bo@example.com', role: 'admin' })).json().data
    const token = (invite.inviteUrl as string).split('#').pop()!.split('=').pop()!
    const accepted = await h.req('POST', '/v1/invites/accept', null, { token, password: 'correct horse battery' })
    t.equal(accepted.statusCode, 200, accepted.body)
    t.equal((await h.req('POST', '/v1/session', null, { email: 'bo@example.com', password: 'wrong password!' })).statusCode, 401)
    const ok = await h.req('POST', '/v1/session', null, { email: 'bo@example.com', password: 'correct horse battery' })
    t.equal(ok.statusCode, 200)
    const cookie = ok.headers['set-cookie']
    const csrf = ok.json().data.csrfToken
    const cookieHeader = (Array.isArray(cookie) ? cookie : [cookie!]).map((c) => c.split(';')[0]).join('; ')
    const made = await h.app.inject({ method: 'POST', url: '/v1/nodes', headers: { cookie: cookieHeader, 'x-svc-csrf': csrf }, payload: { name: 'Floor 2' } })
    t.equal(made.statusCode, 201, made.body)
    const { data } = await log(h, apiKey)
    const rows = data.map((e) => [e.action, e.outcome, e.via, e.actor.kind])
    t.same(rows.slice(0, 4), [
      ['node.create', 'success', 'console', 'user'],
      ['session.create', 'success', 'console', 'user'],
      ['session.create', 'denied', 'console', 'user'],
      ['invite.accept', 'success', 'console', 'user'],
    ])
    t.ok(data.every((e) => e.actor.name !== 'correct horse battery'))
    t.notOk(JSON.stringify(data).includes('correct horse battery'), 'no password in the log')
    t.ok(workspaceId)
  })

  t.test('filters (actor, resource, action, time range) and paging', async (t) => {
    const h = await build(t)
    const { apiKey } = await h.workspace()
    const a = await makeKey(h, apiKey, ['node.edit', 'node.view'])
    const ids: string[] = []
    for (let i = 0; i < 5; i++) {
      ids.push((await h.req('POST', '/v1/nodes', a.secret, { name: `N${i}` })).json().data.id)
      h.clock.advance(60_000)
    }
    t.equal((await log(h, apiKey, `?actorId=${a.id}`)).data.length, 5)
    t.equal((await log(h, apiKey, `?resourceId=${ids[2]}`)).data.length, 1)
    t.equal((await log(h, apiKey, '?action=node.create')).data.length, 5)
    const first = (await log(h, apiKey, `?resourceId=${ids[1]}`)).data[0]!
    const third = (await log(h, apiKey, `?resourceId=${ids[3]}`)).data[0]!
    const ranged = await log(h, apiKey, `?action=node.create&from=${encodeURIComponent(first.at)}&to=${encodeURIComponent(third.at)}`)
    t.same(
      ranged.data.map((e) => e.resource.id),
      [ids[2], ids[1]],
      'from inclusive, to exclusive',
    )
    const seen: string[] = []
    let cursor: string | null = ''
    while (cursor !== null) {
      const page: { data: Entry[]; nextCursor: string | null } = await log(h, apiKey, `?action=node.create&limit=2${cursor ? `&cursor=${cursor}` : ''}`)
      t.ok(page.data.length <= 2)
      seen.push(...page.data.map((e) => e.resource.id!))
      cursor = page.nextCursor
    }
    t.same(seen, [...ids].reverse(), 'the pages hold every entry once, newest first')
    t.equal((await h.req('GET', '/v1/audit-log?limit=0', apiKey)).statusCode, 422)
    t.equal((await h.req('GET', '/v1/audit-log?cursor=nope', apiKey)).statusCode, 422)
    t.equal((await h.req('GET', '/v1/audit-log?from=yesterday', apiKey)).statusCode, 422)
  })

  t.test('CSV export: a header and one line per entry, streamed', async (t) => {
    const h = await build(t)
    const { apiKey } = await h.workspace()
    for (let i = 0; i < 3; i++) await h.req('POST', '/v1/nodes', apiKey, { name: i === 0 ? '=HYPERLINK("x")' : `N${i}` })
    const res = await h.req('GET', '/v1/audit-log?format=csv&action=node.create', apiKey)
    t.equal(res.statusCode, 200)
    t.match(res.headers['content-type'], /^text\/csv/)
    const lines = res.body.trimEnd().split('\r\n')
    t.equal(lines.length, 4)
    t.match(lines[0], /^id,seq,at,actorKind/)
    t.ok(lines.slice(1).every((l) => l.startsWith('aud_')))
    t.notOk(res.body.includes(',=HYPERLINK'), 'a formula is not left for a spreadsheet')
  })

  t.test('the hash chain: verify passes, and finds an entry edited, removed or added in the database', async (t) => {
    const h = await build(t)
    const { apiKey, workspaceId } = await h.workspace()
    for (let i = 0; i < 6; i++) await h.req('POST', '/v1/nodes', apiKey, { name: `N${i}` })
    const ok = (await h.req('GET', '/v1/audit-log/verify', apiKey)).json()
    t.same(ok, { ok: true, checked: 6, firstBroken: null })
    const entries = (await log(h, apiKey)).data
    t.equal(entries[0]!.prevHash, entries[1]!.hash, 'each entry links to the one before')
    const db = servicesOf(h.app).db
    const third = entries.find((e) => e.seq === 3)!
    await db.run('UPDATE audit_entries SET resource_name = ? WHERE id = ?', ['tampered', third.id])
    t.same((await h.req('GET', '/v1/audit-log/verify', apiKey)).json(), { ok: false, checked: 2, firstBroken: { id: third.id, seq: 3, reason: 'hash' } })
    await db.run('UPDATE audit_entries SET resource_name = ? WHERE id = ?', [third.resource.name, third.id])
    t.equal((await h.req('GET', '/v1/audit-log/verify', apiKey)).json().ok, true, 'restored, it passes again')

    const fourth = entries.find((e) => e.seq === 4)!
    await db.run('DELETE FROM audit_entries WHERE id = ?', [fourth.id])
    t.same((await h.req('GET', '/v1/audit-log/verify', apiKey)).json().firstBroken, { id: entries.find((e) => e.seq === 5)!.id, seq: 4, reason: 'missing' })

    // Recomputing the edited entry's own hash does not help: the next entry links to the old one.
    const h2 = await build(t)
    const w2 = await h2.workspace()
    for (let i = 0; i < 3; i++) await h2.req('POST', '/v1/nodes', w2.apiKey, { name: `M${i}` })
    const db2 = servicesOf(h2.app).db
    const { contentOf, hashOf } = await import('../../src/domains/audit/AuditTrail.js')
    const row = await db2.get<Record<string, unknown>>('SELECT * FROM audit_entries WHERE chain = ? AND seq = 2', [w2.workspaceId])
    const edited = { ...row, actor_name: 'someone else', seq: Number(row!.seq) } as never
    const newHash = hashOf(String(row!.prev_hash), contentOf(edited))
    await db2.run('UPDATE audit_entries SET actor_name = ?, hash = ? WHERE chain = ? AND seq = 2', ['someone else', newHash, w2.workspaceId])
    const broken = (await h2.req('GET', '/v1/audit-log/verify', w2.apiKey)).json()
    t.equal(broken.ok, false)
    t.same(broken.firstBroken.seq, 3)
    t.equal(broken.firstBroken.reason, 'link')

    // The newest entry removed: the head no longer matches.
    const h3 = await build(t)
    const w3 = await h3.workspace()
    for (let i = 0; i < 3; i++) await h3.req('POST', '/v1/nodes', w3.apiKey, { name: `L${i}` })
    await servicesOf(h3.app).db.run('DELETE FROM audit_entries WHERE chain = ? AND seq = 3', [w3.workspaceId])
    t.same((await h3.req('GET', '/v1/audit-log/verify', w3.apiKey)).json(), { ok: false, checked: 2, firstBroken: { id: null, seq: 3, reason: 'head' } })
    t.ok(workspaceId)
  })

  t.test('retention removes the oldest entries and verification still passes from the anchor', async (t) => {
    const h = await build(t, { auditRetentionDays: 10 })
    const { apiKey } = await h.workspace()
    for (let i = 0; i < 4; i++) {
      await h.req('POST', '/v1/nodes', apiKey, { name: `Old${i}` })
      h.clock.advance(86_400_000)
    }
    h.clock.advance(8 * 86_400_000)
    for (let i = 0; i < 3; i++) await h.req('POST', '/v1/nodes', apiKey, { name: `New${i}` })
    // 4 old entries (days 0..3), now day 12: entries older than day 2 go.
    const removed = await servicesOf(h.app).audit.purge(10)
    t.equal(removed, 2)
    const left = (await log(h, apiKey)).data
    t.same(
      left.map((e) => e.seq),
      [7, 6, 5, 4, 3],
    )
    t.same((await h.req('GET', '/v1/audit-log/verify', apiKey)).json(), { ok: true, checked: 5, firstBroken: null })
    await servicesOf(h.app).db.run('DELETE FROM audit_entries WHERE seq = 3')
    t.equal((await h.req('GET', '/v1/audit-log/verify', apiKey)).json().firstBroken.reason, 'missing', 'cutting more than retention did is found')
  })
})
