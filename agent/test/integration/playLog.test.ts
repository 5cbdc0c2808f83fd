// Proof of play, real agent → real cloud: plays recorded while connected arrive at once;
// plays recorded while the cloud is gone, and across an agent restart, arrive after the
// cloud comes back (same ports, same database), each exactly once; a forgotten cursor
// (everything sent again) stores nothing twice.
import { servicesOf } from '../../../cloud/src/app.js'
import t from 'tap'
import fs from 'node:fs'
import { once } from 'node:events'
import path from 'node:path'
import { Agent, type AgentOptions } from '../../src/Agent.js'
import { startServer, type Running } from '../../../cloud/src/server.js'
import { testConfig } from '../../../cloud/src/config.js'
import { ManualClock } from '../../../cloud/src/platform/clock.js'
import { FakeTime, captureLog, tempDir, until } from '../helpers.js'

function agentOptions(base: string, dataDir: string, time: FakeTime): AgentOptions {
  return {
    cloudUrl: base,
    dataDir,
    playerPort: 0,
    clock: time.clock,
    playbackTimers: time,
    random: () => 0.2,
    pairing: { pollIntervalMs: 50, pollIntervalCapMs: 200 },
    backoff: { baseMs: 100, capMs: 300 },
    log: captureLog(time.clock).log,
  }
}

const PLAY = { source: 'assignment', contentKind: 'playlist', contentId: 'pl_1', castId: null, emergencyId: null, itemKind: 'media', zone: null }

/** One play of `itemId` lasting `lengthMs` on the agent's clock. */
async function play(agent: Agent, time: FakeTime, itemId: string, lengthMs = 10_000): Promise<void> {
  agent.playLog.start('p1:main', { ...PLAY, screenId: agent.screenId!, itemId })
  time.advance(lengthMs)
  agent.playLog.end('p1:main')
  await agent.playLog.flush()
}

t.test('plays recorded offline and across a restart arrive after reconnect, once each', async (t) => {
  const cloudDir = tempDir(t, 'svc-cloud-')
  const config = (httpPort = 0, mqttPort = 0) =>
    testConfig({ dataDir: cloudDir, dbFile: path.join(cloudDir, 'svc.sqlite'), host: '127.0.0.1', httpPort, mqttPort })
  // The cloud's clock reads a minute before the agent's first play (the screen is paired then):
  // the cloud refuses plays from before a screen's pairing or ending in the future.
  const cloudClock = new ManualClock('2026-06-01T09:59:00.000Z')
  let cloud: Running = await startServer(config(), { clock: cloudClock })
  t.after(() => cloud.close())
  const { app } = cloud
  const ws = await servicesOf(app).workspaces.create('Play log', 'us')
  const { secret: apiKey } = await servicesOf(app).apiKeys.createRoot(ws.id, ws.region, 'Owner', 'all')
  const base = `http://127.0.0.1:${cloud.httpPort}`
  const mqttPort = cloud.mqttPort!
  const api = async (url: string) => {
    const res = await fetch(`${base}${url}`, { headers: { authorization: `Bearer ${apiKey}` } })
    return { status: res.status, body: (await res.json()) as { data: Array<{ itemId: string; startedAt: string; durationMs: number }> } }
  }

  const dataDir = tempDir(t)
  const time = new FakeTime('2026-06-01T10:00:00.000Z')
  let agent = new Agent(agentOptions(base, dataDir, time))
  t.after(() => agent.stop())
  const code = once(agent, 'code')
  await agent.start()
  const [reg] = await code
  const connected = once(agent, 'connected')
  const pair = await fetch(`${base}/v1/screens/pair`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ code: reg.pairingCode, name: 'Lobby' }),
  })
  const screenId = ((await pair.json()) as { data: { id: string } }).data.id
  await connected

  // Online: the play goes out as soon as it is written.
  await play(agent, time, 'med_online')
  const first = await until(5 * 60_000, async () => ((await api(`/v1/screens/${screenId}/play-log`)).body.data.length === 1 ? true : undefined))
  t.ok(first, 'the online play arrived')
  await agent.playLogSender!.idle()

  // The cloud goes away: plays are kept on disk, then the agent restarts, still offline.
  const gone = once(agent, 'disconnected')
  await cloud.close()
  await gone
  await play(agent, time, 'med_offline_1')
  await play(agent, time, 'med_offline_2')
  await agent.stop()
  agent = new Agent(agentOptions(base, dataDir, time))
  await agent.start()
  t.equal(agent.phase, 'running')
  await play(agent, time, 'med_after_restart')
  t.equal((await agent.playLog.all()).length, 4, 'four plays on disk')

  // The cloud comes back on the same ports and database; the agent reconnects and sends.
  const back = once(agent, 'connected')
  cloud = await startServer(config(Number(new URL(base).port), mqttPort), { clock: cloudClock })
  await back
  const all = await until(5 * 60_000, async () => {
    const r = await api(`/v1/screens/${screenId}/play-log`)
    return r.body.data.length >= 4 ? r.body.data : undefined
  })
  t.same(
    all?.map((p) => p.itemId),
    ['med_online', 'med_offline_1', 'med_offline_2', 'med_after_restart'],
    'every play once, in order',
  )
  t.same(
    all?.map((p) => p.startedAt),
    ['2026-06-01T10:00:00.000Z', '2026-06-01T10:00:10.000Z', '2026-06-01T10:00:20.000Z', '2026-06-01T10:00:30.000Z'],
    "times from the agent's clock",
  )
  await agent.playLogSender!.idle()
  t.equal(
    Number(fs.readFileSync(path.join(dataDir, 'play-log.cursor'), 'utf8')),
    fs.statSync(path.join(dataDir, 'play-log.jsonl')).size,
    'everything acknowledged after the PUBACKs',
  )

  // The cursor is lost (as if an ack never happened): everything is sent again, stored once.
  await agent.stop()
  fs.rmSync(path.join(dataDir, 'play-log.cursor'))
  agent = new Agent(agentOptions(base, dataDir, time))
  const reconnected = once(agent, 'connected')
  await agent.start()
  await reconnected
  await until(5 * 60_000, () => (fs.existsSync(path.join(dataDir, 'play-log.cursor')) ? true : undefined))
  await agent.playLogSender!.idle()
  t.ok(agent.playLogSender!.sentBatches >= 1, 'the log was sent again')
  t.equal((await api(`/v1/screens/${screenId}/play-log`)).body.data.length, 4, 'and nothing was stored twice')
})
