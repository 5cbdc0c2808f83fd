// The agent in-process against a real cloud (HTTP + MQTT over TCP): pairing, the link,
// desired state in and `reported` out, the player feed, a cast that expires on the
// agent's clock while the cloud is gone, and a restart with no cloud that plays from
// desired.json.
import t from 'tap'
import fs from 'node:fs'
import { once } from 'node:events'
import path from 'node:path'
import WebSocket from 'ws'
import { Agent, type AgentOptions } from '../../src/Agent.js'
import type { PlayerView } from '../../src/player/PlayerView.js'
import { FakeTime, captureLog, tempDir, until } from '../helpers.js'
import { startCloud } from '../cloud.js'

function agentOptions(base: string, dataDir: string, time: FakeTime, log: AgentOptions['log']): AgentOptions {
  return {
    cloudUrl: base,
    dataDir,
    playerPort: 0,
    clock: time.clock,
    playbackTimers: time,
    random: () => 0.2,
    pairing: { pollIntervalMs: 50, pollIntervalCapMs: 200 },
    backoff: { baseMs: 200, capMs: 1000 },
    ...(log ? { log } : {}),
  }
}

/** Collects the views pushed on the player page's /feed. */
async function feed(port: number) {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/feed`)
  const views: PlayerView[] = []
  ws.on('message', (data) => views.push(JSON.parse(String(data)) as PlayerView))
  await once(ws, 'open')
  return {
    views,
    close: () => ws.terminate(),
    send: (m: unknown) => ws.send(JSON.stringify(m)),
    async waitFor(pred: (v: PlayerView) => boolean) {
      const v = await until(5 * 60_000, () => views.find(pred))
      if (!v) throw new Error(`no matching view; got ${JSON.stringify(views)}`)
      return v
    },
  }
}

t.test('pairs, connects, applies desired state, reports, and keeps playing offline', async (t) => {
  const cloud = await startCloud(t)
  const dataDir = tempDir(t)
  const time = new FakeTime(Date.now())
  const { log, lines } = captureLog(time.clock)
  const agent = new Agent(agentOptions(cloud.base, dataDir, time, log))
  t.after(() => agent.stop())
  const code = once(agent, 'code')
  await agent.start()
  t.equal(agent.phase, 'pairing')
  const [registration] = await code
  t.match(registration.pairingCode, /^[A-Z2-9]{6}$/)
  t.ok(
    lines.some((l) => l.msg === 'pairing code' && l.pairingCode === registration.pairingCode),
    'the code is logged',
  )

  const page = await feed(agent.player.port!)
  t.after(() => page.close())
  await page.waitFor((v) => v.type === 'pairing' && v.pairingCode === registration.pairingCode)

  const connected = once(agent, 'connected')
  const screenId = await cloud.pair(registration.pairingCode, 'Lobby left')
  await connected
  t.equal(agent.screenId, screenId)
  const credFile = path.join(dataDir, 'credentials.json')
  t.equal(fs.statSync(credFile).mode & 0o777, 0o600, 'credentials.json is 0600')
  t.match(JSON.parse(fs.readFileSync(credFile, 'utf8')), { screenId, mqtt: { username: screenId } })

  const topic = (kind: string) => `svc/v1/screens/${screenId}/${kind}`
  await cloud.waitFor(topic('status'), (p) => p.status === 'online')
  t.equal(cloud.seen(topic('status')).at(-1)?.retain, true, 'status is retained')
  const first = await cloud.waitFor(topic('reported'), (p) => p.version === 0)
  t.match(first, { playing: { source: 'none', contentKind: null, contentId: null } })
  t.match(first.storage, { usedBytes: Number, totalBytes: Number }, 'storage from statfs')
  t.ok((first.storage as { totalBytes: number }).totalBytes > 0)
  const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
  t.equal(first.agentVersion, pkg.version, "the agent reports its package's version")

  const screen = await (await cloud.request('GET', `/v1/screens/${screenId}`)).json()
  t.equal((screen as { data: { id: string } }).data.id, screenId)
  t.equal(first.video, undefined, 'no video frame counts before a page told any')

  // The page tells its video frame counts (a bad count is ignored); the next report carries them.
  page.send({ type: 'frames', decoded: -1, dropped: 'many' })
  page.send({ type: 'frames', decoded: 1200, dropped: 7 })
  t.same(await until(5 * 60_000, () => agent.videoFrames() ?? undefined), { decoded: 1200, dropped: 7 }, 'the agent holds the counts')

  // Desired state through the broker, as the cloud publishes it.
  const now = time.nowMs
  const desired = {
    version: 7,
    screenId,
    timezone: 'UTC',
    assignment: { contentKind: 'media', contentId: 'med_loop', content: { name: 'Loop', url: 'https://cdn.example/loop.mp4', mimeType: 'video/mp4' } },
    schedule: null,
    casts: [
      {
        id: 'cast_1',
        contentKind: 'media',
        contentId: 'med_promo',
        content: { name: 'Promo' },
        triggeredAt: new Date(now - 60_000).toISOString(),
        expiresAt: new Date(now + 10 * 60_000).toISOString(),
      },
    ],
    emergency: null,
    panel: null,
    generatedAt: new Date(now).toISOString(),
  }
  await cloud.publish(topic('desired'), { version: 'bad' })
  await cloud.publish(topic('desired'), desired)
  const reported = await cloud.waitFor(topic('reported'), (p) => p.version === 7)
  t.match(reported, {
    version: 7,
    playing: { source: 'cast', contentKind: 'media', contentId: 'med_promo', castId: 'cast_1' },
    video: { decoded: 1200, dropped: 7 },
  })
  const served = await until(5 * 60_000, async () => {
    const s = ((await (await cloud.request('GET', `/v1/screens/${screenId}`)).json()) as { data: { reported?: { version: number; video?: unknown } } }).data
    return s.reported?.version === 7 ? s.reported : undefined
  })
  t.same(served?.video, { decoded: 1200, dropped: 7 }, "the screen's reported state in the API carries the frame counts")
  t.equal(cloud.seen(topic('reported')).at(-1)?.retain, false, 'reported is not retained: the cloud keeps the last report, the broker stores only status')
  t.ok(
    lines.some((l) => l.msg === 'ignoring an invalid desired state'),
    'the invalid one was logged and ignored',
  )
  const castView = await page.waitFor((v) => v.type === 'playing' && v.source === 'cast')
  t.match(castView, { type: 'playing', screenId, connected: true, version: 7, contentId: 'med_promo', castId: 'cast_1', content: { name: 'Promo' } })
  // The state is stored right after it is applied (the report can arrive before the write ends).
  const stored = await until(5 * 60_000, () => {
    const v = JSON.parse(fs.readFileSync(path.join(dataDir, 'desired.json'), 'utf8')).version as number
    return v === 7 ? v : undefined
  })
  t.equal(stored, 7, 'persisted')

  // A job: no serial port configured.
  await cloud.publish(topic('jobs'), { id: 'sjob_1', kind: 'serial', bytesHex: 'aa11fe0100', createdAt: new Date(now).toISOString() }, false)
  const result = await cloud.waitFor(topic('job-results'), (p) => p.jobId === 'sjob_1')
  t.match(result, { outcome: 'failed', reason: 'no serial port configured', sentHex: '', replyHex: '' })

  // The cloud goes away; the cast ends on the agent's own clock.
  const disconnected = once(agent, 'disconnected')
  await cloud.close()
  await disconnected
  time.advance(10 * 60_000 + 1)
  t.match(agent.state?.decision, { source: 'assignment', contentId: 'med_loop' }, 'cast expired while offline')
  await page.waitFor((v) => v.type === 'playing' && v.source === 'assignment' && !v.connected)
  await agent.stop()

  // Restart with no cloud reachable: plays from desired.json straight away.
  const again = new Agent(agentOptions(cloud.base, dataDir, time, captureLog(time.clock).log))
  t.after(() => again.stop())
  await again.start()
  t.equal(again.phase, 'running', 'no pairing: the stored credential is used')
  t.equal(again.state?.version, 7)
  t.match(again.state?.decision, { source: 'assignment', contentId: 'med_loop' })
  // The page view follows once the media cache has been checked (files first, then the switch).
  const state = await until(5 * 60_000, async () => {
    const v = (await (await fetch(`http://127.0.0.1:${again.player.port}/state`)).json()) as PlayerView
    return v.type === 'starting' ? undefined : v
  })
  t.match(state, { type: 'playing', source: 'assignment', contentId: 'med_loop', connected: false })
  const html = await (await fetch(`http://127.0.0.1:${again.player.port}/`)).text()
  t.match(html, /<title>svc player<\/title>/)
  await again.stop()
})

t.test('a deleted screen: the agent says so, drops the credential and pairs again', async (t) => {
  const cloud = await startCloud(t)
  const dataDir = tempDir(t)
  const time = new FakeTime(Date.now())
  const { log, lines } = captureLog(time.clock)
  const agent = new Agent(agentOptions(cloud.base, dataDir, time, log))
  t.after(() => agent.stop())
  const code = once(agent, 'code')
  await agent.start()
  const [reg] = await code
  const connected = once(agent, 'connected')
  const screenId = await cloud.pair(reg.pairingCode)
  await connected
  await cloud.publish(`svc/v1/screens/${screenId}/desired`, {
    version: 1,
    screenId,
    timezone: 'UTC',
    assignment: { contentKind: 'media', contentId: 'med_a' },
    schedule: null,
    casts: [],
    emergency: null,
    panel: null,
    generatedAt: new Date().toISOString(),
  })
  await until(5 * 60_000, () => (agent.state?.version === 1 ? true : undefined))

  const revoked = once(agent, 'revoked')
  const nextCode = once(agent, 'code')
  const del = await cloud.request('DELETE', `/v1/screens/${screenId}`)
  t.ok(del.status === 200 || del.status === 204, `deleted (${del.status})`)
  await revoked
  t.ok(
    lines.some((l) => l.level === 'error' && /device credential revoked/.test(String(l.msg))),
    'a clear log line',
  )
  t.notOk(fs.existsSync(path.join(dataDir, 'credentials.json')), 'credential deleted')
  t.notOk(fs.existsSync(path.join(dataDir, 'desired.json')), 'the old screen’s desired state is gone too')
  const [reg2] = await nextCode
  t.not(reg2.pairingCode, reg.pairingCode)
  t.equal(agent.phase, 'pairing')

  const reconnected = once(agent, 'connected')
  const screen2 = await cloud.pair(reg2.pairingCode, 'Again')
  await reconnected
  t.equal(agent.screenId, screen2)
  t.equal(agent.state?.version, 0, 'the new screen starts from version 0')
  // Stopped before the teardowns remove its folder (it writes there while it runs).
  await agent.stop()
})
