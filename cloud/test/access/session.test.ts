// The console's sign-in through its routes: invite link → password → session cookie; sign-in
// by email and password; the cookie accepted by /v1 with a CSRF token on writes; sign-out
// ending the session at once; failed sign-ins held off per browser and address without
// locking the owner out; several workspaces behind one address; a new invite resetting a
// password. On SQLite and, with SVC_TEST_DATABASE_URL, on PostgreSQL.
import t, { type Test } from 'tap'
import { servicesOf } from '../../src/app.js'
import type { Harness } from '../helpers.js'
import { forEngines } from '../db/engines.js'

const PASSWORD = 'correct horse battery'

interface Browser {
  ip: string
  cookies: Map<string, string>
  csrf: string | null
}

const browser = (ip = '10.0.0.1'): Browser => ({ ip, cookies: new Map(), csrf: null })

/** Sends a request as a browser would: its cookies, its address, the CSRF header when it has one (unless told not to). */
async function send(h: Harness, b: Browser, method: string, url: string, body?: unknown, headers: Record<string, string> = {}) {
  const cookie = [...b.cookies].map(([k, v]) => `${k}=${v}`).join('; ')
  const res = await h.app.inject({
    method: method as 'GET',
    url,
    remoteAddress: b.ip,
    headers: { ...(cookie ? { cookie } : {}), ...(b.csrf && method !== 'GET' ? { 'x-svc-csrf': b.csrf } : {}), ...headers },
    ...(body === undefined ? {} : { payload: body as object }),
  })
  for (const c of res.cookies as { name: string; value: string; expires?: Date }[]) {
    if (c.value === '' || (c.expires && c.expires.getTime() <= Date.now() - 86_400_000 * 365)) b.cookies.delete(c.name)
    else b.cookies.set(c.name, c.value)
  }
  if (res.statusCode === 200 && res.json().data?.csrfToken) b.csrf = res.json().data.csrfToken
  return res
}

async function invited(h: Harness, apiKey: string, email: string, role = 'admin'): Promise<{ id: string; token: string; inviteUrl: string }> {
  const res = await h.req('POST', '/v1/users', apiKey, { email, role, name: 'Ada' })
  if (res.statusCode !== 201) throw new Error(`invite: ${res.statusCode} ${res.body}`)
  const u = res.json().data
  return { id: u.id, inviteUrl: u.inviteUrl, token: u.inviteUrl.split('#token=')[1] }
}

async function acceptedUser(t: Test, h: Harness, apiKey: string, email = 'ada@example.com', b = browser()) {
  const inv = await invited(h, apiKey, email)
  const res = await send(h, b, 'POST', '/v1/invites/accept', { token: inv.token, password: PASSWORD })
  t.equal(res.statusCode, 200, 'the invite is accepted')
  return { ...inv, browser: b }
}

forEngines(t, (t, build) => {
  t.test('an invite link sets the password once and signs the user in with an HttpOnly, SameSite=Strict cookie', async (t) => {
    const h = await build(t)
    const { apiKey, workspaceId } = await h.workspace('Acme')
    const inv = await invited(h, apiKey, 'ada@example.com')
    t.match(inv.inviteUrl, /^\/console\/welcome#token=inv_[A-Za-z0-9]{40}$/, 'a console link carrying the token after #')
    const mail = await servicesOf(h.app).mailer.outbox(workspaceId)
    t.equal(mail.length, 1, 'the invite is mailed')
    t.match(mail[0]!.body, inv.inviteUrl)
    t.same(JSON.parse(mail[0]!.to_addresses), ['ada@example.com'])

    const b = browser()
    const short = await send(h, b, 'POST', '/v1/invites/accept', { token: inv.token, password: 'too short' })
    t.equal(short.statusCode, 422)
    t.match(short.json(), { error: 'validation_error', message: 'body.password must be at least 12 characters.' })
    const res = await send(h, b, 'POST', '/v1/invites/accept', { token: inv.token, password: PASSWORD })
    t.equal(res.statusCode, 200)
    const body = res.json().data
    t.match(body, { user: { email: 'ada@example.com', role: 'admin' }, workspace: { id: workspaceId, name: 'Acme' } })
    t.type(body.csrfToken, 'string')
    t.notOk(JSON.stringify(body).includes('ust_'), 'the session token is not in the body')
    const setCookies = ([] as string[]).concat(res.headers['set-cookie'] as string | string[])
    const session = setCookies.find((c) => c.startsWith('svc_session='))!
    t.match(session, /^svc_session=ust_[A-Za-z0-9]{40};/)
    t.match(session, /HttpOnly/)
    t.match(session, /SameSite=Strict/)
    t.match(session, /Path=\//)
    t.notMatch(session, /Secure/, 'not Secure over plain http')
    t.match(
      setCookies.find((c) => c.startsWith('svc_device=')),
      /Path=\/v1\/session.*HttpOnly|HttpOnly.*Path=\/v1\/session/,
    )

    const again = await send(h, browser(), 'POST', '/v1/invites/accept', { token: inv.token, password: PASSWORD })
    t.equal(again.statusCode, 404, 'the link works once')
    t.equal((await send(h, browser(), 'POST', '/v1/invites/accept', { token: 'inv_nope', password: PASSWORD })).statusCode, 404)

    const me = await send(h, b, 'GET', '/v1/session')
    t.equal(me.statusCode, 200)
    t.equal(me.json().data.user.email, 'ada@example.com')
    t.equal((await send(h, b, 'GET', '/v1/me')).json().data.actor.kind, 'user', 'the cookie works on every route')
    const row = await servicesOf(h.app).db.get<{ password_hash: string }>('SELECT password_hash FROM users WHERE id = ?', [inv.id])
    t.match(row!.password_hash, /^scrypt\$10\$8\$3\$/, "stored as scrypt, with the configuration's work factor (tests: 2^10)")
    t.notOk(row!.password_hash.includes(PASSWORD))
  })

  t.test('an invite link expires after 7 days; a new one ends the old and resets the password', async (t) => {
    const h = await build(t)
    const { apiKey } = await h.workspace()
    const first = await invited(h, apiKey, 'bo@example.com')
    h.clock.advance(7 * 86_400_000 + 1)
    t.equal((await send(h, browser(), 'POST', '/v1/invites/accept', { token: first.token, password: PASSWORD })).statusCode, 404, 'expired')
    const second = await h.req('POST', `/v1/users/${first.id}/invite`, apiKey)
    t.equal(second.statusCode, 201)
    const token = second.json().data.inviteUrl.split('#token=')[1]
    t.equal((await send(h, browser(), 'POST', '/v1/invites/accept', { token, password: PASSWORD })).statusCode, 200)
    // A reset: a third link ends the second, and sets a new password.
    const third = (await h.req('POST', `/v1/users/${first.id}/invite`, apiKey)).json().data.inviteUrl.split('#token=')[1]
    t.equal((await send(h, browser(), 'POST', '/v1/invites/accept', { token: third, password: 'another good password' })).statusCode, 200)
    t.equal((await send(h, browser(), 'POST', '/v1/session', { email: 'bo@example.com', password: PASSWORD })).statusCode, 401, 'the old password is gone')
    t.equal((await send(h, browser(), 'POST', '/v1/session', { email: 'bo@example.com', password: 'another good password' })).statusCode, 200)
    t.equal((await h.req('POST', '/v1/users/usr_nope/invite', apiKey)).statusCode, 404)
    const other = await h.workspace('Other')
    t.equal((await h.req('POST', `/v1/users/${first.id}/invite`, other.apiKey)).statusCode, 404, "another workspace's user is not found")
  })

  t.test('sign-in by email and password; the same answer for a wrong password and an unknown address', async (t) => {
    const h = await build(t)
    const { apiKey } = await h.workspace()
    await acceptedUser(t, h, apiKey)
    const wrong = await send(h, browser('10.0.0.2'), 'POST', '/v1/session', { email: 'ada@example.com', password: 'not the password' })
    const unknown = await send(h, browser('10.0.0.3'), 'POST', '/v1/session', { email: 'who@example.com', password: 'not the password' })
    t.equal(wrong.statusCode, 401)
    t.same(wrong.json(), unknown.json(), 'nothing tells an unknown address from a wrong password')
    t.same(wrong.json(), { error: 'invalid_credentials', message: 'The email or password is wrong.' })
    for (const bad of [{ email: 'ada@example.com' }, { password: PASSWORD }, { email: 'ada@example.com', password: PASSWORD, extra: 1 }]) {
      const r = await send(h, browser(), 'POST', '/v1/session', bad)
      t.equal(r.statusCode, 422, JSON.stringify(bad))
      t.equal(r.json().error, 'validation_error')
    }
    const b = browser('10.0.0.4')
    const ok = await send(h, b, 'POST', '/v1/session', { email: ' ADA@example.com ', password: PASSWORD })
    t.equal(ok.statusCode, 200)
    t.ok(b.cookies.get('svc_session')?.startsWith('ust_'))
  })

  t.test('the cookie changes nothing without the CSRF token; a bearer needs none', async (t) => {
    const h = await build(t)
    const { apiKey } = await h.workspace()
    const { browser: b } = await acceptedUser(t, h, apiKey)
    const csrf = b.csrf!
    b.csrf = null
    const without = await send(h, b, 'POST', '/v1/nodes', { name: 'Lobby' })
    t.equal(without.statusCode, 403)
    t.match(without.json().message, /x-svc-csrf/)
    t.equal(
      (await send(h, b, 'POST', '/v1/nodes', { name: 'Lobby' }, { 'x-svc-csrf': `${csrf.slice(0, -1)}${csrf.endsWith('x') ? 'y' : 'x'}` })).statusCode,
      403,
      'a wrong token',
    )
    t.equal(
      (await send(h, b, 'POST', '/v1/nodes', { name: 'Lobby' }, { 'x-svc-csrf': csrf, 'sec-fetch-site': 'cross-site' })).statusCode,
      403,
      'a browser saying the request is cross-site',
    )
    t.equal((await h.req('GET', '/v1/nodes', apiKey)).json().data.length, 0, 'nothing was made')
    t.equal((await send(h, b, 'POST', '/v1/nodes', { name: 'Lobby' }, { 'x-svc-csrf': csrf, 'sec-fetch-site': 'same-origin' })).statusCode, 201)
    t.equal((await send(h, b, 'GET', '/v1/nodes')).statusCode, 200, 'reads need no token')
    t.equal((await h.req('POST', '/v1/nodes', apiKey, { name: 'Hall' })).statusCode, 201, 'a bearer needs no token')
    // Only a session token is taken from the cookie.
    const keyCookie = await h.app.inject({ method: 'GET', url: '/v1/me', headers: { cookie: `svc_session=${apiKey}` } })
    t.equal(keyCookie.statusCode, 401)
    t.equal((await h.req('GET', '/v1/session', apiKey)).statusCode, 404, 'an API key has no session')
  })

  t.test('sign-out ends the session at once and clears the cookie', async (t) => {
    const h = await build(t)
    const { apiKey } = await h.workspace()
    const { browser: b } = await acceptedUser(t, h, apiKey)
    const token = b.cookies.get('svc_session')!
    t.equal((await send(h, b, 'GET', '/v1/me')).statusCode, 200, 'signed in (its principal is cached now)')
    const out = await send(h, b, 'DELETE', '/v1/session')
    t.equal(out.statusCode, 200)
    t.match(([] as string[]).concat(out.headers['set-cookie'] as string | string[]).join('\n'), /svc_session=;/)
    t.notOk(b.cookies.has('svc_session'))
    const stale = await h.app.inject({ method: 'GET', url: '/v1/me', headers: { cookie: `svc_session=${token}` } })
    t.equal(stale.statusCode, 401, 'the old cookie is refused on the next request')
    t.equal((await h.req('GET', '/v1/me', token)).statusCode, 401, 'and so is the token as a bearer')
  })

  t.test('failed sign-ins are held off per browser and address; the owner still signs in from a browser they used', async (t) => {
    const h = await build(t)
    const { apiKey } = await h.workspace()
    const { browser: owner } = await acceptedUser(t, h, apiKey)
    t.ok(owner.cookies.has('svc_device'), 'the owner’s browser holds a device cookie')
    await send(h, owner, 'DELETE', '/v1/session')
    const wrong = { email: 'ada@example.com', password: 'guess guess guess' }
    // One address guessing: 5 failures, then 429 even for the right password.
    const attacker = browser('203.0.113.9')
    for (let i = 0; i < 5; i++) t.equal((await send(h, attacker, 'POST', '/v1/session', wrong)).statusCode, 401)
    const held = await send(h, attacker, 'POST', '/v1/session', { ...wrong, password: PASSWORD })
    t.equal(held.statusCode, 429, 'held off before the password is checked')
    t.match(held.headers['retry-after'], /^\d+$/)
    t.equal(
      (await send(h, browser('198.51.100.1'), 'POST', '/v1/session', { email: 'ada@example.com', password: PASSWORD })).statusCode,
      200,
      'another address is not held off',
    )
    // Many addresses guessing: 50 failures for the address in all, then every browser without the device cookie waits...
    for (let a = 0; a < 9; a++) for (let i = 0; i < 5; i++) await send(h, browser(`203.0.113.${20 + a}`), 'POST', '/v1/session', wrong)
    t.equal((await send(h, browser('192.0.2.77'), 'POST', '/v1/session', { email: 'ada@example.com', password: PASSWORD })).statusCode, 429)
    // ...but the owner's browser, which signed in before, is counted apart.
    t.equal((await send(h, owner, 'POST', '/v1/session', { email: 'ada@example.com', password: PASSWORD })).statusCode, 200, 'the owner is not locked out')
    await send(h, owner, 'DELETE', '/v1/session')
    for (let i = 0; i < 10; i++) await send(h, owner, 'POST', '/v1/session', wrong)
    t.equal((await send(h, owner, 'POST', '/v1/session', { email: 'ada@example.com', password: PASSWORD })).statusCode, 429, 'a device has its own limit')
    // Other addresses are untouched.
    await acceptedUser(t, h, apiKey, 'cy@example.com')
    t.equal((await send(h, browser('203.0.113.9'), 'POST', '/v1/session', { email: 'cy@example.com', password: PASSWORD })).statusCode, 200)
    // The window passes.
    h.clock.advance(15 * 60_000)
    t.equal((await send(h, attacker, 'POST', '/v1/session', { email: 'ada@example.com', password: PASSWORD })).statusCode, 200, 'after the window')
  })

  t.test('one address in several workspaces: each password signs in to its own workspace; workspaceId chooses', async (t) => {
    const h = await build(t)
    const a = await h.workspace('Alpha')
    const b = await h.workspace('Beta')
    await acceptedUser(t, h, a.apiKey, 'dee@example.com')
    // Beta's account gets a password of its own.
    const inv = await invited(h, b.apiKey, 'dee@example.com')
    t.equal((await send(h, browser(), 'POST', '/v1/invites/accept', { token: inv.token, password: 'the beta pass phrase' })).statusCode, 200)
    const toAlpha = await send(h, browser(), 'POST', '/v1/session', { email: 'dee@example.com', password: PASSWORD })
    t.equal(toAlpha.statusCode, 200)
    t.equal(toAlpha.json().data.workspace.name, 'Alpha', "Alpha's password signs in to Alpha")
    const toBeta = await send(h, browser(), 'POST', '/v1/session', { email: 'dee@example.com', password: 'the beta pass phrase' })
    t.equal(toBeta.json().data.workspace.name, 'Beta', "Beta's password signs in to Beta")
    const crossed = await send(h, browser('10.0.0.9'), 'POST', '/v1/session', {
      email: 'dee@example.com',
      password: 'the beta pass phrase',
      workspaceId: a.workspaceId,
    })
    t.equal(crossed.statusCode, 401, "Beta's password never opens Alpha")
    // The same password in both: the account whose password was set last, unless workspaceId names the other.
    h.clock.advance(1000)
    const first = await h.req('GET', '/v1/users', a.apiKey)
    const alphaDee = first.json().data.find((u: { email: string }) => u.email === 'dee@example.com').id
    const reset = (await h.req('POST', `/v1/users/${alphaDee}/invite`, a.apiKey)).json().data.inviteUrl.split('#token=')[1]
    t.equal((await send(h, browser(), 'POST', '/v1/invites/accept', { token: reset, password: 'the beta pass phrase' })).statusCode, 200)
    const latest = await send(h, browser(), 'POST', '/v1/session', { email: 'dee@example.com', password: 'the beta pass phrase' })
    t.equal(latest.statusCode, 200)
    t.equal(latest.json().data.workspace.name, 'Alpha', 'the password set last (Alpha, just now) wins')
    const chosen = await send(h, browser(), 'POST', '/v1/session', { email: 'dee@example.com', password: 'the beta pass phrase', workspaceId: b.workspaceId })
    t.equal(chosen.statusCode, 200)
    t.equal(chosen.json().data.workspace.name, 'Beta')
  })

  t.test("another workspace's admin learns nothing of a password: a match elsewhere answers as a sign-in to their own account", async (t) => {
    const h = await build(t)
    const victim = await h.workspace('Victim')
    const attacker = await h.workspace('Attacker')
    await acceptedUser(t, h, victim.apiKey, 'owner@victim.example')
    const answers: { status: number; workspace: unknown; theirOwn: boolean; keys: string[] }[] = []
    for (const guess of ['a wrong guess of it', PASSWORD]) {
      // The attacker (an admin of their own workspace) gives the victim's address a password of their choosing...
      h.clock.advance(1000)
      const inv = await invited(h, attacker.apiKey, 'owner@victim.example')
      t.equal((await send(h, browser(), 'POST', '/v1/invites/accept', { token: inv.token, password: guess })).statusCode, 200)
      // ...and signs in with it without naming a workspace.
      const res = await send(h, browser('203.0.113.50'), 'POST', '/v1/session', { email: 'owner@victim.example', password: guess })
      answers.push({
        status: res.statusCode,
        workspace: res.json().data?.workspace,
        theirOwn: res.json().data?.user?.id === inv.id,
        keys: Object.keys(res.json()),
      })
      const direct = await send(h, browser('203.0.113.51'), 'POST', '/v1/session', {
        email: 'owner@victim.example',
        password: guess,
        workspaceId: attacker.workspaceId,
      })
      t.same(
        { status: direct.statusCode, workspace: direct.json().data?.workspace, user: direct.json().data?.user?.id },
        { status: res.statusCode, workspace: res.json().data?.workspace, user: res.json().data?.user?.id },
        'the same answer as a sign-in to their own account',
      )
      await h.req('DELETE', `/v1/users/${inv.id}`, attacker.apiKey)
    }
    t.same(answers[0], answers[1], "whether the guess is the victim's password does not show")
    t.match(answers[1], { status: 200, workspace: { id: attacker.workspaceId }, theirOwn: true })
  })

  t.test("a device cookie earned on another workspace's account of the address gives no count of its own here", async (t) => {
    const h = await build(t)
    const victim = await h.workspace('Victim')
    const attacker = await h.workspace('Attacker')
    const { browser: owner } = await acceptedUser(t, h, victim.apiKey, 'owner@victim.example')
    // The attacker gives the address a password in their own workspace and signs in there: their browser holds a device cookie.
    const inv = await invited(h, attacker.apiKey, 'owner@victim.example')
    const b = browser('203.0.113.70')
    t.equal((await send(h, b, 'POST', '/v1/invites/accept', { token: inv.token, password: 'the attackers own pass' })).statusCode, 200)
    t.ok(b.cookies.has('svc_device'))
    const codes: number[] = []
    for (let i = 0; i < 7; i++)
      codes.push(
        (await send(h, b, 'POST', '/v1/session', { email: 'owner@victim.example', password: `guess ${i} at the victim`, workspaceId: victim.workspaceId }))
          .statusCode,
      )
    t.same(codes, [401, 401, 401, 401, 401, 429, 429], "guessing at the victim's account is held to a stranger's count (5), not a device's (10)")
    const own = await send(h, owner, 'POST', '/v1/session', { email: 'owner@victim.example', password: PASSWORD, workspaceId: victim.workspaceId })
    t.equal(own.statusCode, 200, "the owner's browser, whose cookie was earned on their account, is counted apart")
  })

  t.test('a new password ends every other session of the user, on the next request', async (t) => {
    const h = await build(t)
    const { apiKey } = await h.workspace()
    const { id, browser: stolen } = await acceptedUser(t, h, apiKey, 'fay@example.com')
    const other = browser('10.0.0.7')
    t.equal((await send(h, other, 'POST', '/v1/session', { email: 'fay@example.com', password: PASSWORD })).statusCode, 200)
    for (const b of [stolen, other]) t.equal((await send(h, b, 'GET', '/v1/me')).statusCode, 200, 'signed in (the principal is cached now)')
    // The owner resets the password: a new invite link, a new password.
    const link = (await h.req('POST', `/v1/users/${id}/invite`, apiKey)).json().data.inviteUrl.split('#token=')[1]
    const fresh = browser('10.0.0.8')
    t.equal((await send(h, fresh, 'POST', '/v1/invites/accept', { token: link, password: 'a brand new pass phrase' })).statusCode, 200)
    for (const b of [stolen, other]) {
      const res = await send(h, b, 'GET', '/v1/me')
      t.equal(res.statusCode, 401, 'a session taken before the new password is refused')
      t.equal(res.json().error, 'invalid_credentials')
    }
    t.equal((await send(h, fresh, 'GET', '/v1/me')).statusCode, 200, 'the session the new password opened works')
  })

  t.test('30 wrong passwords sent at once from one client: 5 are checked, 25 answer 429', async (t) => {
    const h = await build(t)
    const { apiKey } = await h.workspace()
    await acceptedUser(t, h, apiKey, 'gil@example.com')
    const res = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        send(h, browser('203.0.113.60'), 'POST', '/v1/session', { email: 'gil@example.com', password: `wrong guess number ${i}` }),
      ),
    )
    const codes = res.map((r) => r.statusCode)
    t.equal(codes.filter((c) => c === 401).length, 5, 'five checked')
    t.equal(codes.filter((c) => c === 429).length, 25, 'the rest held off')
    for (const r of res.filter((r) => r.statusCode === 429)) t.match(r.headers['retry-after'], /^\d+$/)
    t.equal((await send(h, browser('203.0.113.60'), 'POST', '/v1/session', { email: 'gil@example.com', password: PASSWORD })).statusCode, 429)
    t.equal(
      (await send(h, browser('203.0.113.61'), 'POST', '/v1/session', { email: 'gil@example.com', password: PASSWORD })).statusCode,
      200,
      'another client is not held off',
    )
  })

  t.test('passwords that are blank or trivially weak are refused, saying why', async (t) => {
    const h = await build(t)
    const { apiKey } = await h.workspace()
    const inv = await invited(h, apiKey, 'hal@example.com')
    for (const [password, why] of [
      [' '.repeat(12), /blank/],
      ['\t \u00a0'.repeat(6), /blank/],
      ['aaaaaaaaaaaa', /different characters/],
      ['abababababab', /different characters/],
      ['123456789012', /sequence/],
      ['abcdefghijklmn', /sequence/],
      ['qwertyuiopasdf', /sequence/],
      ['password1234', /common/],
      ['Password2024!', /common/],
    ] as const) {
      const res = await send(h, browser(), 'POST', '/v1/invites/accept', { token: inv.token, password })
      t.equal(res.statusCode, 422, JSON.stringify(password))
      t.match(res.json(), { error: 'validation_error', message: why })
    }
    t.equal((await send(h, browser(), 'POST', '/v1/invites/accept', { token: inv.token, password: PASSWORD })).statusCode, 200, 'the link still works')
  })
})

t.test("strangers flooding sign-ins do not fill scrypt's queue: the owner's browser still signs in", async (t) => {
  const { build } = await import('../helpers.js')
  // A slower work factor than the tests' 2^10, so the flood is still waiting when the owner signs in.
  const h = await build(t, { passwordScryptLogN: 13 })
  const { apiKey } = await h.workspace()
  const { browser: owner } = await acceptedUser(t, h, apiKey, 'ida@example.com')
  await send(h, owner, 'DELETE', '/v1/session')
  const flood = Array.from({ length: 150 }, (_, i) =>
    send(h, browser(`198.18.${i >> 8}.${i & 255}`), 'POST', '/v1/session', { email: `made.up.${i}@example.com`, password: 'flooding guess' }),
  )
  const mine: number[] = []
  for (let i = 0; i < 3; i++) {
    mine.push((await send(h, owner, 'POST', '/v1/session', { email: 'ida@example.com', password: PASSWORD })).statusCode)
    await send(h, owner, 'DELETE', '/v1/session')
  }
  const strangers = await Promise.all(flood)
  t.same(mine, [200, 200, 200], 'the browser that signed in before is never refused')
  const refused = strangers.filter((r) => r.statusCode === 429)
  t.ok(refused.length > 0, `strangers past the queue are refused at once (${refused.length} of 150)`)
  for (const r of refused) t.match(r.headers['retry-after'], /^\d+$/)
  t.same(new Set(strangers.map((r) => r.statusCode)), new Set([401, 429]))
})

t.test('under an https public URL the cookies are Secure', async (t) => {
  const { build } = await import('../helpers.js')
  const h = await build(t, { publicUrl: 'https://signage.example.com' })
  const { apiKey } = await h.workspace()
  const inv = await invited(h, apiKey, 'ed@example.com')
  t.match(inv.inviteUrl, /^https:\/\/signage\.example\.com\/console\/welcome#token=inv_/)
  const res = await send(h, browser(), 'POST', '/v1/invites/accept', { token: inv.token, password: PASSWORD })
  for (const c of ([] as string[]).concat(res.headers['set-cookie'] as string | string[])) t.match(c, /; Secure/)
})

t.test("scrypt's work factor: 2^15 unless set (14 to 20); a stored hash keeps its own factor", async (t) => {
  const { loadConfig } = await import('../../src/config.js')
  const { hashPassword, verifyPassword } = await import('../../src/domains/access/passwords.js')
  t.equal(loadConfig({}).passwordScryptLogN, 15, 'the default')
  t.equal(loadConfig({ SVC_PASSWORD_SCRYPT_LOG_N: '16' }).passwordScryptLogN, 16)
  t.throws(() => loadConfig({ SVC_PASSWORD_SCRYPT_LOG_N: '12' }), /from 14 to 20/, 'below OWASP’s floor: refused at start-up')
  const strong = await hashPassword('a long pass phrase')
  t.match(strong, /^scrypt\$15\$8\$3\$/, 'new hashes get the default')
  t.ok(await verifyPassword('a long pass phrase', strong, 10), 'verified with its own factor, whatever the setting now')
  t.notOk(await verifyPassword('a wrong pass phrase', strong, 10))
})
