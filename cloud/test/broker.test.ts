// The broker's device policy, end to end: a real cloud (startServer) and a real MQTT client
// over TCP (and once over WebSocket) acting as the paired device. The policy's Last-Will
// rule for a client no longer present is checked on DevicePolicy directly.
import { servicesOf } from '../src/app.js'
import t, { type Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connectAsync, type IClientOptions, type MqttClient } from 'mqtt'
import type { Client, PublishPacket, Subscription } from 'aedes'
import { topics } from '@svc/shared/mqtt/index'
import { startServer, type Running } from '../src/server.js'
import { testConfig } from '../src/config.js'
import { DevicePolicy } from '../src/domains/devicelink/DevicePolicy.js'
import { hashSecret } from '../src/platform/secrets.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

interface Device {
  screenId: string
  deviceSecret: string
  mqtt: { url: string; wsUrl: string; username: string; topicPrefix: string }
}

async function cloud(t: Test): Promise<{ running: Running; base: string; apiKey: string; pair(name?: string): Promise<Device> }> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-broker-'))
  const running = await startServer(testConfig({ dataDir: dir, dbFile: join(dir, 'svc.sqlite'), httpPort: 0, mqttPort: 0, host: '127.0.0.1' }))
  t.after(async () => {
    await running.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const services = servicesOf(running.app)
  const ws = await services.workspaces.create('Broker test', 'us')
  const apiKey = (await services.apiKeys.createRoot(ws.id, ws.region, 'Owner', 'all')).secret
  const base = `http://127.0.0.1:${running.httpPort}`
  const call = async (method: string, path: string, token: string | null, body?: unknown) => {
    const res = await fetch(base + path, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    })
    return { status: res.status, body: (await res.json()) as { data: unknown } }
  }
  return {
    running,
    base,
    apiKey,
    async pair(name = 'Screen') {
      const reg = (await call('POST', '/v1/devices/register', null, {})).body.data as { registrationId: string; pairingCode: string; pollSecret: string }
      const pair = await call('POST', '/v1/screens/pair', apiKey, { code: reg.pairingCode, name })
      if (pair.status !== 201) throw new Error(`pair ${pair.status}`)
      const poll = (await call('GET', `/v1/devices/register/${reg.registrationId}`, reg.pollSecret)).body.data as unknown as Device
      return poll
    },
  }
}

/** Waits for one event of the client (mqtt's typed emitter is not a node EventEmitter to once()). */
function once(c: MqttClient, event: 'close' | 'message'): Promise<unknown[]> {
  return new Promise((resolve) => c.once(event, (...args: unknown[]) => resolve(args)))
}

function opts(d: Device, extra: Partial<IClientOptions> = {}): IClientOptions {
  return {
    clientId: d.screenId,
    username: d.screenId,
    password: d.deviceSecret,
    protocolVersion: 4,
    clean: false,
    reconnectPeriod: 0,
    connectTimeout: 5000,
    ...extra,
  }
}

async function connect(t: Test, url: string, o: IClientOptions): Promise<MqttClient> {
  const c = await connectAsync(url, o)
  t.after(() => c.endAsync(true).catch(() => undefined))
  return c
}

/** Connects expecting a refusal; resolves with the CONNACK return code. */
async function refusedCode(url: string, o: IClientOptions): Promise<number | undefined> {
  try {
    const c = await connectAsync(url, o)
    await c.endAsync(true)
    return 0
  } catch (e) {
    return (e as { code?: number }).code
  }
}

t.test('a paired device connects with its secret; wrong or unknown credentials are refused', async (t) => {
  const { running, pair } = await cloud(t)
  const d = await pair()
  t.equal(d.mqtt.url, `mqtt://127.0.0.1:${running.mqttPort}`)
  t.equal(d.mqtt.username, d.screenId)
  const c = await connect(t, d.mqtt.url, opts(d))
  t.ok(c.connected, 'CONNACK accepted')

  t.equal(await refusedCode(d.mqtt.url, opts(d, { clientId: `${d.screenId}-x`, password: 'wrong' })), 4, 'wrong password: bad username or password')
  t.equal(await refusedCode(d.mqtt.url, opts(d, { clientId: 'scr_nobody', username: 'scr_nobody' })), 4, 'unknown screen')
  t.equal(await refusedCode(d.mqtt.url, opts(d, { clientId: 'x', username: undefined, password: undefined })), 4, 'no credentials')
  t.equal(await refusedCode(d.mqtt.url, opts(d, { clientId: 'someone-else' })), 2, 'the client id must be the screen id')
  t.ok(c.connected, 'the good connection was not disturbed')

  const ws = await connect(t, d.mqtt.wsUrl, opts(d, { clientId: d.screenId }))
  t.ok(ws.connected, 'MQTT over WebSocket at /mqtt with the same credential')
})

t.test('a device publishes only its own status/reported/job-results and subscribes only its own desired/jobs', async (t) => {
  const { running, pair } = await cloud(t)
  const a = await pair('A')
  const b = await pair('B')
  const seen: { topic: string; payload: string; client: string | null }[] = []
  servicesOf(running.app).broker.aedes.on('publish', (packet, client) => {
    // Devices' publishes only (the cloud's own retained desired states go out on pairing).
    if (!packet.topic.startsWith('$') && client) seen.push({ topic: packet.topic, payload: packet.payload.toString(), client: client?.id ?? null })
  })

  const ca = await connect(t, a.mqtt.url, opts(a))
  await ca.publishAsync(topics.status(a.screenId), JSON.stringify({ status: 'online', at: '2026-06-01T12:00:00.000Z' }), { qos: 1, retain: true })
  await ca.publishAsync(topics.reported(a.screenId), JSON.stringify({ version: 0 }), { qos: 1, retain: true })
  await ca.publishAsync(topics.jobResults(a.screenId), JSON.stringify({ jobId: 'j1' }), { qos: 1 })
  // The broker may emit `publish` for a retained message after its PUBACK (it stores the
  // retained copy first), so the order may differ too: wait, bounded, for all three.
  for (const until = Date.now() + HANG_GUARD_MS; seen.length < 3 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 5))
  t.same(
    seen.map((s) => [s.topic, s.client]).sort(),
    [
      [topics.status(a.screenId), a.screenId],
      [topics.reported(a.screenId), a.screenId],
      [topics.jobResults(a.screenId), a.screenId],
    ].sort(),
    'own agent-to-cloud topics are accepted (PUBACK) and reach the broker',
  )

  const granted = await ca.subscribeAsync([topics.desired(a.screenId), topics.jobs(a.screenId)], { qos: 1 })
  t.same(
    granted.map((g) => g.qos),
    [1, 1],
    'own desired and jobs granted',
  )
  for (const filter of [topics.desired(b.screenId), 'svc/v1/screens/+/desired', '#', topics.status(a.screenId), '$SYS/#']) {
    // mqtt.js rejects a SUBACK carrying a failure code, with the packet attached
    const err = await ca.subscribeAsync(filter, { qos: 1 }).then(
      () => null,
      (e: { packet?: { granted?: unknown[] } }) => e,
    )
    t.same(err?.packet?.granted, [128], `subscribe ${filter} refused with 128`)
  }
  t.ok(ca.connected, 'a refused subscription keeps the connection')

  // the desired state published by the cloud reaches the device
  const got = once(ca, 'message')
  servicesOf(running.app).broker.aedes.publish(
    { cmd: 'publish', topic: topics.desired(a.screenId), payload: Buffer.from('{"version":1}'), qos: 1, retain: true, dup: false },
    () => undefined,
  )
  const [topic, payload] = (await got) as [string, Buffer]
  t.equal(topic, topics.desired(a.screenId))
  t.equal(payload.toString(), '{"version":1}')

  for (const topic of [topics.status(b.screenId), topics.desired(a.screenId), '$SYS/x', 'elsewhere']) {
    const c = await connect(t, a.mqtt.url, opts(a))
    const closed = once(c, 'close')
    c.publish(topic, '{}', { qos: 1 })
    await closed
    t.pass(`publish to ${topic} closes the connection`)
  }
  t.notOk(
    seen.some((s) => s.topic === topics.status(b.screenId) || s.topic === 'elsewhere' || s.topic === '$SYS/x'),
    'nothing refused was delivered',
  )
})

t.test("the Last Will to the device's own status is published when it drops", async (t) => {
  const { running, pair } = await cloud(t)
  const d = await pair()
  const offline = '{"status":"offline","at":"2026-06-01T12:00:00.000Z"}'
  const c = await connect(t, d.mqtt.url, opts(d, { will: { topic: topics.status(d.screenId), payload: Buffer.from(offline), qos: 1, retain: true } }))
  const will = new Promise<{ topic: string; payload: string }>((resolve) => {
    servicesOf(running.app).broker.aedes.on('publish', (packet) => {
      if (packet.topic === topics.status(d.screenId)) resolve({ topic: packet.topic, payload: packet.payload.toString() })
    })
  })
  c.stream.destroy() // an unclean drop: no DISCONNECT, so the broker sends the will
  t.same(await will, { topic: topics.status(d.screenId), payload: offline })
})

t.test('deleting the screen closes its connection and its secret stops working', async (t) => {
  const { running, base, apiKey, pair } = await cloud(t)
  const d = await pair()
  const c = await connect(t, d.mqtt.url, opts(d))
  const closed = once(c, 'close')
  const res = await fetch(`${base}/v1/screens/${d.screenId}`, { method: 'DELETE', headers: { authorization: `Bearer ${apiKey}` } })
  t.equal(res.status, 200)
  await closed
  t.pass('the live connection was closed')
  t.equal(await refusedCode(`mqtt://127.0.0.1:${running.mqttPort}`, opts(d)), 4, 'the credential no longer connects')
})

t.test('DevicePolicy rules, directly', async (t) => {
  const secret = 'device-secret'
  const policy = new DevicePolicy({ credentialHash: async (id) => (id === 'scr_a' ? hashSecret(secret) : null) })
  const client = (id: string) => ({ id }) as unknown as Client
  const auth = (c: Client, u: string | undefined, p: string | undefined) =>
    new Promise<{ ok: boolean | null; code?: number }>((resolve) =>
      policy.authenticate(c, u, p === undefined ? undefined : Buffer.from(p), (err, ok) =>
        resolve({ ok, code: (err as { returnCode?: number } | null)?.returnCode }),
      ),
    )
  t.same(await auth(client('scr_a'), 'scr_a', 'nope'), { ok: false, code: 4 })
  t.same(await auth(client('scr_a'), 'scr_a/x', secret), { ok: false, code: 4 }, 'not a topic-safe screen id')
  const a = client('scr_a')
  t.same(await auth(a, 'scr_a', secret), { ok: true, code: undefined })
  t.equal(policy.screenOf(a), 'scr_a')

  const offline = Buffer.from('{"status":"offline","at":"2026-06-01T12:00:00.000Z"}')
  const pub = (c: Client | null, topic: string, extra: object = {}) =>
    new Promise<boolean>((resolve) =>
      policy.authorizePublish(c, { cmd: 'publish', topic, payload: offline, qos: 1, retain: true, dup: false, ...extra } as PublishPacket, (err) =>
        resolve(!err),
      ),
    )
  t.ok(await pub(a, 'svc/v1/screens/scr_a/status'))
  t.notOk(await pub(a, 'svc/v1/screens/scr_a/desired'), 'a device cannot forge its desired state')
  t.notOk(await pub(client('scr_a'), 'svc/v1/screens/scr_a/status'), 'a client that never authenticated')
  t.ok(await pub(null, 'svc/v1/screens/scr_a/status', { clientId: 'scr_a' }), 'a will of a client no longer present, to its own status')
  t.notOk(await pub(null, 'svc/v1/screens/scr_a/status'), 'a will without a recorded client id')
  t.notOk(
    await pub(null, 'svc/v1/screens/scr_a/status', { clientId: 'scr_a', payload: Buffer.from('{"status":"online","at":"2026-06-01T12:00:00.000Z"}') }),
    'a will announcing anything but offline',
  )
  t.notOk(await pub(null, 'svc/v1/screens/scr_a/status', { clientId: 'scr_a', payload: Buffer.from('boom') }), 'a will that is no status message')
  t.notOk(await pub(null, 'svc/v1/screens/scr_b/status', { clientId: 'scr_a' }), "a will to another screen's status")
  t.notOk(await pub(null, 'svc/v1/screens/scr_a/reported', { clientId: 'scr_a' }), 'a will only ever announces status')
  t.notOk(await pub(null, 'foo/bar', { clientId: 'scr_a' }), 'a will outside the contract')
  t.notOk(await pub(null, '$SYS/broker/x'), '$SYS refused')

  const sub = (c: Client, topic: string) =>
    new Promise<Subscription | null | undefined>((resolve) => policy.authorizeSubscribe(c, { topic, qos: 1 } as Subscription, (_e, s) => resolve(s)))
  t.match(await sub(a, 'svc/v1/screens/scr_a/jobs'), { topic: 'svc/v1/screens/scr_a/jobs' })
  t.equal(await sub(a, 'svc/v1/screens/scr_a/#'), null)

  const failing = new DevicePolicy({ credentialHash: async () => Promise.reject(new Error('db down')) })
  const r = await new Promise<number | undefined>((resolve) =>
    failing.authenticate(client('scr_a'), 'scr_a', Buffer.from(secret), (err) => resolve((err as { returnCode?: number } | null)?.returnCode)),
  )
  t.equal(r, 3, 'a failing lookup answers server unavailable')
})
