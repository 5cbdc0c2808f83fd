// Pairing (DESIGN "Screens and pairing" 1–3): register → claim the code → poll, through inject.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { build, makeKey } from '../helpers.js'
import { hashSecret } from '../../src/platform/secrets.js'
import { newPairingCode, PAIRING_ALPHABET } from '../../src/domains/screens/PairingService.js'

const register = (h: Awaited<ReturnType<typeof build>>, body: unknown = {}) => h.req('POST', '/v1/devices/register', null, body)

t.test('register answers a reg_ id, a 6-character code, a poll secret and a 15-minute expiry; only a hash is kept', async (t) => {
  const h = await build(t)
  const res = await register(h, { model: 'QM55B', serialNumber: 'SN-1' })
  t.equal(res.statusCode, 201)
  const d = res.json().data
  t.match(d.registrationId, /^reg_[0-9a-z]{26}$/)
  t.match(d.pairingCode, /^[A-Z2-9]{6}$/)
  t.ok(typeof d.pollSecret === 'string' && d.pollSecret.length >= 32)
  t.equal(d.expiresAt, '2026-06-01T12:15:00.000Z', 'now + 15 minutes')
  const row = await servicesOf(h.app).db.get<Record<string, unknown>>('SELECT * FROM device_registrations WHERE id = ?', [d.registrationId])
  t.equal(row?.poll_secret_hash, hashSecret(d.pollSecret))
  t.notOk(JSON.stringify(row).includes(d.pollSecret), 'the poll secret is not stored in clear')
  t.equal(row?.model, 'QM55B')

  const bare = await h.app.inject({ method: 'POST', url: '/v1/devices/register' })
  t.equal(bare.statusCode, 201, 'a body is optional')
})

t.test('pairing codes use exactly A–Z and 2–9', async (t) => {
  let n = 0
  const counter = (len: number) => Buffer.from(Array.from({ length: len }, () => n++ % 256))
  const seen = new Set<string>()
  for (let i = 0; i < 200; i++) for (const c of newPairingCode(counter)) seen.add(c)
  t.equal(PAIRING_ALPHABET, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ23456789')
  t.same([...seen].sort().join(''), [...PAIRING_ALPHABET].sort().join(''), 'every symbol appears, nothing else')
})

t.test('claim → first poll shows the device secret once, later polls do not', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  const reg = (await register(h, { model: 'QM55B', serialNumber: 'SN-7' })).json().data
  const path = `/v1/devices/register/${reg.registrationId}`

  const pending = await h.req('GET', path, reg.pollSecret)
  t.equal(pending.statusCode, 200)
  t.same(pending.json().data, { state: 'pending', expiresAt: reg.expiresAt })

  const node = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Lobby' })).json().data.id
  const pair = await h.req('POST', '/v1/screens/pair', apiKey, {
    code: reg.pairingCode.toLowerCase().replace(/^(...)/, '$1-'),
    name: 'Lobby left',
    nodeId: node,
  })
  t.equal(pair.statusCode, 201, 'case and a dash in the typed code do not matter')
  const screen = pair.json().data
  t.match(screen, {
    name: 'Lobby left',
    nodeId: node,
    status: 'offline',
    model: 'QM55B',
    serialNumber: 'SN-7',
    timezone: 'UTC',
    contentKind: null,
    lastSeenAt: null,
  })
  t.match(screen.id, /^scr_/)

  const first = await h.req('GET', path, reg.pollSecret)
  t.equal(first.statusCode, 200)
  const d = first.json().data
  t.equal(d.state, 'paired')
  t.equal(d.screenId, screen.id)
  t.ok(typeof d.deviceSecret === 'string' && d.deviceSecret.length >= 32)
  t.same(d.mqtt, { url: null, wsUrl: 'ws://localhost/mqtt', username: screen.id, topicPrefix: `svc/v1/screens/${screen.id}/` })
  const row = await servicesOf(h.app).db.get<Record<string, unknown>>('SELECT * FROM screens WHERE id = ?', [screen.id])
  t.equal(row?.device_secret_hash, hashSecret(d.deviceSecret), 'only the hash is stored')
  t.notOk(JSON.stringify(await servicesOf(h.app).db.all('SELECT * FROM device_registrations')).includes(d.deviceSecret))

  const second = (await h.req('GET', path, reg.pollSecret)).json().data
  t.equal(second.state, 'paired')
  t.equal(second.screenId, screen.id)
  t.notOk('deviceSecret' in second, 'the secret is shown once')
  t.ok(second.mqtt)

  const again = await h.req('POST', '/v1/screens/pair', apiKey, { code: reg.pairingCode, name: 'twice' })
  t.equal(again.statusCode, 422, 'a code is claimed once')
  t.equal(again.json().error, 'validation_error')
})

t.test('the public URL decides the MQTT addresses handed to the device', async (t) => {
  const h = await build(t, { publicUrl: 'https://signage.example.com' })
  const { apiKey } = await h.workspace()
  const reg = (await register(h)).json().data
  await h.req('POST', '/v1/screens/pair', apiKey, { code: reg.pairingCode, name: 'S' })
  const d = (await h.req('GET', `/v1/devices/register/${reg.registrationId}`, reg.pollSecret)).json().data
  t.equal(d.mqtt.wsUrl, 'wss://signage.example.com/mqtt')
  t.equal(d.mqtt.url, null, 'no TCP listener in this app')
})

t.test('the poll needs the right poll secret; an unknown registration is 404', async (t) => {
  const h = await build(t)
  const reg = (await register(h)).json().data
  const other = (await register(h)).json().data
  const path = `/v1/devices/register/${reg.registrationId}`
  const none = await h.req('GET', path, null)
  t.equal(none.statusCode, 401)
  t.equal(none.json().error, 'missing_credentials')
  for (const wrong of [other.pollSecret, `${reg.pollSecret}x`, 'nope']) {
    const res = await h.req('GET', path, wrong)
    t.equal(res.statusCode, 401)
    t.equal(res.json().error, 'invalid_credentials')
  }
  const unknown = await h.req('GET', '/v1/devices/register/reg_01jzzzzzzzzzzzzzzzzzzzzzzz', reg.pollSecret)
  t.equal(unknown.statusCode, 404)
  t.equal(unknown.json().error, 'not_found')
})

t.test('an expired or unknown code cannot be claimed; the poll then says expired', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  const reg = (await register(h)).json().data
  h.clock.advance(15 * 60_000 - 1)
  t.equal((await h.req('GET', `/v1/devices/register/${reg.registrationId}`, reg.pollSecret)).json().data.state, 'pending', 'still valid a millisecond before')
  h.clock.advance(1)
  const late = await h.req('POST', '/v1/screens/pair', apiKey, { code: reg.pairingCode, name: 'late' })
  t.equal(late.statusCode, 422)
  t.equal(late.json().error, 'validation_error')
  t.same((await h.req('GET', `/v1/devices/register/${reg.registrationId}`, reg.pollSecret)).json().data, { state: 'expired', expiresAt: reg.expiresAt })
  const unknown = await h.req('POST', '/v1/screens/pair', apiKey, { code: 'ZZZZZZ', name: 'x' })
  t.equal(unknown.statusCode, 422)
  t.equal((await servicesOf(h.app).db.get<{ n: number }>('SELECT COUNT(*) AS n FROM screens'))?.n, 0, 'no screen was made')
})

t.test('pairing needs screen.edit and a reachable nodeId', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  const { apiKey: other } = await h.workspace('Other')
  const viewer = await makeKey(h, apiKey, ['screen.view'])
  const reg = (await register(h)).json().data
  const denied = await h.req('POST', '/v1/screens/pair', viewer.secret, { code: reg.pairingCode, name: 'x' })
  t.equal(denied.statusCode, 403)
  t.equal(denied.json().message, 'Missing permission: screen.edit')
  const a = (await h.req('POST', '/v1/nodes', apiKey, { name: 'A' })).json().data.id
  const b = (await h.req('POST', '/v1/nodes', apiKey, { name: 'B' })).json().data.id
  const foreign = (await h.req('POST', '/v1/nodes', other, { name: 'theirs' })).json().data.id
  const pinned = await makeKey(h, apiKey, ['screen.edit', 'screen.view'], a)
  for (const nodeId of [b, foreign]) {
    const res = await h.req('POST', '/v1/screens/pair', pinned.secret, { code: reg.pairingCode, name: 'x', nodeId })
    t.equal(res.statusCode, 422)
    t.equal(res.json().error, 'invalid_node')
  }
  const ok = await h.req('POST', '/v1/screens/pair', pinned.secret, { code: reg.pairingCode, name: 'x' })
  t.equal(ok.statusCode, 201, 'the code was not used up by the refused attempts')
  t.equal(ok.json().data.nodeId, a, "a pinned key's screen is homed at its node")
})

t.test('registration is limited per client address', async (t) => {
  const h = await build(t)
  h.clock.set('2026-06-01T12:00:00.000Z')
  for (let i = 0; i < 30; i++) t.equal((await register(h)).statusCode, 201)
  const over = await register(h)
  t.equal(over.statusCode, 429)
  t.match(over.json(), { error: 'rate_limited', limit: 30, windowSeconds: 60, retryAfterSeconds: 60 })
  t.equal(over.headers['retry-after'], '60')
  const elsewhere = await h.app.inject({ method: 'POST', url: '/v1/devices/register', payload: {}, remoteAddress: '10.0.0.9' })
  t.equal(elsewhere.statusCode, 201, 'another address has its own budget')
  h.clock.advance(60_000)
  t.equal((await register(h)).statusCode, 201, 'the next window admits again')
})
