// /v1/users: invite (first session token shown once, stored hashed), list, get, change role
// or name, remove (their tokens die on the very next request), the last owner kept (409),
// permissions and tenancy.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { makeKey, type Harness } from '../helpers.js'
import { forEngines } from '../db/engines.js'

async function invite(h: Harness, key: string, body: Record<string, unknown>) {
  const res = await h.req('POST', '/v1/users', key, body)
  if (res.statusCode !== 201) throw new Error(`invite: ${res.statusCode} ${res.body}`)
  return res.json().data as { id: string; email: string; role: string; sessionToken: string; name: string | null }
}

// Every test here runs on SQLite and, when SVC_TEST_DATABASE_URL is set, on PostgreSQL. The
// tests share one app per engine, each in a workspace of its own; the one that counts every
// stored session has an app of its own.
forEngines(t, async (t, build) => {
  const shared = await build(t)
  t.test('an invite answers the user and a one-time session token that works and is stored hashed', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    t.same((await h.req('GET', '/v1/users', apiKey)).json().data, [], 'no users yet')
    const res = await h.req('POST', '/v1/users', apiKey, { email: ' Ada@Example.com ', name: 'Ada', role: 'editor' })
    t.equal(res.statusCode, 201)
    const u = res.json().data
    t.match(u, { email: 'ada@example.com', name: 'Ada', role: 'editor', emailVerifiedAt: null })
    t.match(u.id, /^usr_/)
    t.match(u.sessionToken, /^ust_[A-Za-z0-9]{40}$/)
    t.ok(u.sessionExpiresAt)
    const me = (await h.req('GET', '/v1/me', u.sessionToken)).json().data
    t.match(me.actor, { kind: 'user', id: u.id, email: 'ada@example.com' })
    const rows = await servicesOf(h.app).db.all<Record<string, unknown>>('SELECT * FROM sessions WHERE user_id = ?', [u.id])
    t.equal(rows.length, 1)
    t.notOk(JSON.stringify(rows).includes(u.sessionToken.slice(4)), 'the token itself is not stored')
    // Shown once: neither the list nor the item carries it.
    const listed = (await h.req('GET', '/v1/users', apiKey)).json().data
    t.same(
      listed.map((x: { id: string }) => x.id),
      [u.id],
    )
    t.notOk('sessionToken' in listed[0])
    t.notOk('sessionToken' in (await h.req('GET', `/v1/users/${u.id}`, apiKey)).json().data)
    // An editor holds no user.* permission.
    t.equal((await h.req('GET', '/v1/users', u.sessionToken)).statusCode, 403)
  })

  t.test('bad invites are refused with the envelope and write nothing', async (t) => {
    const h = await build(t)
    const { apiKey } = await h.workspace()
    await invite(h, apiKey, { email: 'a@example.com', role: 'owner' })
    const cases: [unknown, number, string][] = [
      [{ email: 'not-an-email', role: 'viewer' }, 422, 'validation_error'],
      [{ email: 'b@example.com', role: 'god' }, 422, 'validation_error'],
      [{ email: 'b@example.com' }, 422, 'validation_error'],
      [{ email: 'b@example.com', role: 'viewer', extra: 1 }, 422, 'validation_error'],
      [{ email: 'A@example.com', role: 'viewer' }, 409, 'conflict'],
    ]
    for (const [body, status, error] of cases) {
      const res = await h.req('POST', '/v1/users', apiKey, body)
      t.equal(res.statusCode, status, JSON.stringify(body))
      t.equal(res.json().error, error)
      t.type(res.json().message, 'string')
    }
    t.equal((await h.req('GET', '/v1/users', apiKey)).json().data.length, 1)
    t.equal((await servicesOf(h.app).db.get<{ n: number }>('SELECT COUNT(*) AS n FROM sessions'))!.n, 1)
  })

  t.test('permissions: user.view to read, user.manage to change, never beyond the caller, never from a pinned key', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const owner = await invite(h, apiKey, { email: 'o@example.com', role: 'owner' })
    const viewOnly = await makeKey(h, apiKey, ['user.view'])
    t.equal((await h.req('GET', '/v1/users', viewOnly.secret)).statusCode, 200)
    const denied = await h.req('POST', '/v1/users', viewOnly.secret, { email: 'x@example.com', role: 'viewer' })
    t.equal(denied.statusCode, 403)
    t.equal(denied.json().message, 'Missing permission: user.manage')
    t.equal((await h.req('DELETE', `/v1/users/${owner.id}`, viewOnly.secret)).statusCode, 403)
    const noView = await makeKey(h, apiKey, ['screen.view'])
    t.equal((await h.req('GET', '/v1/users', noView.secret)).json().message, 'Missing permission: user.view')
    // A manager without every permission of a role cannot give it, nor touch a user holding it.
    const manager = await makeKey(h, apiKey, ['user.manage', 'user.view'])
    const up = await h.req('POST', '/v1/users', manager.secret, { email: 'x@example.com', role: 'owner' })
    t.equal(up.statusCode, 403)
    t.match(up.json().message, /^Missing permission: /)
    t.equal((await h.req('PATCH', `/v1/users/${owner.id}`, manager.secret, { name: 'renamed' })).statusCode, 403)
    t.equal((await h.req('DELETE', `/v1/users/${owner.id}`, manager.secret)).statusCode, 403)
    t.equal((await h.req('GET', `/v1/users/${owner.id}`, apiKey)).json().data.name, null, 'untouched')
    // Users live at the workspace root: a pinned key may not manage them.
    const node = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Site' })).json().data.id
    const pinned = await makeKey(h, apiKey, 'all', node)
    // Nor read them (their e-mails and roles): every /v1/users operation refuses a pinned key, as webhooks do.
    for (const [m, u, body] of [
      ['GET', '/v1/users', undefined],
      ['GET', `/v1/users/${owner.id}`, undefined],
      ['POST', '/v1/users', { email: 'p@example.com', role: 'viewer' }],
      ['PATCH', `/v1/users/${owner.id}`, { name: 'pinned' }],
      ['DELETE', `/v1/users/${owner.id}`, undefined],
    ] as const) {
      const res = await h.req(m, u, pinned.secret, body)
      t.equal(res.statusCode, 403, `pinned ${m} ${u}`)
      t.same(res.json(), { error: 'forbidden', message: 'This operation needs a workspace-wide credential; this one is pinned to a location.' })
    }
    const pinnedViewer = await makeKey(h, apiKey, ['user.view'], node)
    t.equal((await h.req('GET', '/v1/users', pinnedViewer.secret)).statusCode, 403, 'user.view alone does not lift the pin')
    t.equal((await h.req('GET', `/v1/users/${owner.id}`, pinnedViewer.secret)).statusCode, 403)
    t.match((await h.req('GET', `/v1/users/${owner.id}`, apiKey)).json().data, { name: null, role: 'owner' }, 'untouched')
    // A user session with user.manage (an admin) invites.
    const admin = await invite(h, apiKey, { email: 'ad@example.com', role: 'admin' })
    t.equal((await h.req('POST', '/v1/users', admin.sessionToken, { email: 'v@example.com', role: 'viewer' })).statusCode, 201)
  })

  t.test(
    'role and name changes take effect at once, a role change ending the user’s other sessions; the last owner cannot be demoted or removed',
    async (t) => {
      const h = shared
      const { apiKey } = await h.workspace()
      const first = await invite(h, apiKey, { email: 'first@example.com', role: 'owner' })
      const demote = await h.req('PATCH', `/v1/users/${first.id}`, apiKey, { role: 'admin' })
      t.equal(demote.statusCode, 409)
      t.equal(demote.json().error, 'conflict')
      const del = await h.req('DELETE', `/v1/users/${first.id}`, apiKey)
      t.equal(del.statusCode, 409)
      t.equal((await h.req('GET', `/v1/users/${first.id}`, apiKey)).json().data.role, 'owner')

      const second = await invite(h, apiKey, { email: 'second@example.com', role: 'owner' })
      t.equal((await h.req('POST', '/v1/nodes', second.sessionToken, { name: 'made by second' })).statusCode, 201)
      const renamed = await h.req('PATCH', `/v1/users/${second.id}`, apiKey, { role: 'viewer', name: 'Second' })
      t.equal(renamed.statusCode, 200)
      t.match(renamed.json().data, { role: 'viewer', name: 'Second' })
      // The demoted user's sessions end on their very next request; a new session holds the new role.
      const refused = await h.req('POST', '/v1/nodes', second.sessionToken, { name: 'no longer' })
      t.equal(refused.statusCode, 401)
      t.equal(refused.json().error, 'invalid_credentials')
      const workspaceId = (await h.req('GET', '/v1/me', apiKey)).json().data.workspace.id
      const session = async (id: string) => (await servicesOf(h.app).users.createSession((await servicesOf(h.app).users.get(workspaceId, id))!)).token
      t.equal((await h.req('POST', '/v1/nodes', await session(second.id), { name: 'no longer' })).statusCode, 403, 'a new session holds the new role')
      t.equal((await h.req('PATCH', `/v1/users/${second.id}`, apiKey, { name: 'Renamed only' })).statusCode, 200)
      // `first` is again the only owner.
      t.equal((await h.req('PATCH', `/v1/users/${first.id}`, apiKey, { role: 'viewer' })).statusCode, 409)
      // An owner may hand over: promote, then the old one may go.
      t.equal((await h.req('PATCH', `/v1/users/${second.id}`, first.sessionToken, { role: 'owner' })).statusCode, 200)
      const secondOwner = await session(second.id)
      const renamedOnly = await session(second.id)
      t.equal((await h.req('PATCH', `/v1/users/${second.id}`, apiKey, { name: 'Second again' })).statusCode, 200)
      t.equal((await h.req('GET', '/v1/me', renamedOnly)).statusCode, 200, 'a name change ends no session')
      // A user changing their own role keeps the session they changed it with; their other sessions end.
      const firstElsewhere = await session(first.id)
      t.equal((await h.req('PATCH', `/v1/users/${first.id}`, first.sessionToken, { role: 'admin' })).statusCode, 200)
      t.equal((await h.req('GET', '/v1/me', first.sessionToken)).statusCode, 200, 'the session that made the change')
      t.equal((await h.req('GET', `/v1/users/${first.id}`, first.sessionToken)).json().data.role, 'admin', 'now an admin')
      t.equal((await h.req('GET', '/v1/me', firstElsewhere)).statusCode, 401, 'their other session')
      t.equal((await h.req('DELETE', `/v1/users/${first.id}`, secondOwner)).statusCode, 200)
      t.same(
        (await servicesOf(h.app).users.owners((await h.req('GET', '/v1/me', apiKey)).json().data.workspace.id)).map((u) => u.id),
        [second.id],
      )
      t.equal((await h.req('PATCH', `/v1/users/${second.id}`, apiKey, { bogus: 1 })).statusCode, 422)
      t.equal((await h.req('PATCH', `/v1/users/${second.id}`, apiKey, { role: 'root' })).statusCode, 422)
    },
  )

  t.test("a removed user's session tokens die on the very next request", async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    await invite(h, apiKey, { email: 'keep@example.com', role: 'owner' })
    const gone = await invite(h, apiKey, { email: 'gone@example.com', role: 'admin' })
    const workspaceId = (await h.req('GET', '/v1/me', apiKey)).json().data.workspace.id
    const user = (await servicesOf(h.app).users.get(workspaceId, gone.id))!
    const second = await servicesOf(h.app).users.createSession(user)
    for (const token of [gone.sessionToken, second.token]) t.equal((await h.req('GET', '/v1/me', token)).statusCode, 200)
    const told: unknown[] = []
    servicesOf(h.app).credentialChanges.subscribe((c) => void told.push(c))
    const res = await h.req('DELETE', `/v1/users/${gone.id}`, apiKey)
    t.equal(res.statusCode, 200)
    t.same(told, [{ kind: 'user', ids: [gone.id] }], 'caches of credentials are told before the answer')
    t.same(res.json().data, { id: gone.id, deleted: true })
    for (const token of [gone.sessionToken, second.token]) {
      const after = await h.req('GET', '/v1/me', token)
      t.equal(after.statusCode, 401)
      t.equal(after.json().error, 'invalid_credentials')
    }
    t.equal((await servicesOf(h.app).db.get<{ n: number }>('SELECT COUNT(*) AS n FROM sessions WHERE user_id = ?', [gone.id]))!.n, 0)
    t.equal((await h.req('GET', `/v1/users/${gone.id}`, apiKey)).statusCode, 404)
    t.equal((await h.req('DELETE', `/v1/users/${gone.id}`, apiKey)).statusCode, 404)
    // The address can be invited again.
    t.equal((await h.req('POST', '/v1/users', apiKey, { email: 'gone@example.com', role: 'viewer' })).statusCode, 201)
  })

  t.test('paging and tenancy', async (t) => {
    const h = shared
    const { apiKey: a } = await h.workspace('A')
    const { apiKey: b } = await h.workspace('B')
    const ids: string[] = []
    for (const n of [1, 2, 3]) ids.push((await invite(h, a, { email: `u${n}@example.com`, role: 'owner' })).id)
    const p1 = (await h.req('GET', '/v1/users?limit=2&count=1', a)).json()
    t.same(
      p1.data.map((u: { id: string }) => u.id),
      ids.slice(0, 2),
    )
    t.equal(p1.total, 3)
    const p2 = (await h.req('GET', `/v1/users?limit=2&cursor=${p1.nextCursor}`, a)).json()
    t.same(
      p2.data.map((u: { id: string }) => u.id),
      [ids[2]],
    )
    t.equal(p2.nextCursor, null)
    t.same((await h.req('GET', '/v1/users', b)).json().data, [], "B sees none of A's users")
    for (const [method, body] of [['GET'], ['PATCH', { role: 'viewer' }], ['DELETE']] as const) {
      const res = await h.req(method, `/v1/users/${ids[0]}`, b, body)
      t.equal(res.statusCode, 404, method)
      t.equal(res.json().error, 'not_found')
    }
    t.equal((await h.req('GET', `/v1/users/${ids[0]}`, a)).json().data.role, 'owner')
  })
})
