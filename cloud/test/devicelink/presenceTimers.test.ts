// Presence has its own timer switch: with the cast sweep turned off
// (SVC_CAST_EXPIRY_INTERVAL_MS=0) a dropped screen still goes offline by itself after the
// grace period. Real clock, real sockets, a real MQTT device whose connection dies.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import mqtt from 'mqtt'
import { topics } from '@svc/shared/mqtt/index'
import { startServer } from '../../src/server.js'
import { loadConfig, testConfig } from '../../src/config.js'

t.test('loadConfig turns presence timers on whatever the cast sweep interval', async (t) => {
  t.equal(loadConfig({ SVC_CAST_EXPIRY_INTERVAL_MS: '0' }).presenceTimers, true)
  t.equal(testConfig().presenceTimers, undefined, 'tests follow the cast sweep switch unless they say otherwise')
})

t.test('a dropped screen goes offline by itself with the cast sweep off', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-presence-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const running = await startServer(
    testConfig({
      dataDir: dir,
      dbFile: path.join(dir, 'svc.sqlite'),
      host: '127.0.0.1',
      httpPort: 0,
      mqttPort: 0,
      castExpiryIntervalMs: 0,
      presenceTimers: true,
      screenOfflineGraceMs: 300,
    }),
  )
  t.after(() => running.close())
  const { app } = running
  const ws = await servicesOf(app).workspaces.create('Presence', 'us')
  const { secret: key } = await servicesOf(app).apiKeys.createRoot(ws.id, ws.region, 'Owner', 'all')
  const call = async (method: string, url: string, body?: unknown, token: string | null = key) =>
    (
      await app.inject({
        method: method as 'GET',
        url,
        headers: token ? { authorization: `Bearer ${token}` } : {},
        ...(body !== undefined ? { payload: body as object } : {}),
      })
    ).json().data
  const reg = await call('POST', '/v1/devices/register', {}, null)
  const screenId = (await call('POST', '/v1/screens/pair', { code: reg.pairingCode, name: 'Door' })).id as string
  const { deviceSecret } = await call('GET', `/v1/devices/register/${reg.registrationId}`, undefined, reg.pollSecret)

  const status = (s: string) => JSON.stringify({ status: s, at: new Date().toISOString() })
  const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${running.mqttPort}`, {
    clientId: screenId,
    username: screenId,
    password: deviceSecret,
    clean: false,
    reconnectPeriod: 0,
    will: { topic: topics.status(screenId), payload: Buffer.from(status('offline')), qos: 1, retain: true },
  })
  t.after(() => client.end(true))
  await client.publishAsync(topics.status(screenId), status('online'), { qos: 1, retain: true })
  const screenStatus = async () => (await call('GET', `/v1/screens/${screenId}`)).status as string
  const waitFor = async (want: string, ms: number) => {
    for (const until = Date.now() + ms; Date.now() < until; await new Promise((r) => setTimeout(r, 25))) if ((await screenStatus()) === want) return true
    return false
  }
  t.ok(await waitFor('online', 5000), 'online once it says so')
  ;(client.stream as unknown as { destroy(): void }).destroy()
  t.ok(await waitFor('offline', 5000), 'offline after the grace period, with no sweep running')
})
