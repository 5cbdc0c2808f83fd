// Console sign-in on two instances of one cloud (one database, one Redis): failed sign-ins
// are counted together, before the password is checked, so attempts sent at once to both
// instances are held to one count; a new password set through one instance ends the
// sessions the other holds cached. Needs a Redis (SVC_TEST_REDIS_URL).
import { randomUUID } from 'node:crypto'
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { HANG_GUARD_MS, redis, toolTest } from '@svc/shared/testing'
import { buildApp, servicesOf } from '../../src/app.js'
import { testConfig } from '../../src/config.js'
import { ManualClock } from '../../src/platform/clock.js'
import type { Database } from '../../src/platform/db/Database.js'
import type { RedisCredentialChanges } from '../../src/domains/access/RedisCredentialChanges.js'
import { eachEngine } from '../db/engines.js'
import { until } from '../fixtures/processes.js'

const PASSWORD = 'correct horse battery'

/** Two apps on one database (either engine; the harness closes it) and one Redis with a fresh key prefix, a workspace and its owner key. */
async function twoInstances(t: Test, db: Database) {
  const config = testConfig({ redisUrl: process.env.SVC_TEST_REDIS_URL ?? null, redisPrefix: `svc-test-${randomUUID()}:` })
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const a = await buildApp(config, { clock, db })
  const b = await buildApp(config, { clock, db })
  t.after(async () => {
    await a.close()
    await b.close()
  })
  for (const app of [a, b]) await (servicesOf(app).credentialChanges as RedisCredentialChanges).listening()
  const ws = await servicesOf(a).workspaces.create('Shared', 'us')
  const { secret } = await servicesOf(a).apiKeys.createRoot(ws.id, ws.region, 'Owner key', 'all')
  return { a, b, clock, apiKey: secret }
}

const call = (app: FastifyInstance, method: 'GET' | 'POST', url: string, payload?: object, headers: Record<string, string> = {}, ip = '10.0.0.1') =>
  app.inject({ method, url, remoteAddress: ip, headers, ...(payload ? { payload } : {}) })

/** A user invited through `app` whose invite link set PASSWORD; answers their id and the session cookie it opened. */
async function userWithPassword(app: FastifyInstance, apiKey: string, email: string): Promise<{ id: string; cookie: string }> {
  const inv = await call(app, 'POST', '/v1/users', { email, role: 'admin' }, { authorization: `Bearer ${apiKey}` })
  if (inv.statusCode !== 201) throw new Error(`invite: ${inv.statusCode} ${inv.body}`)
  const token = inv.json().data.inviteUrl.split('#token=')[1]
  const res = await call(app, 'POST', '/v1/invites/accept', { token, password: PASSWORD })
  if (res.statusCode !== 200) throw new Error(`accept: ${res.statusCode} ${res.body}`)
  const session = (res.cookies as { name: string; value: string }[]).find((c) => c.name === 'svc_session')!
  return { id: inv.json().data.id, cookie: `svc_session=${session.value}` }
}

toolTest(t, redis, 'wrong passwords sent at once to both instances from one client: 5 are checked in all, the rest answer 429', async (t) =>
  eachEngine(t, 'two instances', async (t, db) => {
    const c = await twoInstances(t, db)
    await userWithPassword(c.a, c.apiKey, 'gil@example.com')
    const res = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        call(i % 2 ? c.b : c.a, 'POST', '/v1/session', { email: 'gil@example.com', password: `wrong guess number ${i}` }, {}, '203.0.113.60'),
      ),
    )
    const codes = res.map((r) => r.statusCode)
    t.equal(codes.filter((s) => s === 401).length, 5, 'five checked, whichever instance took them')
    t.equal(codes.filter((s) => s === 429).length, 25)
    for (const app of [c.a, c.b]) {
      const held = await call(app, 'POST', '/v1/session', { email: 'gil@example.com', password: PASSWORD }, {}, '203.0.113.60')
      t.equal(held.statusCode, 429, 'the right password too, on either instance')
      t.match(held.headers['retry-after'], /^\d+$/)
    }
    t.equal(
      (await call(c.b, 'POST', '/v1/session', { email: 'gil@example.com', password: PASSWORD }, {}, '198.51.100.2')).statusCode,
      200,
      'another client is not',
    )
    c.clock.advance(15 * 60_000)
    t.equal((await call(c.b, 'POST', '/v1/session', { email: 'gil@example.com', password: PASSWORD }, {}, '203.0.113.60')).statusCode, 200, 'after the window')
  }),
)

toolTest(t, redis, 'a new password set through A ends the sessions B holds cached', async (t) =>
  eachEngine(t, 'two instances', async (t, db) => {
    const c = await twoInstances(t, db)
    const { id, cookie } = await userWithPassword(c.a, c.apiKey, 'fay@example.com')
    t.equal((await call(c.b, 'GET', '/v1/me', undefined, { cookie })).statusCode, 200, 'B has the session cached')
    const link = await call(c.a, 'POST', `/v1/users/${id}/invite`, undefined, { authorization: `Bearer ${c.apiKey}` })
    const token = link.json().data.inviteUrl.split('#token=')[1]
    const reset = await call(c.a, 'POST', '/v1/invites/accept', { token, password: 'a brand new pass phrase' })
    t.equal(reset.statusCode, 200)
    t.equal((await call(c.a, 'GET', '/v1/me', undefined, { cookie })).statusCode, 401, 'A: on the next request')
    // Polled in real time (Redis delivers the change), at most 10 s.
    t.equal(
      await until(5 * 60_000, async () => ((await call(c.b, 'GET', '/v1/me', undefined, { cookie })).statusCode === 401 ? 401 : undefined), 10),
      401,
      'B: within the Redis round trip (the clock did not move)',
    )
  }),
)

toolTest(t, redis, 'a user deactivated through SCIM on A: the API key they made, cached on B, stops there; activated again, it works there again', async (t) =>
  eachEngine(t, 'two instances', async (t, db) => {
    const c = await twoInstances(t, db)
    const { key, setActive } = await keyOnB(t, c, 'hal@example.com', "Hal's script")
    t.equal((await call(c.b, 'GET', '/v1/me', undefined, key)).statusCode, 200, 'B has the key cached')
    const onB = async (want: number) =>
      until(HANG_GUARD_MS, async () => ((await call(c.b, 'GET', '/v1/me', undefined, key)).statusCode === want ? want : undefined), 100)
    await setActive(false)
    t.equal(await onB(401), 401, 'B refuses the key within the Redis round trip (the clock did not move)')
    t.equal((await call(c.b, 'GET', '/v1/me', undefined, key)).statusCode, 401, 'and again (now from its refused tokens)')
    await setActive(true)
    t.equal(await onB(200), 200, 'activated again on A: B forgets it refused the key')
  }),
)

/**
 * A user with a password made on A, an API key they made on B, and `setActive`: the user's
 * `active` set through SCIM on A (a SCIM token made for it).
 */
async function keyOnB(t: Test, c: Awaited<ReturnType<typeof twoInstances>>, email: string, keyName: string) {
  const owner = { authorization: `Bearer ${c.apiKey}` }
  const { id, cookie } = await userWithPassword(c.a, c.apiKey, email)
  const session = cookie.slice('svc_session='.length)
  const made = await call(c.b, 'POST', '/v1/api-keys', { name: keyName, permissions: 'all' }, { authorization: `Bearer ${session}` })
  t.equal(made.statusCode, 201, made.body)
  const key = { authorization: `Bearer ${made.json().data.secret}` }
  const scimToken = (await call(c.a, 'POST', '/v1/sso/scim-token', undefined, owner)).json().data.token
  const setActive = async (active: boolean) => {
    const res = await c.a.inject({
      method: 'PATCH',
      url: `/scim/v2/Users/${id}`,
      headers: { authorization: `Bearer ${scimToken}`, 'content-type': 'application/scim+json' },
      payload: { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', value: { active } }] },
    })
    t.equal(res.statusCode, 200, res.body)
  }
  return { id, key, setActive }
}

/** `p`, or a failure naming `what` after HANG_GUARD_MS (a hang guard). */
function guarded<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const expiry = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`waited ${HANG_GUARD_MS / 60_000} minutes for ${what}`)), HANG_GUARD_MS)
  })
  return Promise.race([p, expiry]).finally(() => clearTimeout(timer))
}

/**
 * Holds the next count of failed authentications `app` sends to Redis (the `af:` key's MULTI)
 * until `release` is called; `entered` resolves once that count has been answered by Redis.
 */
function holdNextFailureCount(app: FastifyInstance): { entered: Promise<void>; release: () => void } {
  const redisClient = servicesOf(app).redis!
  const multi = redisClient.multi.bind(redisClient)
  let release!: () => void
  const released = new Promise<void>((r) => (release = r))
  let enter!: () => void
  const entered = new Promise<void>((r) => (enter = r))
  let armed = true
  redisClient.multi = ((...args: Parameters<typeof multi>) => {
    const pipeline = multi(...args)
    const incr = pipeline.incr.bind(pipeline)
    let counting = false
    pipeline.incr = ((key: string, ...rest: unknown[]) => {
      counting = armed && String(key).startsWith('af:')
      return (incr as (...a: unknown[]) => typeof pipeline)(key, ...rest)
    }) as typeof pipeline.incr
    const exec = pipeline.exec.bind(pipeline)
    pipeline.exec = (async (...a: Parameters<typeof exec>) => {
      const res = await exec(...a)
      if (counting) {
        armed = false
        enter()
        await released
      }
      return res
    }) as typeof pipeline.exec
    return pipeline
  }) as typeof redisClient.multi
  return { entered, release }
}

toolTest(t, redis, 'a refusal on B still being counted when the user is activated again on A: B does not remember it', async (t) =>
  eachEngine(t, 'two instances', async (t, db) => {
    const c = await twoInstances(t, db)
    const user = await keyOnB(t, c, 'ida@example.com', "Ida's script")
    const { key } = user
    /** Sets the user's `active` through SCIM on A; resolves once B has heard the change. */
    const setActive = async (active: boolean) => {
      const heard = new Promise<void>((resolve) => {
        const stop = servicesOf(c.b).credentialChanges.subscribe((ch) => {
          if (ch.kind === 'user' && ch.ids.includes(user.id)) {
            stop()
            resolve()
          }
        })
      })
      await user.setActive(active)
      await guarded(heard, `B to hear that the user was made ${active ? 'active' : 'inactive'}`)
    }
    await setActive(false)
    t.equal((await call(c.b, 'GET', '/v1/me', undefined, key)).statusCode, 401, 'B refuses the key')
    // The next refusal on B is held after its lookup, at its count, while the user is activated again.
    const hold = holdNextFailureCount(c.b)
    const refusedBefore = call(c.b, 'GET', '/v1/me', undefined, key)
    await guarded(hold.entered, "B's count of the refusal")
    await setActive(true)
    hold.release()
    t.equal((await refusedBefore).statusCode, 401, 'the request begun before is refused')
    t.equal((await call(c.b, 'GET', '/v1/me', undefined, key)).statusCode, 200, 'the next one is looked up again, and answers')
  }),
)
