// Serial job delivery over real sockets: the cloud's embedded broker and a real MQTT
// client acting as the device (clean: false, client id = screen id). A job queued while
// the device is offline arrives when it connects; the device's result updates the job;
// open jobs survive a cloud restart on the same data directory.
import t, { type Test } from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { connect, type MqttClient } from 'mqtt'
import { parseJob, topics, type SerialJob } from '@svc/shared/mqtt/index'
import type { Running } from '../../src/server.js'
import { startRunning, tempDir as newTempDir, until as untilValue } from '../fixtures/processes.js'
import { api, ownerKey, pair, socketConfig } from './sockets.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

const tempDir = (t: Test) => newTempDir(t, 'svc-serial-')
const until = <T>(ms: number, fn: () => Promise<T | undefined>) => untilValue(ms, fn, 30)
const start = (t: Test, dataDir: string): Promise<Running> => startRunning(t, socketConfig(dataDir))
const bootstrap = (dataDir: string): Promise<string> => ownerKey(dataDir, 'Serial')

/** The device: connects with a persistent session, subscribes to its jobs, collects them. */
async function device(
  t: Test,
  s: Running,
  d: { screenId: string; deviceSecret: string },
): Promise<{ client: MqttClient; jobs: SerialJob[]; next(ms?: number): Promise<SerialJob> }> {
  const client = connect(`mqtt://127.0.0.1:${s.mqttPort}`, {
    clientId: d.screenId,
    username: d.screenId,
    password: d.deviceSecret,
    clean: false,
    reconnectPeriod: 0,
  })
  t.after(() => client.end(true))
  const jobs: SerialJob[] = []
  let taken = 0
  const returned = new Set<string>()
  client.on('message', (topic, payload) => {
    if (topic !== topics.jobs(d.screenId)) return
    const r = parseJob(payload)
    if (r.ok && r.value.kind === 'serial') jobs.push(r.value)
  })
  await new Promise<void>((resolve, reject) => {
    client.once('connect', () => resolve())
    client.once('error', reject)
  })
  await client.subscribeAsync(topics.jobs(d.screenId), { qos: 1 })
  return {
    client,
    jobs,
    /** The next job not seen before (delivery is at least once; the agent dedupes by id). */
    async next(ms = HANG_GUARD_MS) {
      const end = Date.now() + ms
      for (;;) {
        while (taken < jobs.length) {
          const j = jobs[taken++]!
          if (!returned.has(j.id)) {
            returned.add(j.id)
            return j
          }
        }
        if (Date.now() > end) throw new Error('no job arrived')
        await sleep(20)
      }
    },
  }
}

t.test('offline → queued; the device connects and gets it; its result closes the job', async (t) => {
  const dir = tempDir(t)
  const key = await bootstrap(dir)
  const s = await start(t, dir)
  const d = await pair(s, key)
  const queued = await api(s, 'POST', `/v1/screens/${d.screenId}/serial`, key, { value: 'AA 11 01 01 01 14', encoding: 'hex' })
  t.equal(queued.status, 202)
  const job = queued.json.data
  t.equal(job.status, 'queued', 'held while the screen is offline')

  const dev = await device(t, s, d)
  const got = await dev.next()
  t.match(got, { id: job.id, kind: 'serial', bytesHex: 'aa1101010114', protocol: null, createdAt: job.createdAt })
  const sent = await until(5 * 60_000, async () => {
    const j = (await api(s, 'GET', `/v1/serial-jobs/${job.id}`, key)).json.data
    return j.status === 'sent' ? j : undefined
  })
  t.ok(sent?.sentAt, 'sent once the device acknowledged it')

  // a job queued while the device is online goes out at once
  const live = (await api(s, 'POST', `/v1/screens/${d.screenId}/serial`, key, { value: 'ka 01 01', eol: 'cr' })).json.data
  t.equal((await dev.next()).id, live.id)

  await dev.client.publishAsync(
    topics.jobResults(d.screenId),
    JSON.stringify({
      jobId: job.id,
      kind: 'serial',
      sentHex: 'aa1101010114',
      replyHex: 'aaff01034111015 6'.replace(/ /g, ''),
      outcome: 'ok',
      at: new Date().toISOString(),
    }),
    { qos: 1 },
  )
  const done = await until(5 * 60_000, async () => {
    const j = (await api(s, 'GET', `/v1/serial-jobs/${job.id}`, key)).json.data
    return j.status === 'ok' ? j : undefined
  })
  t.match(done, { status: 'ok', replyHex: 'AA FF 01 03 41 11 01 56', reason: null })
  t.ok(done?.completedAt)

  await dev.client.publishAsync(
    topics.jobResults(d.screenId),
    JSON.stringify({ jobId: live.id, sentHex: '', replyHex: '', outcome: 'failed', at: new Date().toISOString() }),
    { qos: 1 },
  )
  await dev.client.publishAsync(topics.jobResults(d.screenId), 'not json', { qos: 1 })
  await dev.client.publishAsync(
    topics.jobResults(d.screenId),
    JSON.stringify({ jobId: live.id, sentHex: '6b', replyHex: '', outcome: 'failed', reason: 'port closed', at: new Date().toISOString() }),
    { qos: 1 },
  )
  const failed = await until(5 * 60_000, async () => {
    const j = (await api(s, 'GET', `/v1/serial-jobs/${live.id}`, key)).json.data
    return j.status === 'failed' ? j : undefined
  })
  t.match(failed, { status: 'failed', reason: 'port closed' }, 'invalid results (failed without reason, not JSON) are ignored')
})

t.test('open jobs survive a cloud restart and reach the device when it returns', async (t) => {
  const dir = tempDir(t)
  const key = await bootstrap(dir)
  let s = await start(t, dir)
  const d = await pair(s, key)
  const first = await device(t, s, d)
  const before = (await api(s, 'POST', `/v1/screens/${d.screenId}/serial`, key, { value: 'PWR ON', eol: 'cr' })).json.data
  t.equal((await first.next()).id, before.id, 'delivered while online (no result yet)')
  first.client.end(true)
  await sleep(50)
  const offline = (await api(s, 'POST', `/v1/screens/${d.screenId}/serial`, key, { value: 'INPUT HDMI1', eol: 'cr' })).json.data
  t.equal(offline.status, 'queued')
  await s.close()

  s = await start(t, dir)
  t.equal((await api(s, 'GET', `/v1/serial-jobs/${offline.id}`, key)).json.data.status, 'queued', 'still queued after the restart')
  const again = await device(t, s, d)
  const a = await again.next()
  const b = await again.next()
  t.same([a.id, b.id], [before.id, offline.id], 'both open jobs arrive, oldest first (the agent dedupes the one it saw)')
  t.equal(b.bytesHex, Buffer.from('INPUT HDMI1\r').toString('hex'))
})

t.test('a result near the packet limit is stored cut to its bounds', async (t) => {
  const dir = tempDir(t)
  const key = await bootstrap(dir)
  const s = await start(t, dir)
  const d = await pair(s, key)
  const dev = await device(t, s, d)
  const job = (await api(s, 'POST', `/v1/screens/${d.screenId}/serial`, key, { value: 'AA 11 01 01 01 14', encoding: 'hex' })).json.data
  t.equal((await dev.next()).id, job.id)
  await dev.client.publishAsync(
    topics.jobResults(d.screenId),
    JSON.stringify({
      jobId: job.id,
      sentHex: 'ab'.repeat(100_000),
      replyHex: 'cd'.repeat(300_000),
      outcome: 'failed',
      reason: 'x'.repeat(200_000),
      at: new Date().toISOString(),
    }),
    { qos: 1 },
  )
  const failed = await until(5 * 60_000, async () => {
    const j = (await api(s, 'GET', `/v1/serial-jobs/${job.id}`, key)).json.data
    return j.status === 'failed' ? j : undefined
  })
  t.equal(failed?.reason.length, 500, 'the reason is cut to 500 characters')
  t.ok(failed?.reason.endsWith('…'), 'and says so')
  t.equal(failed?.replyHex.split(' ').length, 1024, 'the reply keeps its first 1024 bytes')
})
