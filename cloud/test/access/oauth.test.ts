// POST /v1/oauth/token (client credentials: form, JSON, HTTP Basic), the token acting as its
// key and dying with it (revoke, rotate, key expiry, its own 3600 s), RFC 6749 errors, the
// per-address rate limit, and the RFC 8414 / RFC 9728 discovery documents.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { makeKey, type Harness } from '../helpers.js'
import { forEngines } from '../db/engines.js'

const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

function form(h: Harness, body: string, headers: Record<string, string> = {}, ip = '127.0.0.1') {
  return h.app.inject({ method: 'POST', url: '/v1/oauth/token', headers: { ...FORM, ...headers }, payload: body, remoteAddress: ip })
}
const enc = (o: Record<string, string>) => new URLSearchParams(o).toString()

async function token(h: Harness, key: { id: string; secret: string }): Promise<string> {
  const res = await form(h, enc({ grant_type: 'client_credentials', client_id: key.id, client_secret: key.secret }))
  if (res.statusCode !== 200) throw new Error(`token: ${res.statusCode} ${res.body}`)
  return res.json().access_token
}

// Every test here runs on SQLite and, when SVC_TEST_DATABASE_URL is set, on PostgreSQL.
forEngines(t, (t, build) => {
  t.test('form, JSON and HTTP Basic each answer an RFC 6749 token that acts as its key', async (t) => {
    const h = await build(t)
    const { apiKey } = await h.workspace()
    const node = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Site' })).json().data.id
    const key = await makeKey(h, apiKey, ['node.view', 'screen.view'], node)

    const viaForm = await form(h, enc({ grant_type: 'client_credentials', client_id: key.id, client_secret: key.secret }))
    t.equal(viaForm.statusCode, 200)
    t.match(viaForm.headers['cache-control'], /no-store/)
    const body = viaForm.json()
    t.same(Object.keys(body).sort(), ['access_token', 'expires_in', 'token_type'])
    t.match(body, { token_type: 'Bearer', expires_in: 3600 })
    t.match(body.access_token, /^oat_[A-Za-z0-9]{40}$/)

    const viaJson = await h.req('POST', '/v1/oauth/token', null, { grant_type: 'client_credentials', client_id: key.id, client_secret: key.secret })
    t.equal(viaJson.statusCode, 200)
    // RFC 6749 section 3.2: unrecognised parameters are ignored.
    const extra = await h.req('POST', '/v1/oauth/token', null, {
      grant_type: 'client_credentials',
      client_id: key.id,
      client_secret: key.secret,
      zzUnknownField: 1,
    })
    t.equal(extra.statusCode, 200, 'an unrecognised parameter is ignored')
    const basic = Buffer.from(`${encodeURIComponent(key.id)}:${encodeURIComponent(key.secret)}`).toString('base64')
    const viaBasic = await form(h, 'grant_type=client_credentials', { authorization: `Basic ${basic}` })
    t.equal(viaBasic.statusCode, 200)
    const tokens = [body.access_token, viaJson.json().access_token, viaBasic.json().access_token]
    t.equal(new Set(tokens).size, 3, 'a new token each time')

    for (const tok of tokens) {
      const me = (await h.req('GET', '/v1/me', tok)).json().data
      t.match(me.actor, { kind: 'key', id: key.id, nodeId: node }, 'the actor is the key, with its pin')
      t.same(me.grant, ['node.view', 'screen.view'], 'with its permissions')
    }
    const tok = tokens[0]!
    t.equal((await h.req('POST', '/v1/nodes', tok, { name: 'no' })).json().message, 'Missing permission: node.edit')
    const other = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Elsewhere' })).json().data.id
    t.equal((await h.req('GET', `/v1/nodes/${other}`, tok)).statusCode, 404, 'the pin holds')
    t.equal((await h.req('GET', `/v1/nodes/${node}`, tok)).statusCode, 200)
    // Stored hashed only.
    const rows = await servicesOf(h.app).db.all<Record<string, unknown>>('SELECT * FROM oauth_tokens')
    t.equal(rows.length, 4)
    for (const x of tokens) t.notOk(JSON.stringify(rows).includes(x.slice(4)), 'the token itself is not stored')
  })

  t.test('errors are in the RFC 6749 shape', async (t) => {
    const h = await build(t)
    const { apiKey } = await h.workspace()
    const key = await makeKey(h, apiKey, ['node.view'])
    const other = await makeKey(h, apiKey, ['node.view'])
    const check = async (res: Awaited<ReturnType<typeof form>>, status: number, error: string, label: string) => {
      t.equal(res.statusCode, status, label)
      t.equal(res.json().error, error, label)
      t.type(res.json().error_description, 'string', label)
      t.match(res.headers['cache-control'], /no-store/, label)
      if (status === 401) t.match(res.headers['www-authenticate'], /^Basic /, `${label}: WWW-Authenticate`)
    }
    const cc = { grant_type: 'client_credentials' }
    await check(await form(h, enc({ ...cc, client_id: key.id, client_secret: other.secret })), 401, 'invalid_client', "another key's secret")
    await check(await form(h, enc({ ...cc, client_id: 'key_unknown', client_secret: key.secret })), 401, 'invalid_client', 'unknown id')
    await check(await form(h, enc({ ...cc, client_id: key.id, client_secret: `ak_us_live_${'x'.repeat(32)}` })), 401, 'invalid_client', 'wrong secret')
    await check(await form(h, enc({ ...cc, client_id: key.id })), 401, 'invalid_client', 'no secret')
    await check(await form(h, enc(cc), { authorization: `Basic ${Buffer.from('no-colon').toString('base64')}` }), 401, 'invalid_client', 'malformed Basic')
    await check(await form(h, enc({ grant_type: 'password', client_id: key.id, client_secret: key.secret })), 400, 'unsupported_grant_type', 'password grant')
    await check(await form(h, enc({ client_id: key.id, client_secret: key.secret })), 400, 'invalid_request', 'no grant_type')
    await check(await form(h, `${enc(cc)}&grant_type=client_credentials`), 400, 'invalid_request', 'a parameter twice')
    await check(
      await h.app.inject({ method: 'POST', url: '/v1/oauth/token', headers: { 'content-type': 'application/json' }, payload: '{"grant_type":' }),
      400,
      'invalid_request',
      'broken JSON',
    )
    await check(
      await h.app.inject({ method: 'POST', url: '/v1/oauth/token', headers: { 'content-type': 'text/plain' }, payload: 'grant_type=client_credentials' }),
      400,
      'invalid_request',
      'text/plain',
    )
    await check(await h.req('POST', '/v1/oauth/token', null, { grant_type: 5 }), 400, 'invalid_request', 'grant_type not a string')
    const basic = Buffer.from(`${key.id}:${key.secret}`).toString('base64')
    await check(await form(h, enc({ ...cc, client_id: key.id }), { authorization: `Basic ${basic}` }), 400, 'invalid_request', 'Basic and body both')
    t.equal((await servicesOf(h.app).db.get<{ n: number }>('SELECT COUNT(*) AS n FROM oauth_tokens'))!.n, 0, 'no token issued')
    // An unknown oat_ token is an ordinary invalid credential on the API.
    const res = await h.req('GET', '/v1/me', `oat_${'a'.repeat(40)}`)
    t.equal(res.statusCode, 401)
    t.equal(res.json().error, 'invalid_credentials')
  })

  t.test('the token dies with its key: revoke, rotate, expiry', async (t) => {
    const h = await build(t)
    const { apiKey } = await h.workspace()

    const revoked = await makeKey(h, apiKey, ['node.view'])
    const t1 = await token(h, revoked)
    t.equal((await h.req('GET', '/v1/nodes', t1)).statusCode, 200)
    t.equal((await h.req('POST', `/v1/api-keys/${revoked.id}/revoke`, apiKey)).statusCode, 200)
    const afterRevoke = await h.req('GET', '/v1/nodes', t1)
    t.equal(afterRevoke.statusCode, 401, 'revoked: refused on the very next request')
    t.equal(afterRevoke.json().error, 'invalid_credentials')
    t.equal(
      (await form(h, enc({ grant_type: 'client_credentials', client_id: revoked.id, client_secret: revoked.secret }))).json().error,
      'invalid_client',
      'a revoked key gets no token',
    )

    const rotated = await makeKey(h, apiKey, ['node.view'])
    const t2 = await token(h, rotated)
    t.equal((await h.req('GET', '/v1/nodes', t2)).statusCode, 200)
    const newSecret = (await h.req('POST', `/v1/api-keys/${rotated.id}/rotate`, apiKey)).json().data.secret
    t.equal((await h.req('GET', '/v1/nodes', t2)).statusCode, 401, 'rotated: the old token is refused')
    const t3 = await token(h, { id: rotated.id, secret: newSecret })
    t.equal((await h.req('GET', '/v1/nodes', t3)).statusCode, 200, 'a token from the new secret works')

    const expiresAt = new Date(h.clock.now().getTime() + 10 * 60_000).toISOString()
    const expiring = (await h.req('POST', '/v1/api-keys', apiKey, { name: 'short', permissions: ['node.view'], expiresAt })).json().data
    const t4 = await token(h, { id: expiring.id, secret: expiring.secret })
    h.clock.advance(9 * 60_000)
    t.equal((await h.req('GET', '/v1/nodes', t4)).statusCode, 200)
    h.clock.advance(60_000)
    t.equal((await h.req('GET', '/v1/nodes', t4)).statusCode, 401, "the key's expiry ends the token")
  })

  t.test('a token lives 3600 seconds', async (t) => {
    const h = await build(t)
    const { apiKey } = await h.workspace()
    const key = await makeKey(h, apiKey, ['node.view'])
    const tok = await token(h, key)
    h.clock.advance(3599_000)
    t.equal((await h.req('GET', '/v1/nodes', tok)).statusCode, 200)
    h.clock.advance(1000)
    const res = await h.req('GET', '/v1/nodes', tok)
    t.equal(res.statusCode, 401)
    t.equal(res.json().error, 'invalid_credentials')
    t.equal((await h.req('GET', '/v1/nodes', key.secret)).statusCode, 200, 'the key itself still works')
    t.equal(await servicesOf(h.app).oauth.purgeExpired(), 1, 'housekeeping deletes the expired token')
  })

  t.test('30 token requests per 5 minutes per address', async (t) => {
    const h = await build(t)
    const { apiKey } = await h.workspace()
    const key = await makeKey(h, apiKey, ['node.view'])
    // Align to the start of a 5-minute window so the whole burst falls in one.
    const now = h.clock.now().getTime()
    h.clock.set(Math.ceil(now / 300_000) * 300_000)
    const good = enc({ grant_type: 'client_credentials', client_id: key.id, client_secret: key.secret })
    for (let i = 0; i < 15; i++) t.equal((await form(h, good)).statusCode, 200)
    for (let i = 0; i < 15; i++) t.equal((await form(h, 'grant_type=nope')).statusCode, 400, 'failures count too')
    const over = await form(h, good)
    t.equal(over.statusCode, 429)
    t.equal(over.json().error, 'rate_limited')
    t.type(over.json().error_description, 'string')
    t.equal(over.json().limit, 30)
    t.equal(over.json().windowSeconds, 300)
    t.equal(over.headers['retry-after'], '300')
    t.equal((await form(h, good, {}, '10.0.0.7')).statusCode, 200, 'another address is not held')
    h.clock.advance(300_000)
    t.equal((await form(h, good)).statusCode, 200, 'the next window opens')
  })

  t.test('discovery documents (RFC 8414, RFC 9728) and the OpenAPI entries', async (t) => {
    const h = await build(t, { publicUrl: 'https://signage.example.com' })
    const as = await h.req('GET', '/.well-known/oauth-authorization-server', null)
    t.equal(as.statusCode, 200)
    t.match(as.json(), {
      issuer: 'https://signage.example.com',
      token_endpoint: 'https://signage.example.com/v1/oauth/token',
      grant_types_supported: ['client_credentials'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    })
    const pr = await h.req('GET', '/.well-known/oauth-protected-resource', null)
    t.equal(pr.statusCode, 200)
    t.match(pr.json(), {
      resource: 'https://signage.example.com',
      authorization_servers: ['https://signage.example.com'],
      bearer_methods_supported: ['header'],
    })
    const doc = (await h.req('GET', '/v1/openapi.json', null)).json()
    const op = doc.paths['/v1/oauth/token'].post
    t.equal(op.operationId, 'createOAuthToken')
    t.same(op.tags, ['oauth'])
    t.equal(op['x-svc-permission'], 'none')
    t.ok(op.requestBody.content['application/x-www-form-urlencoded'], 'form body documented')
    t.ok(op.requestBody.content['application/json'], 'JSON body documented')
    t.equal(doc.paths['/.well-known/oauth-authorization-server'].get.operationId, 'getOAuthServerMetadata')
    t.equal(doc.paths['/.well-known/oauth-protected-resource'].get.operationId, 'getOAuthProtectedResourceMetadata')
    for (const [p, m, perm] of [
      ['/v1/users', 'get', 'user.view'],
      ['/v1/users', 'post', 'user.manage'],
      ['/v1/users/{id}', 'patch', 'user.manage'],
      ['/v1/users/{id}', 'delete', 'user.manage'],
      ['/v1/users/{id}', 'get', 'user.view'],
    ] as const) {
      t.equal(doc.paths[p][m]['x-svc-permission'], perm, `${m} ${p}`)
      t.same(doc.paths[p][m].tags, ['users'])
    }
  })
})
