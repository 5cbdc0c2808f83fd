// Authentication's cached principals and workspace rows, and the batched last_used_at:
// a cached key is still refused on the very next request after revoke, rotate, delete,
// its own expiry or its parent's; a warm request reads nothing from the database; uses
// become visible, and reach the database with the next batch (clock-driven) or on close.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { build, countReads, makeKey, type Harness } from '../helpers.js'
import { SqliteDatabase } from '../../src/platform/db/SqliteDatabase.js'
import { LAST_USED_FLUSH_MS, PRINCIPAL_TTL_MS } from '../../src/domains/access/ApiKeyService.js'
import type { CredentialChange } from '../../src/domains/access/CredentialChanges.js'
import { apiKeyPreview } from '../../src/platform/secrets.js'
import { until } from '../fixtures/processes.js'

async function ok(h: Harness, token: string): Promise<void> {
  const res = await h.req('GET', '/v1/me', token)
  if (res.statusCode !== 200) throw new Error(`GET /v1/me: ${res.statusCode} ${res.body}`)
}

async function refused(h: Harness, token: string): Promise<string> {
  const res = await h.req('GET', '/v1/me', token)
  return `${res.statusCode} ${res.json().error}`
}

const lastUsedInDb = async (h: Harness, id: string) =>
  (await servicesOf(h.app).db.get<{ last_used_at: string | null }>('SELECT last_used_at FROM api_keys WHERE id = ?', [id]))!.last_used_at

// The tests share one app, each in a workspace of its own. Three have an app of their own: two write literal times against the clock's start, one closes its app.
t.test('the credential caches over HTTP, on one app', async (t) => {
  const shared = await build(t)
  t.test('a warm key answers /v1/me without reading the database; the cache lasts a few seconds', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    await ok(h, apiKey)
    const reads = countReads(h)
    for (let i = 0; i < 20; i++) await ok(h, apiKey)
    t.equal(reads.n, 0, 'principal and workspace both come from memory')
    h.clock.advance(PRINCIPAL_TTL_MS)
    await ok(h, apiKey)
    t.ok(reads.n >= 1, 'after the TTL the key is looked up again')
  })

  t.test('concurrent requests of a key whose entry ran out share one lookup of the key and of the workspace', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    await ok(h, apiKey)
    h.clock.advance(PRINCIPAL_TTL_MS)
    const reads = countReads(h)
    await ok(h, apiKey)
    const one = reads.n
    t.ok(one >= 2, `one request after the TTL reads the key and the workspace (${one} reads)`)
    h.clock.advance(PRINCIPAL_TTL_MS)
    reads.n = 0
    await Promise.all(Array.from({ length: 20 }, () => ok(h, apiKey)))
    t.equal(reads.n, one, 'twenty requests at once read what one reads')
  })

  t.test('a request after a revoke does not join a lookup that began before it: refused at once', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const key = await makeKey(h, apiKey, ['node.view'])
    await ok(h, key.secret)
    h.clock.advance(PRINCIPAL_TTL_MS)
    // The key's first lookup after the TTL reads its row, then waits here before going on.
    const executor = servicesOf(h.app).db.kysely.getExecutor()
    const run = executor.executeQuery.bind(executor)
    const preview = apiKeyPreview(key.secret)
    let lookups = 0
    let release: () => void = () => undefined
    const held = new Promise<void>((r) => (release = r))
    executor.executeQuery = (async (q: { sql: string; parameters: readonly unknown[] }, ...rest: unknown[]) => {
      const result = await (run as (...a: unknown[]) => Promise<unknown>)(q, ...rest)
      if (/from "api_keys"/i.test(q.sql) && q.parameters.includes(preview) && ++lookups === 1) await held
      return result
    }) as typeof executor.executeQuery
    const before = h.req('GET', '/v1/me', key.secret)
    t.equal(await until(5 * 60_000, () => (lookups === 1 ? true : undefined)), true, 'the first lookup read the key (still valid) and waits')

    t.equal((await h.req('POST', `/v1/api-keys/${key.id}/revoke`, apiKey)).statusCode, 200)
    const after = h.req('GET', '/v1/me', key.secret)
    const own = await until(5 * 60_000, () => (lookups === 2 ? true : undefined))
    // Had it joined the held lookup it would wait on it: released, it answers (and fails below).
    if (own !== true) release()
    t.equal(own, true, 'the request after the revoke looks the key up itself')
    t.equal(`${(await after).statusCode} ${(await after).json().error}`, '401 invalid_credentials', 'and is refused')
    release()
    t.equal((await before).statusCode, 200, 'the request that came before the revoke answers as it read')
    t.equal(await refused(h, key.secret), '401 invalid_credentials', 'nothing it read was kept: the next request is refused too')
  })

  t.test('revoke, delete and rotate refuse a cached key on the very next request', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const a = await makeKey(h, apiKey, ['node.view'])
    const b = await makeKey(h, apiKey, ['node.view'])
    const c = await makeKey(h, apiKey, ['node.view'])
    for (const k of [a, b, c]) await ok(h, k.secret)

    t.equal((await h.req('POST', `/v1/api-keys/${a.id}/revoke`, apiKey)).statusCode, 200)
    t.equal(await refused(h, a.secret), '401 invalid_credentials', 'revoked')

    t.equal((await h.req('DELETE', `/v1/api-keys/${b.id}`, apiKey)).statusCode, 200)
    t.equal(await refused(h, b.secret), '401 invalid_credentials', 'deleted')

    const rotated = await h.req('POST', `/v1/api-keys/${c.id}/rotate`, apiKey)
    t.equal(rotated.statusCode, 200)
    t.equal(await refused(h, c.secret), '401 invalid_credentials', 'the old secret of a rotated key')
    await ok(h, rotated.json().data.secret)
    t.equal((await h.req('GET', '/v1/me', apiKey)).statusCode, 200, 'other keys unaffected')
  })

  t.test('a cached child (and grandchild) of a revoked parent is refused on the next request', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const parent = await makeKey(h, apiKey, ['api-key.create', 'node.view'])
    const child = await makeKey(h, parent.secret, ['api-key.create', 'node.view'])
    const grandchild = await makeKey(h, child.secret, ['node.view'])
    const sibling = await makeKey(h, apiKey, ['node.view'])
    for (const k of [parent, child, grandchild, sibling]) await ok(h, k.secret)
    t.equal((await h.req('POST', `/v1/api-keys/${parent.id}/revoke`, apiKey)).statusCode, 200)
    t.equal(await refused(h, child.secret), '401 invalid_credentials', 'child')
    t.equal(await refused(h, grandchild.secret), '401 invalid_credentials', 'grandchild')
    await ok(h, sibling.secret)
  })

  t.test('changes go through the seam: another subscriber (another instance) hears revoke and rotate', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const heard: CredentialChange[] = []
    servicesOf(h.app).credentialChanges.subscribe((c) => heard.push(c))
    const k = await makeKey(h, apiKey, ['node.view'])
    await h.req('POST', `/v1/api-keys/${k.id}/rotate`, apiKey)
    await h.req('POST', `/v1/api-keys/${k.id}/revoke`, apiKey)
    t.same(heard, [
      { kind: 'apiKey', ids: [k.id] },
      { kind: 'apiKey', ids: [k.id] },
    ])
    // What another instance publishes drops this instance's copy too.
    const other = await makeKey(h, apiKey, ['node.view'])
    await ok(h, other.secret)
    await servicesOf(h.app).db.run('UPDATE api_keys SET revoked_at = ? WHERE id = ?', ['2026-06-01T12:00:00.000Z', other.id])
    await ok(h, other.secret) // still cached: nobody announced the change
    servicesOf(h.app).credentialChanges.publish({ kind: 'apiKey', ids: [other.id] })
    t.equal(await refused(h, other.secret), '401 invalid_credentials')
  })

  t.test('a workspace change announced through the seam is seen on the next request', async (t) => {
    const h = shared
    const { apiKey, workspaceId } = await h.workspace()
    t.equal((await h.req('GET', '/v1/me', apiKey)).headers['ratelimit-limit'], '600')
    await servicesOf(h.app).db.run('UPDATE workspaces SET rate_limit = 5, name = ? WHERE id = ?', ['Renamed', workspaceId])
    servicesOf(h.app).workspaces.changed(workspaceId)
    const res = await h.req('GET', '/v1/me', apiKey)
    t.equal(res.headers['ratelimit-limit'], '5')
    t.equal(res.json().data.workspace.name, 'Renamed')
  })

  // Session tokens (users) and OAuth access tokens share the principal cache.
  async function oauthToken(h: Harness, key: { id: string; secret: string }): Promise<string> {
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ grant_type: 'client_credentials', client_id: key.id, client_secret: key.secret }).toString(),
    })
    if (res.statusCode !== 200) throw new Error(`token: ${res.statusCode} ${res.body}`)
    return res.json().access_token
  }

  async function invite(h: Harness, key: string, role: string, email: string): Promise<{ id: string; sessionToken: string }> {
    const res = await h.req('POST', '/v1/users', key, { email, role })
    if (res.statusCode !== 201) throw new Error(`invite: ${res.statusCode} ${res.body}`)
    return res.json().data
  }

  t.test('a warm session token and a warm OAuth token answer /v1/me without reading the database', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const user = await invite(h, apiKey, 'viewer', 'v@example.com')
    const key = await makeKey(h, apiKey, ['node.view'])
    const oat = await oauthToken(h, key)
    await ok(h, user.sessionToken)
    await ok(h, oat)
    const reads = countReads(h)
    for (let i = 0; i < 10; i++) {
      await ok(h, user.sessionToken)
      await ok(h, oat)
    }
    t.equal(reads.n, 0, 'both principals come from memory')
    h.clock.advance(PRINCIPAL_TTL_MS)
    await ok(h, user.sessionToken)
    await ok(h, oat)
    t.ok(reads.n >= 2, 'after the TTL both are looked up again')
    // The OAuth token's use still counts as its key's use.
    t.equal((await h.req('GET', `/v1/api-keys/${key.id}`, apiKey)).json().data.lastUsedAt, h.clock.now().toISOString())
  })

  t.test("a deleted user's cached session token answers 401 on the very next request; a role change ends it at once too", async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const gone = await invite(h, apiKey, 'viewer', 'gone@example.com')
    const moved = await invite(h, apiKey, 'viewer', 'moved@example.com')
    await ok(h, gone.sessionToken)
    await ok(h, moved.sessionToken)
    t.equal((await h.req('GET', '/v1/users', moved.sessionToken)).statusCode, 200, 'a viewer reads users')
    t.equal((await h.req('POST', '/v1/nodes', moved.sessionToken, { name: 'x' })).statusCode, 403, 'a viewer cannot create a node')

    t.equal((await h.req('DELETE', `/v1/users/${gone.id}`, apiKey)).statusCode, 200)
    t.equal(await refused(h, gone.sessionToken), '401 invalid_credentials', 'deleted user')

    // A role change ends the user's sessions: the cached one is refused on the very next request.
    t.equal((await h.req('PATCH', `/v1/users/${moved.id}`, apiKey, { role: 'admin' })).statusCode, 200)
    t.equal(await refused(h, moved.sessionToken), '401 invalid_credentials', 'role changed')
  })

  t.test("a cached OAuth token is refused on the next request after its key (or the key's parent) is revoked or rotated", async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const revoked = await makeKey(h, apiKey, ['node.view'])
    const rotated = await makeKey(h, apiKey, ['node.view'])
    const parent = await makeKey(h, apiKey, ['api-key.create', 'node.view'])
    const child = await makeKey(h, parent.secret, ['node.view'])
    const tokens = { revoked: await oauthToken(h, revoked), rotated: await oauthToken(h, rotated), child: await oauthToken(h, child) }
    for (const tok of Object.values(tokens)) await ok(h, tok)

    t.equal((await h.req('POST', `/v1/api-keys/${revoked.id}/revoke`, apiKey)).statusCode, 200)
    t.equal(await refused(h, tokens.revoked), '401 invalid_credentials', 'revoked key')
    t.equal((await h.req('POST', `/v1/api-keys/${rotated.id}/rotate`, apiKey)).statusCode, 200)
    t.equal(await refused(h, tokens.rotated), '401 invalid_credentials', 'rotated key')
    await ok(h, tokens.child)
    t.equal((await h.req('POST', `/v1/api-keys/${parent.id}/revoke`, apiKey)).statusCode, 200)
    t.equal(await refused(h, tokens.child), '401 invalid_credentials', "the key's parent revoked")
  })
})

t.test('a cached key past its expiry, or whose parent expired, is refused within the TTL', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  const short = (
    await h.req('POST', '/v1/api-keys', apiKey, { name: 's', permissions: ['node.view', 'api-key.create'], expiresAt: '2026-06-01T12:00:02.000Z' })
  ).json().data
  // A child from before the expiry cap: no expiry of its own, only its parent's.
  const child = await makeKey(h, short.secret, ['node.view'])
  await servicesOf(h.app).db.run('UPDATE api_keys SET expires_at = NULL WHERE id = ?', [child.id])
  await ok(h, short.secret)
  await ok(h, child.secret)
  h.clock.advance(2_000)
  t.ok(2_000 < PRINCIPAL_TTL_MS, 'still inside the cache lifetime')
  t.equal(await refused(h, short.secret), '401 invalid_credentials', 'expired key')
  t.equal(await refused(h, child.secret), '401 invalid_credentials', 'child of the expired key')
})

t.test('last_used_at: no write per request, visible at once, written in a batch when the clock moves on', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  const k = await makeKey(h, apiKey, ['node.view'])
  const svc = servicesOf(h.app).apiKeys
  await ok(h, k.secret)
  t.equal(await lastUsedInDb(h, k.id), null, 'not written by the request itself')
  t.equal((await h.req('GET', `/v1/api-keys/${k.id}`, apiKey)).json().data.lastUsedAt, '2026-06-01T12:00:00.000Z', 'the API shows it already')

  h.clock.advance(LAST_USED_FLUSH_MS)
  await ok(h, k.secret) // this use comes after the flush interval: the batch goes out
  await svc.idle()
  t.equal(await lastUsedInDb(h, k.id), '2026-06-01T12:00:05.000Z')

  h.clock.advance(1_000)
  await ok(h, k.secret)
  await svc.idle()
  t.equal(await lastUsedInDb(h, k.id), '2026-06-01T12:00:05.000Z', 'within the interval: still pending')
  t.equal((await h.req('GET', `/v1/api-keys/${k.id}`, apiKey)).json().data.lastUsedAt, '2026-06-01T12:00:06.000Z')
  // A batch never moves a stored value backwards.
  await servicesOf(h.app).db.run('UPDATE api_keys SET last_used_at = ? WHERE id = ?', ['2026-06-01T13:00:00.000Z', k.id])
  await svc.flushLastUsed()
  t.equal(await lastUsedInDb(h, k.id), '2026-06-01T13:00:00.000Z')
})

t.test('closing the app writes the pending last_used_at', async (t) => {
  const db = await SqliteDatabase.open(':memory:', 1000)
  t.after(() => db.close())
  const h = await build(t, {}, { db })
  const { apiKey } = await h.workspace()
  const id = (await h.req('GET', '/v1/me', apiKey)).json().data.actor.id
  t.equal(await lastUsedInDb(h, id), null)
  await h.app.close()
  const row = await db.get<{ last_used_at: string | null }>('SELECT last_used_at FROM api_keys WHERE id = ?', [id])
  t.equal(row!.last_used_at, '2026-06-01T12:00:00.000Z')
})
