// An event stream lives no longer than its credential, and its places cannot be hoarded
// (real sockets, one instance; two instances in test/cluster/eventStreams.test.ts): a key
// revoked, a user removed, a session signed out each end the open stream with `ended`; a
// credential without any event view permission opens none (403); places are bounded per
// credential as well as per workspace and a revoked credential's places are free at once;
// a malformed Last-Event-ID is refused with 422.
import t from 'tap'
import { startCloud, type Cloud } from '../devicelink/link.js'
import { bearer, openStream } from './sse.js'

const key = async (c: Cloud, permissions: string[] = ['screen.view']) => {
  const r = await c.call('POST', '/v1/api-keys', { name: 'k', permissions })
  if (r.status !== 201) throw new Error(`key: ${r.status}`)
  return { id: r.body.data.key?.id ?? r.body.data.id, secret: r.body.data.secret as string }
}

/** A viewer user who accepted the invite: their id and session token. */
async function viewer(c: Cloud, email = 'op@example.com'): Promise<{ id: string; session: string }> {
  const invite = await c.call('POST', '/v1/users', { email, role: 'viewer' })
  if (invite.status !== 201) throw new Error(`invite: ${invite.status}`)
  const token = invite.body.data.inviteUrl.split('#token=')[1]
  const accepted = await fetch(`http://127.0.0.1:${c.running.httpPort}/v1/invites/accept`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token, password: 'a long pass phrase' }),
  })
  const session = accepted.headers.get('set-cookie')!.split(';')[0]!.split('=')[1]!
  return { id: invite.body.data.user?.id ?? invite.body.data.id, session }
}

t.test('a revoked key, a removed user, a signed-out session: the open stream ends with `ended`', async (t) => {
  const c = await startCloud(t)
  const port = c.running.httpPort
  const k = await key(c)
  const byKey = await openStream(t, port, bearer(k.secret))
  t.equal(byKey.status, 200)
  t.equal((await byKey.next()).event, 'ready')
  t.equal((await c.call('POST', `/v1/api-keys/${k.id}/revoke`)).status, 200)
  const ended = await byKey.next((m) => m.event === 'ended')
  t.match(ended.data, { reason: 'credential_invalid', message: /no longer valid/ })
  await byKey.closed()
  t.pass('the revoked key’s stream is closed')

  const removed = await viewer(c, 'gone@example.com')
  const byCookie = await openStream(t, port, { cookie: `svc_session=${removed.session}` })
  t.equal((await byCookie.next()).event, 'ready')
  t.equal((await c.call('DELETE', `/v1/users/${removed.id}`)).status, 200)
  t.match((await byCookie.next((m) => m.event === 'ended')).data, { reason: 'credential_invalid' })
  await byCookie.closed()

  const signedOut = await viewer(c, 'out@example.com')
  const bySession = await openStream(t, port, bearer(signedOut.session))
  const other = await openStream(t, port, bearer(c.apiKey))
  t.equal((await bySession.next()).event, 'ready')
  t.equal((await other.next()).event, 'ready')
  t.equal((await c.call('DELETE', '/v1/session', undefined, signedOut.session)).status, 200)
  t.match((await bySession.next((m) => m.event === 'ended')).data, { reason: 'credential_invalid' })
  await bySession.closed()
  t.equal(other.messages.filter((m) => m.event === 'ended').length, 0, 'a stream of a credential still valid goes on')
})

t.test('a stream needs an event view permission (403 without one)', async (t) => {
  const c = await startCloud(t)
  const mediaOnly = await key(c, ['media.view', 'api-key.view'])
  const refused = await openStream(t, c.running.httpPort, bearer(mediaOnly.secret))
  t.equal(refused.status, 403)
  t.match(await refused.json(), { error: 'forbidden', message: /screen\.view/ })
  for (const perm of ['screen.view', 'content.view', 'approval.view', 'emergency.view']) {
    const s = await openStream(t, c.running.httpPort, bearer((await key(c, [perm])).secret))
    t.equal(s.status, 200, `${perm} opens a stream`)
    s.close()
  }
})

t.test('places per credential as well as per workspace; a revoked credential’s places are free at once', async (t) => {
  const c = await startCloud(t, { config: { eventStreamsPerWorkspace: 3, eventStreamsPerCredential: 2 } })
  const port = c.running.httpPort
  const hoarder = await key(c)
  const held = [await openStream(t, port, bearer(hoarder.secret)), await openStream(t, port, bearer(hoarder.secret))]
  for (const s of held) t.equal(s.status, 200)
  const third = await openStream(t, port, bearer(hoarder.secret))
  t.equal(third.status, 429, 'a credential holds at most its own bound')
  t.match(await third.json(), { error: 'rate_limited', message: /per credential/ })
  t.ok(third.headers['retry-after'])

  const owner = await openStream(t, port, bearer(c.apiKey))
  t.equal(owner.status, 200, 'the owner still gets a place')
  const full = await openStream(t, port, bearer(c.apiKey))
  t.equal(full.status, 429, 'the workspace bound holds too')
  t.match(await full.json(), { error: 'rate_limited', message: /per workspace/ })

  t.equal((await c.call('POST', `/v1/api-keys/${hoarder.id}/revoke`)).status, 200)
  for (const s of held) await s.closed()
  const after = await openStream(t, port, bearer(c.apiKey))
  t.equal(after.status, 200, 'the revoked key’s places are free as soon as its streams end')
})

t.test('a malformed Last-Event-ID is refused with 422 {error, message}', async (t) => {
  const c = await startCloud(t)
  for (const bad of ['nonsense', 'evt_TOOSHORT', `evt_${'0'.repeat(27)}`]) {
    const s = await openStream(t, c.running.httpPort, { ...bearer(c.apiKey), 'last-event-id': bad })
    t.equal(s.status, 422, bad)
    t.match(await s.json(), { error: 'validation_error', message: /last-event-id/i })
  }
  const good = await openStream(t, c.running.httpPort, { ...bearer(c.apiKey), 'last-event-id': `evt_${'0'.repeat(26)}` })
  t.equal(good.status, 200, 'a well-formed id is resumed from')
  t.equal((await good.next((m) => m.event !== 'ready')).event, 'reset')
})
