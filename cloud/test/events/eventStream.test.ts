// GET /v1/events/stream over real sockets: a real MQTT device going offline shows on the
// stream; events are filtered by the credential's permissions and location; Last-Event-ID
// resumes without gaps or repeats (and `reset` when it is too old); streams are bounded per
// workspace; the console's cookie works; an instance sees the events another one caused.
import { request, type IncomingMessage } from 'node:http'
import t, { type Test } from 'tap'
import { topics } from '@svc/shared/mqtt/index'
import { servicesOf } from '../../src/app.js'
import { ManualClock } from '../../src/platform/clock.js'
import { testConfig } from '../../src/config.js'
import { freshSqlite } from '../db/sqliteTemplate.js'
import { connectDevice, droppedAtBroker, startCloud, type Cloud } from '../devicelink/link.js'
import { type Message, takeMessages } from './sse.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

interface Stream {
  status: number
  headers: IncomingMessage['headers']
  messages: Message[]
  /** The next message (after those already taken) matching `pred`, within `ms` of real time. */
  next(pred?: (m: Message) => boolean, ms?: number): Promise<Message>
  /** True when no message matching `pred` arrived within `ms`. */
  quiet(pred: (m: Message) => boolean, ms?: number): Promise<boolean>
  body: string
  close(): void
}

function open(t: Test, c: Cloud, headers: Record<string, string>): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: c.running.httpPort, path: '/v1/events/stream', headers }, (res) => {
      const messages: Message[] = []
      let taken = 0
      let buf = ''
      let body = ''
      const waiters: (() => void)[] = []
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        body += chunk
        buf = takeMessages(buf + chunk, messages)
        for (const w of waiters.splice(0)) w()
      })
      const s: Stream = {
        status: res.statusCode!,
        headers: res.headers,
        messages,
        get body() {
          return body
        },
        async next(pred = () => true, ms = HANG_GUARD_MS) {
          const until = Date.now() + ms
          for (;;) {
            while (taken < messages.length) {
              const m = messages[taken++]!
              if (pred(m)) return m
            }
            if (Date.now() > until) throw new Error(`no matching message within ${ms} ms; had ${JSON.stringify(messages.map((x) => x.event))}`)
            await new Promise<void>((r) => {
              waiters.push(r)
              setTimeout(r, 50)
            })
          }
        },
        async quiet(pred, windowMs = 300) {
          try {
            await s.next(pred, windowMs)
            return false
          } catch {
            return true
          }
        },
        close: () => req.destroy(),
      }
      t.teardown(() => req.destroy())
      resolve(s)
    })
    req.on('error', reject)
    req.end()
  })
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

t.test('a screen going offline shows on the stream as soon as the API knows it', async (t) => {
  const c = await startCloud(t)
  const { presence } = servicesOf(c.running.app)
  const d = await c.pair('Foyer')
  const s = await open(t, c, bearer(c.apiKey))
  t.equal(s.status, 200)
  t.match(s.headers['content-type'], /^text\/event-stream/)
  t.equal(s.headers['cache-control'], 'no-store')
  t.ok(s.headers['x-svc-request-id'], 'the request id header is there')
  t.same((await s.next()).event, 'ready')

  const url = `mqtt://127.0.0.1:${c.running.mqttPort}`
  const dev = await connectDevice(t, url, d)
  await dev.client.publishAsync(topics.status(d.screenId), JSON.stringify({ status: 'online', at: '2026-06-01T12:00:00.000Z' }), { qos: 1, retain: true })
  const online = await s.next((m) => m.event === 'screen.online')
  t.match(online.data, { event: 'screen.online', data: { screenId: d.screenId, screenName: 'Foyer' } })
  t.match(online.id, /^evt_/)
  t.equal(online.data.id, online.id)

  dev.client.stream.destroy()
  t.ok(await droppedAtBroker(c, d.screenId))
  await presence.idle()
  c.clock.advance(presence.offlineAfterMs)
  await presence.sweep()
  const offline = await s.next((m) => m.event === 'screen.offline')
  t.match(offline.data.data, { screenId: d.screenId })
})

t.test('what a credential sees: its permissions, its location; no credential, no stream', async (t) => {
  const c = await startCloud(t)
  const store = (await c.call('POST', '/v1/nodes', { name: 'Store', kind: 'location' })).body.data.id as string
  const a = await c.pair('A')
  const b = await c.pair('B')
  t.equal((await c.call('PATCH', `/v1/screens/${b.screenId}`, { nodeId: store })).status, 200)
  const key = async (body: Record<string, unknown>) => (await c.call('POST', '/v1/api-keys', { name: 'k', ...body })).body.data.secret as string
  const screensOnly = await open(t, c, bearer(await key({ permissions: ['screen.view'] })))
  const emergenciesOnly = await open(t, c, bearer(await key({ permissions: ['emergency.view'] })))
  const pinned = await open(t, c, bearer(await key({ permissions: ['screen.view', 'emergency.view'], nodeId: store })))
  const services = servicesOf(c.running.app)
  const elsewhere = await services.workspaces.create('Elsewhere', 'us')
  const stranger = await open(t, c, bearer((await services.apiKeys.createRoot(elsewhere.id, elsewhere.region, 'Owner', 'all')).secret))
  for (const s of [screensOnly, emergenciesOnly, pinned, stranger]) t.equal((await s.next()).event, 'ready')

  const url = `mqtt://127.0.0.1:${c.running.mqttPort}`
  for (const d of [a, b]) {
    const dev = await connectDevice(t, url, d)
    await dev.client.publishAsync(topics.status(d.screenId), JSON.stringify({ status: 'online', at: '2026-06-01T12:00:00.000Z' }), { qos: 1, retain: true })
  }
  c.content.add(c.workspaceId, { kind: 'media', id: 'med_alert' })
  const emergency = await c.call('POST', '/v1/emergencies', { contentKind: 'media', contentId: 'med_alert', scopeKind: 'all' })
  t.equal(emergency.status, 201)

  const seenBy = async (s: Stream, pred: (m: Message) => boolean) => {
    const got: string[] = []
    for (;;) {
      try {
        const m = await s.next(() => true, 800)
        got.push(`${m.event}${m.data?.data?.screenId ? `:${m.data.data.screenId === a.screenId ? 'A' : 'B'}` : ''}`)
        if (pred(m)) continue
      } catch {
        return got.sort()
      }
    }
  }
  t.same(await seenBy(screensOnly, () => false), ['screen.online:A', 'screen.online:B'], 'screen.view: screen events only')
  t.same(await seenBy(emergenciesOnly, () => false), ['emergency.started'], 'emergency.view: emergency events only')
  t.same(await seenBy(pinned, () => false), ['screen.online:B'], 'pinned to the store: its screens only')
  t.same(await seenBy(stranger, () => false), [], 'another workspace sees nothing')

  const none = await open(t, c, {})
  t.equal(none.status, 401)
  t.match(JSON.parse(none.body || '{}'), { error: 'missing_credentials' })
})

t.test('Last-Event-ID resumes with what was missed, once each; an id the outbox no longer has answers reset', async (t) => {
  const c = await startCloud(t)
  const first = await open(t, c, bearer(c.apiKey))
  await first.next()
  c.content.add(c.workspaceId, { kind: 'media', id: 'med_fire' })
  await c.pair('Lobby') // an emergency needs a screen to reach
  // Each call makes one event: an emergency started, then cleared, and so on.
  let active: string | null = null
  const emit = async () => {
    if (active) {
      t.equal((await c.call('POST', `/v1/emergencies/${active}/clear`)).status, 200)
      active = null
    } else {
      const r = await c.call('POST', '/v1/emergencies', { contentKind: 'media', contentId: 'med_fire', scopeKind: 'all' })
      t.equal(r.status, 201)
      active = r.body.data.id
    }
  }
  const isEmergency = (m: Message) => m.event.startsWith('emergency.') && m.event !== 'emergency.reach'
  await emit()
  const one = await first.next(isEmergency)
  t.equal(one.event, 'emergency.started')
  first.close()
  await emit()
  await emit()
  const again = await open(t, c, { ...bearer(c.apiKey), 'last-event-id': one.id! })
  await again.next((m) => m.event === 'ready')
  const missed = [await again.next(isEmergency), await again.next(isEmergency)]
  t.same(
    missed.map((m) => m.event),
    ['emergency.cleared', 'emergency.started'],
    'the two missed, in order',
  )
  await emit()
  t.equal((await again.next(isEmergency)).event, 'emergency.cleared', 'then live')
  t.ok(await again.quiet(isEmergency), 'nothing twice')

  const old = await open(t, c, { ...bearer(c.apiKey), 'last-event-id': 'evt_00000000000000000000000000' })
  await old.next((m) => m.event === 'ready')
  t.equal((await old.next()).event, 'reset', 'an id the outbox does not have: reload')
})

t.test('streams per workspace are bounded; the console cookie opens one', async (t) => {
  const c = await startCloud(t, { config: { eventStreamsPerWorkspace: 2 } })
  const s1 = await open(t, c, bearer(c.apiKey))
  const s2 = await open(t, c, bearer(c.apiKey))
  t.equal(s1.status, 200)
  t.equal(s2.status, 200)
  const third = await open(t, c, bearer(c.apiKey))
  t.equal(third.status, 429)
  t.match(JSON.parse(third.body || (await new Promise((r) => setTimeout(r, 100)), third.body)), { error: 'rate_limited' })
  s1.close()
  await new Promise((r) => setTimeout(r, 100))
  const fourth = await open(t, c, bearer(c.apiKey))
  t.equal(fourth.status, 200, 'a closed stream frees its place')
  s2.close()
  fourth.close()
  await new Promise((r) => setTimeout(r, 100))

  const invite = await c.call('POST', '/v1/users', { email: 'op@example.com', role: 'viewer' })
  const token = invite.body.data.inviteUrl.split('#token=')[1]
  const accepted = await fetch(`http://127.0.0.1:${c.running.httpPort}/v1/invites/accept`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token, password: 'a long pass phrase' }),
  })
  const cookie = accepted.headers.get('set-cookie')!.split(';')[0]!
  const viaCookie = await open(t, c, { cookie })
  t.equal(viaCookie.status, 200, 'the session cookie opens a stream (a GET needs no CSRF token)')
  t.equal((await viaCookie.next()).event, 'ready')
})

t.test('an instance streams the events another instance caused (one database)', async (t) => {
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const db = await freshSqlite(testConfig().dbBusyTimeoutMs)
  t.teardown(() => db.close())
  const a = await startCloud(t, { clock, deps: { db } })
  // B's timers are the injected clock's: its outbox read happens when the test moves the clock, not on a real second.
  const b = await startCloud(t, { clock, deps: { db, timers: clock }, workspace: { id: a.workspaceId, apiKey: a.apiKey } })
  const s = await open(t, b, bearer(a.apiKey))
  await s.next()
  a.content.add(a.workspaceId, { kind: 'media', id: 'med_x' })
  b.content.add(a.workspaceId, { kind: 'media', id: 'med_x' })
  await a.pair('Lobby')
  t.equal((await a.call('POST', '/v1/emergencies', { contentKind: 'media', contentId: 'med_x', scopeKind: 'all' })).status, 201)
  t.ok(await s.quiet((m) => m.event === 'emergency.started', 300), 'B has not read the outbox yet')
  // B reads the outbox on its own timer: a second on the injected clock.
  clock.advance(1000)
  t.match((await s.next((m) => m.event === 'emergency.started')).data, { event: 'emergency.started', data: { contentId: 'med_x' } })
})
