// Remote logs through a real cloud and a real MQTT device: a request made while the screen
// is offline waits and reaches it when it connects, on its jobs topic, with where to upload,
// how many lines and since when; it is `sent` once acknowledged; the device's upload over
// HTTP closes it `done`. A request made while connected goes out at once, alone. A failed
// job result closes one as `failed` with the agent's reason; one that waited offline past
// the TTL is `expired` and is not sent when the screen comes back. A second ask while one
// is open answers 409 and sends the device nothing.
import t from 'tap'
import { encodeMessage, parseJob, topics, type Job } from '@svc/shared/mqtt/index'
import { connectDevice, startCloud, type Cloud, type Device } from '../devicelink/link.js'
import { until } from '../fixtures/processes.js'
import { AGENT_LOG_TTL_MS } from '../../src/domains/agentlogs/AgentLogService.js'

const basic = (d: Device) => `Basic ${Buffer.from(`${d.screenId}:${d.deviceSecret}`).toString('base64')}`

async function state(cloud: Cloud, id: string) {
  return (await cloud.call('GET', `/v1/agent-logs/${id}`)).body.data as Record<string, unknown>
}

async function jobsOf(t: Parameters<typeof connectDevice>[0], cloud: Cloud, d: Device) {
  const jobs: Job[] = []
  const dev = await connectDevice(t, `mqtt://127.0.0.1:${cloud.running.mqttPort}`, d, {}, false)
  dev.client.on('message', (topic, payload) => {
    if (topic !== topics.jobs(d.screenId)) return
    const r = parseJob(payload)
    if (r.ok) jobs.push(r.value)
  })
  await dev.client.subscribeAsync(topics.jobs(d.screenId), { qos: 1 })
  return { dev, jobs }
}

t.test('a log request waits for the offline screen, reaches it when it connects, and its upload closes it', async (t) => {
  const cloud = await startCloud(t)
  const a = await cloud.pair('A')

  const asked = await cloud.call('POST', `/v1/screens/${a.screenId}/logs`, { lines: 50, since: '2026-06-01T11:00:00Z' })
  t.equal(asked.status, 202)
  const req = asked.body.data
  t.match(req, { id: /^alog_/, state: 'pending', sentAt: null })

  const { dev, jobs } = await jobsOf(t, cloud, a)
  t.ok(await until(5 * 60_000, () => (jobs.length ? true : undefined), 20), 'the job arrives on connect')
  t.same(
    jobs[0],
    { id: req.id, kind: 'logs', uploadUrl: `/v1/devices/agent-logs/${req.id}`, lines: 50, since: '2026-06-01T11:00:00.000Z', createdAt: req.requestedAt },
    'the job: where to upload, how many lines, since when',
  )
  t.ok(await until(5 * 60_000, async () => ((await state(cloud, req.id)).sentAt ? true : undefined), 20), 'sent once the device acknowledged it')
  t.equal((await state(cloud, req.id)).state, 'pending', 'still pending until the lines come')

  // The device uploads what it logged, over real HTTP, as the agent does.
  const lines = [
    { at: '2026-06-01T11:59:00.000Z', level: 'info', source: 'agent', message: 'starting with the stored credential' },
    { at: '2026-06-01T11:59:30.000Z', level: 'error', source: 'kiosk', message: 'Uncaught ReferenceError: foo is not defined' },
  ]
  const job = jobs[0]!
  const res = await fetch(`http://127.0.0.1:${cloud.running.httpPort}${job.kind === 'logs' ? job.uploadUrl : ''}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', authorization: basic(a) },
    body: JSON.stringify({ lines, truncated: false }),
  })
  t.equal(res.status, 200)
  t.match(await state(cloud, req.id), { state: 'done', lineCount: 2, truncated: false, lines })

  // Asked while connected: out at once, alone.
  const second = (await cloud.call('POST', `/v1/screens/${a.screenId}/logs`)).body.data
  t.ok(await until(5 * 60_000, () => (jobs.some((j) => j.id === second.id) ? true : undefined), 20))
  t.same(
    jobs.slice(1).map((j) => j.id),
    [second.id],
    'only the new request goes out',
  )
  t.match(jobs[1], { kind: 'logs', lines: 1000, since: null })
  // The agent could not answer: its result fails the request with its reason.
  await dev.client.publishAsync(
    topics.jobResults(a.screenId),
    encodeMessage({
      jobId: second.id,
      kind: 'logs',
      sentHex: '',
      replyHex: '',
      outcome: 'failed',
      reason: 'the log ring is empty',
      at: new Date().toISOString(),
    }),
    { qos: 1 },
  )
  t.ok(await until(5 * 60_000, async () => ((await state(cloud, second.id)).state === 'failed' ? true : undefined), 20))
  t.match(await state(cloud, second.id), { state: 'failed', reason: 'the log ring is empty', lines: [] })
  // A result for a request that is done changes nothing.
  await dev.client.publishAsync(
    topics.jobResults(a.screenId),
    encodeMessage({ jobId: req.id, kind: 'logs', sentHex: '', replyHex: '', outcome: 'failed', reason: 'late', at: new Date().toISOString() }),
    { qos: 1 },
  )

  // Offline past the TTL: expired, and not sent when the screen returns.
  await dev.client.endAsync(true)
  const stale = (await cloud.call('POST', `/v1/screens/${a.screenId}/logs`)).body.data
  cloud.clock.advance(AGENT_LOG_TTL_MS + 1000)
  const fresh = (await cloud.call('POST', `/v1/screens/${a.screenId}/logs`)).body.data
  const back = await jobsOf(t, cloud, a)
  t.ok(await until(5 * 60_000, () => (back.jobs.some((j) => j.id === fresh.id) ? true : undefined), 20), 'the fresh request arrives')
  t.same(
    back.jobs.map((j) => j.id),
    [fresh.id],
    'the expired one is not sent',
  )
  t.match(await state(cloud, stale.id), { state: 'expired', reason: /within 10 minutes/ })
  t.match(await state(cloud, req.id), { state: 'done', lineCount: 2 }, 'the late result changed nothing')

  // One open request per screen: asked again while it is open, the answer is 409 and the
  // device gets nothing; once the open one is answered the next ask reaches it.
  const dup = await cloud.call('POST', `/v1/screens/${a.screenId}/logs`, { lines: 5 })
  t.match(dup, { status: 409, body: { error: 'conflict', agentLogId: fresh.id } }, 'asked again while one is open')
  const closed = await fetch(`http://127.0.0.1:${cloud.running.httpPort}/v1/devices/agent-logs/${fresh.id}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', authorization: basic(a) },
    body: JSON.stringify({ lines: [] }),
  })
  t.equal(closed.status, 200)
  const next = (await cloud.call('POST', `/v1/screens/${a.screenId}/logs`)).body.data
  t.ok(await until(5 * 60_000, () => (back.jobs.some((j) => j.id === next.id) ? true : undefined), 20), 'the next request arrives')
  t.same(
    back.jobs.map((j) => j.id),
    [fresh.id, next.id],
    'the refused ask sent the device nothing (jobs arrive in order)',
  )
})
