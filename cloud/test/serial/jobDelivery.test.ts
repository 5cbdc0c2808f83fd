// The generic job delivery (serial, screenshot and logs jobs) over real sockets: the cloud's
// embedded broker and a real MQTT client as the device (clean: false, client id = screen id).
// - stop() (the app closing) waits for a delivery under way, for each kind;
// - a (re)connect reads the open jobs once, not once at clientReady and again at the SUBSCRIBE;
//   the connections arriving in the same tick share one read (pendingForMany) and one expiry
//   UPDATE (shared by the connections within 200 ms of each other); a job queued while
//   connected costs a read only.
import t, { type Test } from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { connect, type MqttClient } from 'mqtt'
import { parseJob, topics } from '@svc/shared/mqtt/index'
import { servicesOf } from '../../src/app.js'
import { startServer, type Running } from '../../src/server.js'
import { api, ownerKey, pair, socketConfig } from './sockets.js'

async function setup(t: Test): Promise<{ s: Running; key: string; screenId: string; deviceSecret: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-jobs-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const key = await ownerKey(dir, 'Jobs')
  const s = await startServer(socketConfig(dir))
  let closed = false
  const close = s.close
  s.close = () => {
    closed = true
    return close()
  }
  t.after(() => (closed ? undefined : s.close()))
  return { s, key, ...(await pair(s, key)) }
}

/** The device as the agent runs it: persistent session, and a SUBSCRIBE to its jobs on every connect. */
async function device(t: Test, s: Running, screenId: string, deviceSecret: string, ids: string[]): Promise<MqttClient> {
  const client = connect(`mqtt://127.0.0.1:${s.mqttPort}`, { clientId: screenId, username: screenId, password: deviceSecret, clean: false, reconnectPeriod: 0 })
  t.after(() => client.end(true))
  client.on('message', (topic, payload) => {
    const r = topic === topics.jobs(screenId) ? parseJob(payload) : null
    if (r?.ok) ids.push(r.value.id)
  })
  await new Promise<void>((resolve, reject) => {
    client.once('connect', () => resolve())
    client.once('error', reject)
  })
  await client.subscribeAsync(topics.jobs(screenId), { qos: 1 })
  return client
}

async function until(ms: number, fn: () => boolean): Promise<boolean> {
  const end = Date.now() + ms
  while (!fn() && Date.now() < end) await sleep(20)
  return fn()
}

for (const kind of ['serial', 'screenshot', 'logs'] as const) {
  t.test(`${kind}: closing the app waits for a delivery under way`, async (t) => {
    const { s, key, screenId, deviceSecret } = await setup(t)
    const ids: string[] = []
    await device(t, s, screenId, deviceSecret, ids)
    const source = kind === 'serial' ? servicesOf(s.app).serialJobs : kind === 'screenshot' ? servicesOf(s.app).screenshots : servicesOf(s.app).agentLogs
    // Hold the delivery inside its read of the open jobs.
    let release!: () => void
    const held = new Promise<void>((r) => (release = r))
    let entered = false
    let finished = false
    type PendingFor = (id: string, opts?: { expire?: boolean }) => Promise<unknown[]>
    const pendingFor = source.pendingFor.bind(source) as PendingFor
    ;(source as { pendingFor: PendingFor }).pendingFor = async (id, opts) => {
      entered = true
      await held
      try {
        return await pendingFor(id, opts)
      } finally {
        finished = true
      }
    }
    const queued =
      kind === 'serial'
        ? await api(s, 'POST', `/v1/screens/${screenId}/serial`, key, { value: 'PWR ON', eol: 'cr' })
        : await api(s, 'POST', `/v1/screens/${screenId}/${kind === 'screenshot' ? 'screenshot' : 'logs'}`, key)
    t.equal(queued.status, 202)
    t.ok(await until(5 * 60_000, () => entered), 'the delivery is under way')

    let closed = false
    const closing = s.close().then(() => (closed = true))
    await sleep(300)
    t.equal(closed, false, 'close waits while the delivery is held')
    release()
    await closing
    t.equal(finished, true, 'the delivery finished before close resolved')
    t.same(ids, [], 'nothing is published once stopping')
  })
}

t.test('a reconnect reads the open jobs once (one expiry UPDATE + SELECT per connection)', async (t) => {
  const { s, key, screenId, deviceSecret } = await setup(t)
  const jobs = servicesOf(s.app).serialJobs
  let reads = 0
  const pendingFor = jobs.pendingFor.bind(jobs)
  jobs.pendingFor = (id, opts) => {
    reads++
    return pendingFor(id, opts)
  }
  const pendingForMany = jobs.pendingForMany.bind(jobs)
  jobs.pendingForMany = (ids) => {
    reads++
    return pendingForMany(ids)
  }
  let expiries = 0
  const expireStale = jobs.expireStale.bind(jobs)
  jobs.expireStale = () => {
    expiries++
    return expireStale()
  }

  const ids: string[] = []
  const first = await device(t, s, screenId, deviceSecret, ids)
  await sleep(300)
  t.equal(reads, 1, 'first connection (new session): one read, at the SUBSCRIBE')
  t.equal(expiries, 1)
  first.end(true)
  t.ok(await until(5 * 60_000, () => !servicesOf(s.app).broker.isConnected(screenId)), 'the broker saw it go')

  const offline = (await api(s, 'POST', `/v1/screens/${screenId}/serial`, key, { value: 'INPUT HDMI1', eol: 'cr' })).json.data
  t.equal(offline.status, 'queued')
  reads = 0
  expiries = 0
  // The session is still there: its jobs subscription is restored before clientReady, and the
  // device subscribes again anyway.
  await device(t, s, screenId, deviceSecret, ids)
  t.ok(await until(5 * 60_000, () => ids.includes(offline.id)), 'the job queued while offline arrives')
  await sleep(300)
  t.equal(reads, 1, 'reconnection: one read of the open jobs')
  t.equal(expiries, 1, 'reconnection: one expiry sweep')

  // A job queued while connected goes out at once, alone, after a read (no expiry write).
  reads = 0
  expiries = 0
  const live = (await api(s, 'POST', `/v1/screens/${screenId}/serial`, key, { value: 'PWR ON', eol: 'cr' })).json.data
  t.ok(await until(5 * 60_000, () => ids.includes(live.id)))
  t.equal(ids.filter((id) => id === offline.id).length, 1, 'the earlier job is not sent again with it')
  t.equal(reads, 1)
  t.equal(expiries, 0, 'no expiry UPDATE on the request path')
})

t.test('devices connecting together share the expiry sweep and the read of their open jobs; each gets its own', async (t) => {
  const { s, key, screenId, deviceSecret } = await setup(t)
  const screens = [{ screenId, deviceSecret }]
  for (let i = 0; i < 7; i++) {
    screens.push(await pair(s, key, `Screen ${i}`))
  }
  const queued: string[] = []
  for (const sc of screens) queued.push((await api(s, 'POST', `/v1/screens/${sc.screenId}/serial`, key, { value: 'PWR ON', eol: 'cr' })).json.data.id as string)
  const jobs = servicesOf(s.app).serialJobs
  let reads = 0
  const pendingFor = jobs.pendingFor.bind(jobs)
  jobs.pendingFor = (id, opts) => (reads++, pendingFor(id, opts))
  /** The screens of each batched read. */
  const batches: string[][] = []
  const pendingForMany = jobs.pendingForMany.bind(jobs)
  jobs.pendingForMany = (ids) => (batches.push([...ids]), pendingForMany(ids))
  let expiries = 0
  const expireStale = jobs.expireStale.bind(jobs)
  jobs.expireStale = () => (expiries++, expireStale())

  const got = screens.map(() => [] as string[])
  await Promise.all(screens.map((sc, i) => device(t, s, sc.screenId, sc.deviceSecret, got[i]!)))
  t.ok(await until(5 * 60_000, () => got.every((ids, i) => ids.includes(queued[i]!))), 'every device got its own job')
  t.same(
    got.map((ids) => ids.length),
    screens.map(() => 1),
    'and nothing else',
  )
  t.equal(reads, 0, 'no read of one screen alone')
  t.same(batches.flat().sort(), screens.map((sc) => sc.screenId).sort(), 'every connection read once, in a batched read')
  t.ok(batches.length < screens.length, `${batches.length} reads for ${screens.length} connections`)
  t.ok(expiries >= 1 && expiries < screens.length, `${expiries} expiry sweeps for ${screens.length} connections`)
})
