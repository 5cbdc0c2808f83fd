// A draining instance announces nothing about the screens it lets go: their device
// connections close at the start of the drain, they reconnect to another instance, and
// even when the drain lasts longer than the offline grace period (a request in flight
// holds it open), no instance announces them offline.
import { servicesOf } from '../../src/app.js'
import net from 'node:net'
import { once } from 'node:events'
import t from 'tap'
import { connectAsync } from 'mqtt'
import { startServer } from '../../src/server.js'
import { testConfig } from '../../src/config.js'
import { systemClock } from '../../src/platform/clock.js'
import { freshSqlite } from '../db/sqliteTemplate.js'
import type { ScreenStatusChange } from '../../src/domains/devicelink/ScreenPresence.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'
import { until } from '../fixtures/processes.js'

const GRACE_MS = 400

/** `p`, or a failure naming `what` after HANG_GUARD_MS (a hang guard). */
function guarded<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const expiry = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`waited ${HANG_GUARD_MS / 60_000} minutes for ${what}`)), HANG_GUARD_MS)
  })
  return Promise.race([p, expiry]).finally(() => clearTimeout(timer))
}

t.test('screens of a draining instance that reconnect elsewhere are not announced offline', async (t) => {
  const config = testConfig({ httpPort: 0, mqttPort: 0, host: '127.0.0.1', screenOfflineGraceMs: GRACE_MS, presenceTimers: true })
  const db = await freshSqlite(config.dbBusyTimeoutMs)
  const a = await startServer(config, { db, clock: systemClock })
  const b = await startServer(config, { db, clock: systemClock })
  t.after(async () => {
    await b.close()
    await a.close().catch(() => undefined)
    await db.close()
  })
  const changes: (ScreenStatusChange & { on: string })[] = []
  servicesOf(a.app).presence.onScreenStatus((c) => void changes.push({ ...c, on: 'A' }))
  servicesOf(b.app).presence.onScreenStatus((c) => void changes.push({ ...c, on: 'B' }))

  const ws = await servicesOf(a.app).workspaces.create('Drain', 'us')
  const { secret } = await servicesOf(a.app).apiKeys.createRoot(ws.id, ws.region, 'Owner', 'all')
  const call = async (port: number, method: string, path: string, body?: unknown, token: string | null = secret) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    })
    return (await res.json()) as { data: any }
  }
  const pairScreen = async (name: string) => {
    const reg = (await call(a.httpPort, 'POST', '/v1/devices/register', {}, null)).data
    await call(a.httpPort, 'POST', '/v1/screens/pair', { code: reg.pairingCode, name })
    const dev = (await call(a.httpPort, 'GET', `/v1/devices/register/${reg.registrationId}`, undefined, reg.pollSecret)).data
    return { dev, options: { clientId: dev.screenId, username: dev.screenId, password: dev.deviceSecret, protocolVersion: 4 as const, reconnectPeriod: 0 } }
  }
  const { dev, options } = await pairScreen('Lobby')
  // A second screen, on B, whose device leaves for good while A drains: its offline, announced
  // by B one grace after, is what the test waits for.
  const other = await pairScreen('Back room')
  const otherOnB = await connectAsync(`mqtt://127.0.0.1:${b.mqttPort}`, other.options)
  await servicesOf(b.app).presence.idle()
  const ofLobby = () => changes.filter((c) => c.screenId === dev.screenId).map((c) => `${c.status} on ${c.on}`)
  const onA = await connectAsync(`mqtt://127.0.0.1:${a.mqttPort}`, options)
  await servicesOf(a.app).presence.idle()
  t.equal((await call(b.httpPort, 'GET', `/v1/screens/${dev.screenId}`)).data.status, 'online', 'online, as B sees it too')
  t.same(ofLobby(), ['online on A'])

  // A request in flight on A (its body not all sent) holds A's drain open past the grace period.
  const inflight = net.connect(a.httpPort, '127.0.0.1')
  await new Promise((r) => inflight.once('connect', r))
  inflight.on('error', () => undefined)
  const arrived = once(a.app.server, 'request') // its headers are read: it is in flight
  inflight.write(`POST /v1/devices/register HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{`)
  await arrived
  const closed = new Promise<void>((r) => onA.once('close', () => r()))
  const draining = a.drain(10_000)
  await closed
  await onA.endAsync(true)
  // A has the drop queued, and recorded: a grace timer of A's would be armed by now.
  t.ok(await until(HANG_GUARD_MS, () => (servicesOf(a.app).broker.isConnected(dev.screenId) ? undefined : true), 5), 'A let go of the connection')
  await servicesOf(a.app).presence.idle()
  // The device reconnects, through the load balancer, to B.
  const onB = await connectAsync(`mqtt://127.0.0.1:${b.mqttPort}`, options)
  t.after(() => onB.endAsync(true))
  await servicesOf(b.app).presence.idle()
  // The other screen's device leaves B for good: B's grace timer for it is armed after any of
  // A's (timers of one length fire in the order they were armed, both servers run here), so
  // once B announces it offline, past the grace, a timer of A's has fired and queued its sweep.
  const otherGone = new Promise<void>((resolve) =>
    servicesOf(b.app).presence.onScreenStatus((c) => void (c.screenId === other.dev.screenId && c.status === 'offline' && resolve())),
  )
  await otherOnB.endAsync(true)
  await guarded(otherGone, 'B to announce the other screen offline, one grace after its device left')
  await servicesOf(a.app).presence.idle()
  await servicesOf(b.app).presence.sweep()
  await servicesOf(b.app).presence.idle()
  t.same(ofLobby(), ['online on A'], 'no offline announced by A (still draining, past the grace) nor by B')
  t.same(
    changes.filter((c) => c.screenId === other.dev.screenId).map((c) => `${c.status} on ${c.on}`),
    ['online on B', 'offline on B'],
    'the other screen: online, then offline once its grace had passed',
  )
  t.equal((await call(b.httpPort, 'GET', `/v1/screens/${dev.screenId}`)).data.status, 'online')

  inflight.end('}')
  await draining
  t.pass('A finished its drain once the request was answered')
})
