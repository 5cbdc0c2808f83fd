// Last Wills, the broker's way to speak for a device after it left: only the device's own
// `offline` status is accepted at CONNECT; a store handed to the broker holding anything
// else (a shared store another, older cluster member wrote to) is cleaned at start, and the
// will sweep (its interval shortened through SVC_MQTT_HEARTBEAT_MS) neither crashes the
// process nor republishes a forbidden will. The default store is in memory, so a restart
// of this process leaves no wills behind (persistence.ts).
import { servicesOf } from '../src/app.js'
import t from 'tap'
import { Readable } from 'node:stream'
import { Aedes } from 'aedes'
import { connectAsync, type IClientOptions } from 'mqtt'
import { topics } from '@svc/shared/mqtt/index'
import type { BrokerPersistence } from '../src/platform/broker/persistence.js'
import { connectDevice, startCloud, tempDir, type Device } from './devicelink/link.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

const AT = '2026-06-01T12:00:00.000Z'
const status = (s: string) => Buffer.from(JSON.stringify({ status: s, at: AT }))

interface Store {
  setup(broker: { id: string }): Promise<void>
  putWill(client: { id: string }, packet: object): Promise<void>
  getWill(client: { id: string }): Promise<{ topic: string; payload: Buffer } | undefined>
  streamWill(): AsyncIterable<{ clientId: string; topic: string }>
  destroy(): Promise<void>
}

/** aedes' memory store as a broker that has since gone away left it. */
async function deadBrokersStore(): Promise<Store> {
  const seed = await Aedes.createBroker()
  const store = (seed as unknown as { persistence: Store }).persistence
  await new Promise<void>((r) => seed.close(() => r()))
  return store
}

async function willsIn(store: Store): Promise<{ clientId: string; topic: string }[]> {
  const out: { clientId: string; topic: string }[] = []
  for await (const w of store.streamWill()) out.push({ clientId: w.clientId, topic: w.topic })
  return out.sort((a, b) => a.clientId.localeCompare(b.clientId))
}

function deviceOpts(d: Device, will?: IClientOptions['will']): IClientOptions {
  return {
    clientId: d.screenId,
    username: d.screenId,
    password: d.deviceSecret,
    protocolVersion: 4,
    clean: false,
    reconnectPeriod: 0,
    connectTimeout: 5000,
    ...(will ? { will } : {}),
  }
}

async function connackCode(url: string, o: IClientOptions): Promise<number | undefined> {
  try {
    const c = await connectAsync(url, o)
    await c.endAsync(true)
    return 0
  } catch (e) {
    return (e as { code?: number }).code
  }
}

t.test('a CONNECT whose will is not the own offline status is refused at authentication', async (t) => {
  const cloud = await startCloud(t)
  const a = await cloud.pair('A')
  const b = await cloud.pair('B')
  const url = `mqtt://127.0.0.1:${cloud.running.mqttPort}`
  const refused: [string, IClientOptions['will']][] = [
    ['a topic outside the contract', { topic: 'foo/bar', payload: status('offline'), qos: 1, retain: false }],
    ["another screen's status", { topic: topics.status(b.screenId), payload: status('offline'), qos: 1, retain: true }],
    ['its own reported', { topic: topics.reported(a.screenId), payload: status('offline'), qos: 1, retain: true }],
    ['its own status, online', { topic: topics.status(a.screenId), payload: status('online'), qos: 1, retain: true }],
    ['its own status, not a status message', { topic: topics.status(a.screenId), payload: Buffer.from('x'.repeat(2000)), qos: 1, retain: true }],
    ['its own status, empty', { topic: topics.status(a.screenId), payload: Buffer.alloc(0), qos: 1, retain: true }],
  ]
  const aedes = servicesOf(cloud.running.app).broker.aedes as unknown as { persistence: Store }
  const logged: string[] = []
  const note = (_o: object, msg: string) => void logged.push(msg)
  servicesOf(cloud.running.app).broker.setLog({ debug: note, info: note, warn: note, error: note })
  for (const [name, will] of refused) {
    t.equal(await connackCode(url, deviceOpts(a, will)), 5, `${name}: CONNACK 5 (not authorized)`)
    t.equal(await aedes.persistence.getWill({ id: a.screenId }), undefined, `${name}: nothing stored`)
  }
  t.equal(logged.filter((m) => m === 'CONNECT refused: Last Will not allowed').length, refused.length, 'each refusal is logged')
  const good = await connectDevice(t, url, a, { will: { topic: topics.status(a.screenId), payload: status('offline'), qos: 1, retain: true } }, false)
  t.ok(good.client.connected, 'its own offline status is accepted')
  t.equal((await aedes.persistence.getWill({ id: a.screenId }))?.topic, topics.status(a.screenId), 'and stored')
  const plain = await connectDevice(t, url, b, {}, false)
  t.ok(plain.client.connected, 'no will at all is fine')
})

/** Plants what an older version let devices store: forbidden wills, and one allowed. */
async function plantWills(store: Store, ids: { a: string; b: string; c: string }): Promise<void> {
  const will = (topic: string, payload: Buffer) => ({ cmd: 'publish', topic, payload, qos: 1, retain: false })
  await store.putWill({ id: ids.a }, will('foo/bar', status('offline')))
  await store.putWill({ id: ids.b }, will(topics.status(ids.a), status('offline')))
  await store.putWill({ id: 'scr_ghost' }, will(topics.status('scr_ghost'), status('online')))
  await store.putWill({ id: ids.c }, will(topics.status(ids.c), status('offline')))
}

t.test('a store with forbidden wills is cleaned at start and the will sweep runs without crashing', async (t) => {
  const config = { mqttHeartbeatMs: 25 } // the will sweep every 100 ms
  const dataDir = tempDir(t)
  const first = await startCloud(t, { dataDir, fileDb: true })
  const [a, b, c] = [await first.pair('A'), await first.pair('B'), await first.pair('C')]
  await first.running.close()
  const store = await deadBrokersStore()
  await plantWills(store, { a: a.screenId, b: b.screenId, c: c.screenId })
  t.equal((await willsIn(store)).length, 4, 'four wills stored before the start')
  // Each round of the will sweep streams the store's wills: counted, so the test can wait for rounds.
  let sweeps = 0
  const roundWaiters: { at: number; resolve: () => void }[] = []
  const counted = store.streamWill.bind(store) as (brokers?: unknown) => AsyncIterable<{ clientId: string; topic: string }>
  ;(store as { streamWill: unknown }).streamWill = (brokers?: unknown) => {
    sweeps++
    for (const w of roundWaiters.filter((w) => sweeps >= w.at)) {
      roundWaiters.splice(roundWaiters.indexOf(w), 1)
      w.resolve()
    }
    return counted(brokers)
  }
  /** Resolves once `n` more rounds of the sweep have begun; fails, naming them, after HANG_GUARD_MS. */
  const moreSweeps = (n: number) =>
    new Promise<void>((resolve, reject) => {
      const guard = setTimeout(() => reject(new Error(`waited ${HANG_GUARD_MS / 60_000} minutes for ${n} more rounds of the will sweep`)), HANG_GUARD_MS)
      roundWaiters.push({
        at: sweeps + n,
        resolve: () => {
          clearTimeout(guard)
          resolve()
        },
      })
    })

  const crashes: unknown[] = []
  const onCrash = (err: unknown) => crashes.push(err)
  process.on('uncaughtException', onCrash)
  t.teardown(() => process.off('uncaughtException', onCrash))

  const second = await startCloud(t, {
    dataDir,
    fileDb: true,
    config,
    deps: { brokerPersistence: async () => store as unknown as BrokerPersistence },
    workspace: { id: first.workspaceId, apiKey: first.apiKey },
  })
  const broker = servicesOf(second.running.app).broker
  // The allowed will (C's own offline) is published by the sweep, then deleted from the store.
  for (const until = Date.now() + HANG_GUARD_MS; (await store.getWill({ id: c.screenId })) && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20))
  t.equal(await store.getWill({ id: c.screenId }), undefined, "the sweep ran: C's allowed will was published and removed")
  await moreSweeps(3)
  t.same(crashes, [], 'no uncaught error')
  t.ok(!broker.aedes.closed, 'the broker still runs')
  for (const id of [a.screenId, b.screenId, 'scr_ghost']) t.equal(await store.getWill({ id }), undefined, `the forbidden will of ${id} is gone`)

  // A forbidden will the sweep meets while running (another cluster member or an older
  // node wrote it): refused, logged as a broker error, deleted, and the process goes on.
  const logged: string[] = []
  const note = (_o: object, msg: string) => void logged.push(msg)
  broker.setLog({ debug: note, info: note, warn: note, error: note })
  await store.putWill({ id: b.screenId }, { cmd: 'publish', topic: 'foo/late', payload: status('offline'), qos: 1, retain: false })
  const stream = store.streamWill.bind(store) as (brokers?: unknown) => AsyncIterable<object>
  ;(store as { streamWill: unknown }).streamWill = (brokers?: unknown) =>
    Readable.from(
      (async function* () {
        yield* stream(brokers)
        const late = await store.getWill({ id: b.screenId })
        // As if written by a broker that is gone: this one's own wills are never swept.
        if (late) yield { ...late, brokerId: 'a-broker-that-is-gone' }
      })(),
    )
  for (const until = Date.now() + HANG_GUARD_MS; (await store.getWill({ id: b.screenId })) && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20))
  t.equal(await store.getWill({ id: b.screenId }), undefined, 'deleted when the sweep met it')
  t.ok(logged.includes('MQTT broker error'), "aedes' error event is logged")
  t.same(crashes, [], 'still no uncaught error')
  ;(store as { streamWill: unknown }).streamWill = stream

  // The device reconnects to the restarted cloud as before.
  const dev = await connectDevice(t, `mqtt://127.0.0.1:${second.running.mqttPort}`, a, {
    will: { topic: topics.status(a.screenId), payload: status('offline'), qos: 1, retain: true },
  })
  t.ok(dev.client.connected)
  t.same(await willsIn(store), [{ clientId: a.screenId, topic: topics.status(a.screenId) }], 'only the allowed will of the connected device is left')
  await second.running.close()
})
