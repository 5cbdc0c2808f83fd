// Event streams on two instances of one cloud (one database, one Redis): a key revoked or a
// session signed out through A ends the stream open on B (the credential change is
// broadcast); the bounds on open streams count the whole cloud's streams, and the places of
// a credential revoked on A are free on both at once. Needs a Redis (SVC_TEST_REDIS_URL).
import { randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { redis, toolTest } from '@svc/shared/testing'
import { buildApp, servicesOf } from '../../src/app.js'
import { testConfig, type Config } from '../../src/config.js'
import { ManualClock } from '../../src/platform/clock.js'
import type { Database } from '../../src/platform/db/Database.js'
import type { RedisCredentialChanges } from '../../src/domains/access/RedisCredentialChanges.js'
import { eachEngine } from '../db/engines.js'
import { bearer, openStream } from '../events/sse.js'

interface Cloud {
  a: FastifyInstance
  b: FastifyInstance
  portA: number
  portB: number
  apiKey: string
  workspaceId: string
  /** A call to instance `app` with the owner key (or `token`). */
  call(app: FastifyInstance, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown, token?: string): Promise<{ status: number; body: any }>
}

/** Two listening apps on one database and one Redis (a fresh key prefix), a workspace and its owner key. */
async function twoInstances(t: Test, db: Database, overrides: Partial<Config> = {}): Promise<Cloud> {
  const config = testConfig({ redisUrl: process.env.SVC_TEST_REDIS_URL!, redisPrefix: `svc-test-${randomUUID()}:`, ...overrides })
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const a = await buildApp(config, { clock, db })
  const b = await buildApp(config, { clock, db })
  t.after(async () => {
    await a.close()
    await b.close()
  })
  const ports: number[] = []
  for (const app of [a, b]) {
    await app.listen({ port: 0, host: '127.0.0.1' })
    ports.push((app.server.address() as AddressInfo).port)
    // Each instance hears the other's credential changes before the test makes any.
    await (servicesOf(app).credentialChanges as RedisCredentialChanges).listening()
  }
  const ws = await servicesOf(a).workspaces.create('Shared', 'us')
  const { secret } = await servicesOf(a).apiKeys.createRoot(ws.id, ws.region, 'Owner key', 'all')
  return {
    a,
    b,
    portA: ports[0]!,
    portB: ports[1]!,
    apiKey: secret,
    workspaceId: ws.id,
    async call(app, method, url, payload, token = secret) {
      const res = await app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${token}` },
        ...(payload === undefined ? {} : { payload: payload as object }),
      })
      return { status: res.statusCode, body: res.json() }
    },
  }
}

async function makeKey(c: Cloud): Promise<{ id: string; secret: string }> {
  const r = await c.call(c.a, 'POST', '/v1/api-keys', { name: 'Watcher', permissions: ['screen.view'] })
  if (r.status !== 201) throw new Error(`key: ${r.status}`)
  return { id: r.body.data.id, secret: r.body.data.secret }
}

toolTest(t, redis, 'a key revoked on A and a session signed out on A end the streams open on B', async (t) =>
  eachEngine(t, 'two instances', async (t, db) => {
    const c = await twoInstances(t, db)
    const k = await makeKey(c)
    const onB = await openStream(t, c.portB, bearer(k.secret))
    t.equal(onB.status, 200)
    t.equal((await onB.next()).event, 'ready')
    const ownerOnB = await openStream(t, c.portB, bearer(c.apiKey))
    t.equal((await ownerOnB.next()).event, 'ready')
    t.equal((await c.call(c.a, 'POST', `/v1/api-keys/${k.id}/revoke`)).status, 200)
    t.match((await onB.next((m) => m.event === 'ended')).data, { reason: 'credential_invalid' })
    await onB.closed()
    t.pass('B closed the revoked key’s stream')

    const invite = await c.call(c.a, 'POST', '/v1/users', { email: 'op@example.com', role: 'viewer' })
    t.equal(invite.status, 201)
    const accepted = await c.a.inject({
      method: 'POST',
      url: '/v1/invites/accept',
      payload: { token: invite.body.data.inviteUrl.split('#token=')[1], password: 'a long pass phrase' },
    })
    const session = String(accepted.headers['set-cookie']).split(';')[0]!.split('=')[1]!
    const sessionOnB = await openStream(t, c.portB, { cookie: `svc_session=${session}` })
    t.equal((await sessionOnB.next()).event, 'ready')
    t.equal((await c.call(c.a, 'DELETE', '/v1/session', undefined, session)).status, 200)
    t.match((await sessionOnB.next((m) => m.event === 'ended')).data, { reason: 'credential_invalid' })
    await sessionOnB.closed()
    t.equal(ownerOnB.messages.filter((m) => m.event === 'ended').length, 0, 'the owner’s stream goes on')
  }),
)

toolTest(t, redis, 'the bounds count the streams of both instances; a credential revoked on A frees its places on both at once', async (t) =>
  eachEngine(t, 'two instances', async (t, db) => {
    const c = await twoInstances(t, db, { eventStreamsPerWorkspace: 3, eventStreamsPerCredential: 2 })
    const k = await makeKey(c)
    const held = [await openStream(t, c.portA, bearer(k.secret)), await openStream(t, c.portB, bearer(k.secret))]
    for (const s of held) t.equal(s.status, 200)
    for (const port of [c.portA, c.portB]) {
      const over = await openStream(t, port, bearer(k.secret))
      t.equal(over.status, 429, 'the key holds two places in the cloud, one on each instance')
      t.match(await over.json(), { error: 'rate_limited', message: /per credential/ })
    }
    const owner = await openStream(t, c.portB, bearer(c.apiKey))
    t.equal(owner.status, 200)
    const full = await openStream(t, c.portA, bearer(c.apiKey))
    t.equal(full.status, 429, 'three streams in the workspace across the two instances: A refuses a fourth')
    t.match(await full.json(), { error: 'rate_limited', message: /per workspace/ })

    t.equal((await c.call(c.a, 'POST', `/v1/api-keys/${k.id}/revoke`)).status, 200)
    for (const s of held) {
      t.match((await s.next((m) => m.event === 'ended')).data, { reason: 'credential_invalid' })
      await s.closed()
    }
    // The owner holds one place (its own bound is two); another key takes the other.
    const again = [await openStream(t, c.portA, bearer(c.apiKey)), await openStream(t, c.portA, bearer((await makeKey(c)).secret))]
    t.same(
      again.map((s) => s.status),
      [200, 200],
      'both of the revoked key’s places are free',
    )
  }),
)
