// Remote logs, real agent → real cloud: `POST /v1/screens/<id>/logs` reaches the agent as a
// `logs` job over MQTT; the agent uploads what it logged (its own lines, with their fields)
// and what its kiosk page said on its console (a page on the player's feed, as the kiosk
// browser is), and `GET /v1/agent-logs/<id>` serves them; `since` and `lines` choose which.
// The agent's clock is a FakeTime (starting now: pairing checks the registration's expiry
// on it), so the lines' times are known.
import t from 'tap'
import { once } from 'node:events'
import WebSocket from 'ws'
import { Agent } from '../../src/Agent.js'
import { FakeTime, captureLog, tempDir, until } from '../helpers.js'
import { startCloud, type TestCloud } from '../cloud.js'

interface Line {
  at: string
  level: string
  source: string
  message: string
}

async function fetchLogs(cloud: TestCloud, screenId: string, body: unknown): Promise<{ id: string; state: string; lines: Line[]; truncated: boolean }> {
  const res = await cloud.request('POST', `/v1/screens/${screenId}/logs`, body)
  if (res.status !== 202) throw new Error(`logs: ${res.status} ${await res.text()}`)
  const { id } = ((await res.json()) as { data: { id: string } }).data
  const done = await until(5 * 60_000, async () => {
    const got = (
      (await (await cloud.request('GET', `/v1/agent-logs/${id}`)).json()) as { data: { id: string; state: string; lines: Line[]; truncated: boolean } }
    ).data
    return got.state === 'pending' ? undefined : got
  })
  if (!done) throw new Error(`log request ${id} never finished`)
  return done
}

t.test("the lines the agent logged and its kiosk page's console reach the cloud", async (t) => {
  const cloud = await startCloud(t)
  const time = new FakeTime()
  const { log, lines: stdout } = captureLog(time.clock)
  const agent = new Agent({
    cloudUrl: cloud.base,
    dataDir: tempDir(t),
    playerPort: 0,
    log,
    clock: time.clock,
    playbackTimers: time,
    pairing: { pollIntervalMs: 50, pollIntervalCapMs: 200 },
    backoff: { baseMs: 200, capMs: 1000 },
  })
  t.after(() => agent.stop())
  const code = once(agent, 'code')
  await agent.start()
  const [registration] = await code
  const connected = once(agent, 'connected')
  const screenId = await cloud.pair(registration.pairingCode)
  await connected

  // The kiosk page, as the browser holds it: a feed connection that says what its console said.
  const page = new WebSocket(`ws://127.0.0.1:${agent.player.port}/feed`)
  t.after(() => page.terminate())
  await once(page, 'open')
  time.advance(60_000)
  const pageAt = time.now().toISOString()
  agent.log.child({ part: 'test' }).warn({ reason: 'a marker' }, 'something to find')
  page.send(JSON.stringify({ type: 'console', level: 'error', message: 'Uncaught TypeError: x is undefined (http://127.0.0.1/app.js:3)' }))
  t.ok(await until(5 * 60_000, () => (agent.consoleLines.size ? true : undefined)), 'the agent heard the page')

  const first = await fetchLogs(cloud, screenId, {})
  t.equal(first.state, 'done')
  t.equal(first.truncated, false)
  const messages = first.lines.map((l) => `${l.source} ${l.level} ${l.message}`)
  t.ok(
    messages.some((m) => m.startsWith('agent info starting with the stored credential {')),
    'a line the agent logged on its own while starting',
  )
  t.ok(messages.includes('agent warn something to find {"part":"test","reason":"a marker"}'), "the test's line, with its fields")
  t.ok(
    first.lines.some(
      (l) => l.source === 'kiosk' && l.level === 'error' && l.message === 'Uncaught TypeError: x is undefined (http://127.0.0.1/app.js:3)' && l.at === pageAt,
    ),
    "the kiosk page's console message, at the agent's time",
  )
  t.same(
    first.lines.map((l) => l.at),
    [...first.lines.map((l) => l.at)].sort(),
    'oldest first',
  )
  // Every line the cloud has was written to stdout too (the kiosk's are not the agent's log).
  const written = new Set(stdout.map((l) => l.msg))
  for (const l of first.lines.filter((x) => x.source === 'agent')) t.ok(written.has(l.message.split(' {')[0]), `on stdout too: ${l.message.slice(0, 60)}`)

  // `since` and `lines` choose: only what came after, and only the newest. The first job's
  // last line (`job done`, logged once its result is out, after the upload) comes first.
  t.ok(await until(5 * 60_000, () => (stdout.some((l) => l.msg === 'job done' && l.jobId === first.id) ? true : undefined)), 'the first job is over')
  time.advance(60_000)
  const since = time.now().toISOString()
  agent.log.info('after the mark 1')
  agent.log.info('after the mark 2')
  agent.log.info('after the mark 3')
  const later = await fetchLogs(cloud, screenId, { since, lines: 2 })
  t.equal(later.state, 'done')
  t.ok(
    later.lines.every((l) => l.at >= since),
    'nothing before since',
  )
  t.equal(later.lines.length, 2)
  t.equal(later.truncated, true, 'more lines matched than were asked for')
  // The job itself is logged when it arrives ("job received"), so the newest two are the job's and the third mark.
  t.match(
    later.lines.map((l) => l.message),
    [/^after the mark 3/, /^job received /],
  )
})
