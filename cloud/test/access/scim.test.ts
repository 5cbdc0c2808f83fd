// SCIM 2.0 provisioning through its HTTP interface (/scim/v2), on SQLite and PostgreSQL: the
// workspace's token (shown once, kept hashed, replaced, revoked), the discovery documents, the
// sequences Okta and Entra ID send (look up by filter, create, deactivate, reactivate, rename,
// delete), groups mapped to roles through roleMap, filters and paging, SCIM's error shape,
// tenants kept apart (404), deactivation ending the user's sessions at once and keeping them
// out, and every write in the audit log (via `scim`).
import t from 'tap'
import { ManualClock } from '@svc/shared'
import { servicesOf } from '../../src/app.js'
import type { Harness } from '../helpers.js'
import { forEngines } from '../db/engines.js'
import { idpMetadata } from '../fixtures/samlIdp.js'

const PASSWORD = 'correct horse battery'
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User'
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group'
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp'
const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error'

function scim(h: Harness, token: string | null, method: string, url: string, body?: unknown) {
  return h.app.inject({
    method: method as 'GET',
    url: `/scim/v2${url}`,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }),
    },
    ...(body === undefined ? {} : { payload: typeof body === 'string' ? body : JSON.stringify(body) }),
  })
}

/** The session token a sign-in set as its cookie. */
function cookieOf(res: { cookies: unknown }): string {
  const c = (res.cookies as { name: string; value: string }[]).find((x) => x.name === 'svc_session')
  if (!c) throw new Error('no session cookie was set')
  return c.value
}

const q = (filter: string) => `filter=${encodeURIComponent(filter)}`

forEngines(t, (t, build) => {
  t.test('the token, discovery, errors in SCIM shape, tenants apart', async (t) => {
    const h = await build(t, {}, { clock: new ManualClock(Date.now()) })
    const { apiKey, workspaceId } = await h.workspace('Acme')
    t.equal((await h.req('GET', '/v1/sso/scim-token', apiKey)).json().data.createdAt, null, 'no token yet')
    const made = await h.req('POST', '/v1/sso/scim-token', apiKey)
    t.equal(made.statusCode, 201, made.body)
    const { token, baseUrl } = made.json().data
    t.match(token, /^scim_[A-Za-z0-9]{43}$/)
    t.match(baseUrl, /\/scim\/v2$/)
    const shown = await h.req('GET', '/v1/sso/scim-token', apiKey)
    t.ok(shown.json().data.createdAt, 'the token exists')
    t.notOk(shown.body.includes(token), 'and is never shown again')
    const row = await servicesOf(h.app).db.kysely.selectFrom('scim_tokens').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow()
    t.notOk(JSON.stringify(row).includes(token), 'only its hash is stored')

    const none = await scim(h, null, 'GET', '/Users')
    t.equal(none.statusCode, 401)
    t.same(none.json().schemas, [ERROR], "SCIM's error shape")
    t.equal(none.json().status, '401')
    t.match(none.json().detail, /bearer token/)
    t.equal((await scim(h, `${token.slice(0, -1)}${token.endsWith('x') ? 'y' : 'x'}`, 'GET', '/Users')).statusCode, 401, 'a wrong token')
    t.equal((await scim(h, apiKey, 'GET', '/Users')).statusCode, 401, 'an API key is not a SCIM token')

    const spc = await scim(h, token, 'GET', '/ServiceProviderConfig')
    t.equal(spc.statusCode, 200)
    t.match(spc.headers['content-type'], /application\/scim\+json/)
    t.equal(spc.json().patch.supported, true)
    t.equal(spc.json().filter.supported, true)
    t.same(
      (await scim(h, token, 'GET', '/ResourceTypes')).json().Resources.map((r: { id: string }) => r.id),
      ['User', 'Group'],
    )
    t.same(
      (await scim(h, token, 'GET', '/Schemas')).json().Resources.map((r: { id: string }) => r.id),
      [USER, GROUP],
    )
    const unknown = await scim(h, token, 'GET', '/Nope')
    t.equal(unknown.statusCode, 404)
    t.same(unknown.json().schemas, [ERROR])

    const bad = await scim(h, token, 'POST', '/Users', '{"userName": ')
    t.equal(bad.statusCode, 400)
    t.equal(bad.json().scimType, 'invalidSyntax')
    const noMail = await scim(h, token, 'POST', '/Users', { schemas: [USER], userName: 'ada' })
    t.equal(noMail.statusCode, 400)
    t.equal(noMail.json().scimType, 'invalidValue')
    const badFilter = await scim(h, token, 'GET', `/Users?${q('userName eq')}`)
    t.equal(badFilter.statusCode, 400)
    t.equal(badFilter.json().scimType, 'invalidFilter')

    // Another workspace's token sees nothing of this one.
    const ada = (await scim(h, token, 'POST', '/Users', { schemas: [USER], userName: 'ada@acme.example' })).json()
    const other = await h.workspace('Other')
    const otherToken = (await h.req('POST', '/v1/sso/scim-token', other.apiKey)).json().data.token
    for (const [method, url, body] of [
      ['GET', `/Users/${ada.id}`],
      ['PUT', `/Users/${ada.id}`, { schemas: [USER], userName: 'ada@acme.example', active: false }],
      ['PATCH', `/Users/${ada.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] }],
      ['DELETE', `/Users/${ada.id}`],
    ] as const) {
      const res = await scim(h, otherToken, method, url, body)
      t.equal(res.statusCode, 404, `${method} of another workspace's user: 404`)
      t.equal(res.json().status, '404')
    }
    t.equal((await scim(h, otherToken, 'GET', `/Users?${q('userName eq "ada@acme.example"')}`)).json().totalResults, 0, 'nor listed')
    t.equal((await scim(h, token, 'GET', `/Users/${ada.id}`)).json().active, true, 'untouched')

    // A new token replaces the old one at once; a revoked one works no more.
    const second = (await h.req('POST', '/v1/sso/scim-token', apiKey)).json().data.token
    t.equal((await scim(h, token, 'GET', '/Users')).statusCode, 401, 'the old token stopped working')
    t.equal((await scim(h, second, 'GET', '/Users')).statusCode, 200)
    t.equal((await h.req('DELETE', '/v1/sso/scim-token', apiKey)).statusCode, 200)
    t.equal((await scim(h, second, 'GET', '/Users')).statusCode, 401, 'revoked')
  })

  t.test("Okta's sequence: look up, create, groups to roles, deactivate (sessions end), reactivate, delete", async (t) => {
    const h = await build(t, {}, { clock: new ManualClock(Date.now()) })
    const { apiKey, workspaceId } = await h.workspace('Acme')
    const put = await h.req('PUT', '/v1/sso', apiKey, {
      protocol: 'saml',
      idpMetadataXml: idpMetadata(),
      emailDomains: ['acme.example'],
      roleMap: { 'Signage Admins': 'admin', 'Signage Editors': 'editor' },
      passwordSignIn: 'all',
    })
    t.equal(put.statusCode, 201, put.body)
    const token = (await h.req('POST', '/v1/sso/scim-token', apiKey)).json().data.token

    const found = await scim(h, token, 'GET', `/Users?${q('userName eq "Ada@Acme.example"')}&startIndex=1&count=100`)
    t.equal(found.statusCode, 200, found.body)
    t.same(found.json(), { schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'], totalResults: 0, startIndex: 1, itemsPerPage: 0, Resources: [] })
    const created = await scim(h, token, 'POST', '/Users', {
      schemas: [USER],
      userName: 'Ada@acme.example',
      name: { givenName: 'Ada', familyName: 'Lovelace' },
      emails: [{ primary: true, value: 'ada@acme.example', type: 'work' }],
      displayName: 'Ada Lovelace',
      locale: 'en-US',
      externalId: '00u1okta',
      groups: [],
      password: 'never-stored-1!',
      active: true,
    })
    t.equal(created.statusCode, 201, created.body)
    const ada = created.json()
    t.equal(ada.userName, 'ada@acme.example')
    t.equal(ada.name.formatted, 'Ada Lovelace')
    t.equal(ada.externalId, '00u1okta')
    t.equal(ada.active, true)
    t.equal(ada.meta.resourceType, 'User')
    const again = await scim(h, token, 'POST', '/Users', { schemas: [USER], userName: 'ada@acme.example' })
    t.equal(again.statusCode, 409)
    t.equal(again.json().scimType, 'uniqueness')
    t.equal((await scim(h, token, 'GET', `/Users?${q('userName eq "ada@acme.example"')}`)).json().Resources[0].id, ada.id, 'found by userName, any case')
    const viaApi = (await h.req('GET', `/v1/users/${ada.id}`, apiKey)).json().data
    t.equal(viaApi.role, 'viewer', 'the default role')

    // Groups pushed: a group whose displayName the roleMap maps gives its role to its members.
    const admins = await scim(h, token, 'POST', '/Groups', { schemas: [GROUP], displayName: 'Signage Admins', members: [] })
    t.equal(admins.statusCode, 201, admins.body)
    const gid = admins.json().id
    const add = await scim(h, token, 'PATCH', `/Groups/${gid}`, {
      schemas: [PATCH],
      Operations: [{ op: 'add', path: 'members', value: [{ value: ada.id, display: 'ada@acme.example' }] }],
    })
    t.equal(add.statusCode, 200, add.body)
    t.same(
      add.json().members.map((m: { value: string }) => m.value),
      [ada.id],
    )
    t.equal((await h.req('GET', `/v1/users/${ada.id}`, apiKey)).json().data.role, 'admin', 'a member of the admins group is admin')
    t.same(
      (await scim(h, token, 'GET', `/Users/${ada.id}`)).json().groups.map((g: { display: string }) => g.display),
      ['Signage Admins'],
    )

    // Ada signs in with a password (allowed for all here), and is deactivated: her session ends at once.
    const s = servicesOf(h.app)
    const row = (await s.users.get(workspaceId, ada.id))!
    const inv = await s.signIns.invite(row)
    await s.signIns.acceptInvite({ token: inv.inviteUrl.split('#token=')[1]!, password: PASSWORD })
    const signIn = () => h.req('POST', '/v1/session', null, { email: 'ada@acme.example', password: PASSWORD })
    const session = await signIn()
    t.equal(session.statusCode, 200, session.body)
    const sessionToken = cookieOf(session)
    t.equal((await h.req('GET', '/v1/session', sessionToken)).statusCode, 200)
    const off = await scim(h, token, 'PATCH', `/Users/${ada.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] })
    t.equal(off.statusCode, 200, off.body)
    t.equal(off.json().active, false)
    t.equal((await h.req('GET', '/v1/session', sessionToken)).statusCode, 401, 'her session ended at once')
    t.equal((await signIn()).statusCode, 401, 'and her password opens nothing')
    t.equal((await scim(h, token, 'GET', `/Users?${q('active eq false')}`)).json().totalResults, 1, 'filtered by active')

    const on = await scim(h, token, 'PUT', `/Users/${ada.id}`, {
      schemas: [USER],
      id: ada.id,
      userName: 'ada@acme.example',
      name: { givenName: 'Ada', familyName: 'King' },
      emails: [{ primary: true, value: 'ada@acme.example', type: 'work' }],
      active: true,
    })
    t.equal(on.statusCode, 200, on.body)
    t.equal(on.json().active, true)
    t.equal(on.json().name.formatted, 'Ada King', 'renamed')
    t.equal((await signIn()).statusCode, 200, 'reactivated: she signs in again')
    t.equal((await h.req('GET', `/v1/users/${ada.id}`, apiKey)).json().data.role, 'admin', 'a PUT of the user leaves the role the groups gave')
    const rename = await scim(h, token, 'PUT', `/Users/${ada.id}`, { schemas: [USER], userName: 'ada2@acme.example' })
    t.equal(rename.statusCode, 400, 'the address names the account: it does not change')
    t.equal(rename.json().scimType, 'mutability')

    const out = await scim(h, token, 'PATCH', `/Groups/${gid}`, {
      schemas: [PATCH],
      Operations: [{ op: 'remove', path: `members[value eq "${ada.id}"]` }],
    })
    t.equal(out.statusCode, 200, out.body)
    t.equal((await h.req('GET', `/v1/users/${ada.id}`, apiKey)).json().data.role, 'viewer', 'out of the group: the default role')

    const last = await signIn()
    const del = await scim(h, token, 'DELETE', `/Users/${ada.id}`)
    t.equal(del.statusCode, 204)
    t.equal((await h.req('GET', '/v1/session', cookieOf(last))).statusCode, 401, 'deleted: her sessions ended')
    t.equal((await scim(h, token, 'GET', `/Users/${ada.id}`)).statusCode, 404)
    t.equal((await h.req('GET', `/v1/users/${ada.id}`, apiKey)).statusCode, 404)

    const entries = await s.db.kysely
      .selectFrom('audit_entries')
      .select(['via', 'action', 'actor_name', 'resource_id', 'outcome'])
      .where('chain', '=', workspaceId)
      .where('via', '=', 'scim')
      .orderBy('seq')
      .execute()
    const actions = entries.filter((e) => e.outcome === 'success').map((e) => e.action)
    t.same(
      actions,
      ['user.create', 'group.create', 'group.update', 'user.update', 'user.update', 'group.update', 'user.delete'],
      'every SCIM write is in the audit log',
    )
    t.ok(
      entries.every((e) => e.actor_name === 'SCIM provisioning'),
      'as the SCIM token',
    )
    const deactivation = await s.db.kysely
      .selectFrom('audit_entries')
      .select('changes')
      .where('chain', '=', workspaceId)
      .where('via', '=', 'scim')
      .where('action', '=', 'user.update')
      .orderBy('seq')
      .executeTakeFirstOrThrow()
    t.match(JSON.parse(deactivation.changes), [{ path: 'active', before: true, after: false }], 'with the field-level change')
    const createdEntry = await s.db.kysely
      .selectFrom('audit_entries')
      .select('changes')
      .where('chain', '=', workspaceId)
      .where('action', '=', 'user.create')
      .executeTakeFirstOrThrow()
    t.notOk(createdEntry.changes.includes('never-stored-1!'), 'a password sent is not recorded')
  })

  t.test("Entra ID's sequence, filters and paging", async (t) => {
    const h = await build(t, {}, { clock: new ManualClock(Date.now()) })
    const { apiKey } = await h.workspace('Acme')
    const token = (await h.req('POST', '/v1/sso/scim-token', apiKey)).json().data.token
    // Entra ID asks for a user that does not exist first (its connection test), then by externalId.
    t.equal((await scim(h, token, 'GET', `/Users?${q('userName eq "non-existent-user-0c7f"')}`)).json().totalResults, 0)
    const res = await scim(h, token, 'POST', '/Users', {
      schemas: [USER, 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'],
      externalId: 'bob',
      userName: 'bob@acme.example',
      active: true,
      displayName: 'Bob',
      emails: [{ primary: true, type: 'work', value: 'bob@acme.example' }],
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { department: 'Signage' },
    })
    t.equal(res.statusCode, 201, res.body)
    const bob = res.json()
    t.equal((await scim(h, token, 'GET', `/Users?${q('externalId eq "bob"')}`)).json().Resources[0].id, bob.id)
    const patched = await scim(h, token, 'PATCH', `/Users/${bob.id}`, {
      schemas: [PATCH],
      Operations: [
        { op: 'Replace', path: 'active', value: 'False' },
        { op: 'Add', path: 'name.givenName', value: 'Robert' },
        { op: 'Add', path: 'name.familyName', value: 'Tables' },
        { op: 'Replace', path: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department', value: 'Ops' },
      ],
    })
    t.equal(patched.statusCode, 200, patched.body)
    t.equal(patched.json().active, false, '"False" as a string deactivates')
    t.equal(patched.json().name.formatted, 'Robert Tables')
    const badOp = await scim(h, token, 'PATCH', `/Users/${bob.id}`, { schemas: [PATCH], Operations: [{ op: 'move', path: 'active' }] })
    t.equal(badOp.statusCode, 400)
    t.equal(badOp.json().scimType, 'invalidSyntax')

    for (const n of ['carol', 'dave', 'erin', 'frank']) await scim(h, token, 'POST', '/Users', { schemas: [USER], userName: `${n}@acme.example` })
    const names = async (query: string) =>
      (await scim(h, token, 'GET', `/Users?${query}`)).json().Resources.map((r: { userName: string }) => r.userName.split('@')[0])
    t.same(await names(q('userName sw "ca"')), ['carol'], 'sw')
    t.same(await names(q('userName co "RA"')), ['frank'], 'co, any case')
    t.same(await names(q('userName sw "d" or userName sw "e"')), ['dave', 'erin'], 'or')
    t.same(await names(q('userName co "r" and active eq true')), ['carol', 'erin', 'frank'], 'and')
    t.same(await names(q('emails[type eq "work" and value co "erin"]')), ['erin'], 'a value path')
    const page = (await scim(h, token, 'GET', '/Users?startIndex=2&count=2')).json()
    t.equal(page.totalResults, 5)
    t.equal(page.startIndex, 2)
    t.equal(page.itemsPerPage, 2)
    t.same(
      page.Resources.map((r: { userName: string }) => r.userName),
      ['carol@acme.example', 'dave@acme.example'],
      'startIndex is 1-based',
    )
    t.equal((await scim(h, token, 'GET', '/Users?count=0')).json().Resources.length, 0, 'count=0 answers only the total')
  })

  t.test('a deactivated user accepts no invite, and the API keys they made (and keys made by those) stop at once', async (t) => {
    const h = await build(t, {}, { clock: new ManualClock(Date.now()) })
    const { apiKey } = await h.workspace('Acme')
    const put = await h.req('PUT', '/v1/sso', apiKey, {
      protocol: 'saml',
      idpMetadataXml: idpMetadata(),
      emailDomains: ['acme.example'],
      defaultRole: 'admin',
      passwordSignIn: 'all',
    })
    t.equal(put.statusCode, 201, put.body)
    const token = (await h.req('POST', '/v1/sso/scim-token', apiKey)).json().data.token
    const ada = (await scim(h, token, 'POST', '/Users', { schemas: [USER], userName: 'ada@acme.example', active: true })).json()
    const inviteToken = async () => {
      const res = await h.req('POST', `/v1/users/${ada.id}/invite`, apiKey)
      t.equal(res.statusCode, 201, res.body)
      return new URLSearchParams(new URL(`https://x${res.json().data.inviteUrl}`).hash.slice(1)).get('token')!
    }
    const accept = async (invite: string) => h.req('POST', '/v1/invites/accept', null, { token: invite, password: PASSWORD })
    const accepted = await accept(await inviteToken())
    t.equal(accepted.statusCode, 200, accepted.body)
    const session = cookieOf(accepted)
    // Ada makes a key, and that key makes another.
    const made = await h.req('POST', '/v1/api-keys', session, { name: "Ada's script", permissions: 'all' })
    t.equal(made.statusCode, 201, made.body)
    const key = made.json().data.secret
    const child = await h.req('POST', '/v1/api-keys', key, { name: "the script's helper", permissions: ['screen.view'] })
    t.equal(child.statusCode, 201, child.body)
    const childKey = child.json().data.secret
    const works = async (k: string) => (await h.req('GET', '/v1/screens', k)).statusCode
    t.equal(await works(key), 200, "Ada's key works (and its principal is cached)")
    t.equal(await works(childKey), 200)
    const invite = await inviteToken()

    const off = await scim(h, token, 'PATCH', `/Users/${ada.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] })
    t.equal(off.statusCode, 200, off.body)
    t.equal(await works(key), 401, 'her key stops at once (the cached principal too)')
    t.equal(await works(childKey), 401, 'and the key it made')
    t.equal(await works(apiKey), 200, 'a key she did not make goes on')
    const refused = await accept(invite)
    t.equal(refused.statusCode, 403, `her open invite is refused: ${refused.body}`)
    t.equal(refused.json().error, 'forbidden')
    t.match(refused.json().message, /deactivated/)
    t.notOk(
      (refused.cookies as { name: string }[]).some((c) => c.name === 'svc_session'),
      'no session',
    )

    // Activated again, her keys and the invite still open work again.
    const on = await scim(h, token, 'PATCH', `/Users/${ada.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: true } }] })
    t.equal(on.statusCode, 200, on.body)
    t.equal(await works(key), 200, 'her key works again')
    t.equal((await accept(invite)).statusCode, 200, 'the invite link was left open')
  })
})
