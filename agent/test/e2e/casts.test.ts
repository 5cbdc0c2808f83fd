// End to end over real sockets: a real cloud (startServer on a file database, so it can
// restart on the same data dir and ports) and the agent as a real child process
// (its CLI's bundle: `agent/src/cli.ts start …`), observed only from the outside: the
// agent's JSON log lines and what the cloud shows on `GET /v1/screens/<id>` (`status`,
// `desiredVersion`, the device's `reported` state). Content comes from the real library:
// an uploaded PNG inside a playlist.
//
// One story, in order: pair → cast → clear → a cast that expires on the agent's own clock
// (the cloud's expiry worker is off at first) → emergency over a cast, cleared, the cast
// resumes → cloud restart on the same data dir and ports (expiry worker on), the agent
// reconnects by itself and a new cast reaches it → SIGKILL, offline after the debounce →
// a cast created and expired while the agent is down, restart ends in the right state →
// the broker refuses the device's credential on another screen's topics.
//
// The cloud's offline debounce timers run only when castExpiryIntervalMs > 0 (see
// cloud/src/app.ts), which is why the kill comes after the restart with the worker on.
import { servicesOf } from '../../../cloud/src/app.js'
import t, { type Test } from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { connectAsync } from 'mqtt'
import { topics } from '@svc/shared/mqtt/index'
import { startServer, type Running } from '../../../cloud/src/server.js'
import { testConfig, type Config } from '../../../cloud/src/config.js'
import { eventually, runAgentCli, tempDir, until, type AgentProcess } from '../helpers.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

const PNG_1x1 = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f000500020127efa3d50000000049454e44ae426082',
  'hex',
)
const GRACE_MS = 500

function spawnAgent(t: Test, cloudUrl: string, dataDir: string): Promise<AgentProcess> {
  return runAgentCli(t, ['start', '--cloud', cloudUrl, '--data', dataDir, '--player-port', '0'])
}

interface Playing {
  source: string
  contentKind: string | null
  contentId: string | null
  castId?: string
  emergencyId?: string
}
interface ScreenView {
  id: string
  status: string
  desiredVersion: number
  reported: { version: number; playing: Playing } | null
}

t.test('casts reach a real agent process, end, pause under an emergency, and survive agent and cloud restarts', async (t) => {
  const dataDir = tempDir(t, 'svc-e2e-cloud-')
  const agentDir = tempDir(t, 'svc-e2e-agent-')
  // Cast expiry on the cloud is off at first, so the first expiry is the agent's own doing.
  const config = (over: Partial<Config>): Config =>
    testConfig({ dataDir, dbFile: path.join(dataDir, 'svc.sqlite'), host: '127.0.0.1', screenOfflineGraceMs: GRACE_MS, ...over })
  let running: Running = await startServer(config({ httpPort: 0, mqttPort: 0 }))
  t.after(() => running.close())
  const { httpPort, mqttPort } = running
  const base = `http://127.0.0.1:${httpPort}`
  const ws = await servicesOf(running.app).workspaces.create('E2E', 'us')
  const { secret: apiKey } = await servicesOf(running.app).apiKeys.createRoot(ws.id, ws.region, 'Owner', 'all')

  const call = async (method: string, url: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(base + url, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    })
    return { status: res.status, body: await res.json() }
  }
  const screen = async (id: string): Promise<ScreenView> => {
    const r = await call('GET', `/v1/screens/${id}`)
    if (r.status !== 200) throw new Error(`GET screen: ${r.status}`)
    return r.body.data as ScreenView
  }
  /** Waits until the cloud lists the cast among the expired ones; answers its status there. */
  const expiredOnCloud = (id: string) =>
    eventually(
      `the cloud listing cast ${id} as expired`,
      async () => (await call('GET', '/v1/casts?status=expired')).body.data.find((c: { id: string }) => c.id === id)?.status as string | undefined,
    )
  /** Waits until the screen, as the cloud shows it, satisfies `pred` (the bound is a hang guard whose expiry names `what`). */
  const screenUntil = async (id: string, what: string, pred: (s: ScreenView) => boolean, ms = HANG_GUARD_MS): Promise<ScreenView> => {
    let last: ScreenView | undefined
    const hit = await until(ms, async () => {
      last = await screen(id)
      return pred(last) ? last : undefined
    })
    if (!hit) throw new Error(`${what}: not within ${ms} ms; last ${JSON.stringify(last)}`)
    return hit
  }
  /** The agent has applied the newest desired version and plays `want`. */
  const applied = (want: (p: Playing) => boolean) => (s: ScreenView) =>
    s.reported !== null && s.reported.version === s.desiredVersion && want(s.reported.playing)

  // Content from the real library: a ready PNG in a playlist.
  const fd = new FormData()
  fd.append('name', 'Logo')
  fd.append('file', new Blob([PNG_1x1]), 'logo.png')
  const up = await fetch(`${base}/v1/media/upload`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` }, body: fd })
  t.equal(up.status, 201, 'media uploaded')
  const media = ((await up.json()) as { data: { id: string } }).data
  await servicesOf(running.app).media.processPending()
  t.equal((await call('GET', `/v1/media/${media.id}`)).body.data.state, 'ready')
  const pl = await call('POST', '/v1/playlists', { name: 'Promo', items: [{ kind: 'media', id: media.id, durationMs: 5000 }] })
  t.equal(pl.status, 201, 'playlist created')
  const playlistId = pl.body.data.id as string

  // Pair the agent process.
  let agent = await spawnAgent(t, base, agentDir)
  const codeLine = await eventually('the pairing code from the agent', () => agent.json().find((l) => l.msg === 'pairing code'))
  const paired = await call('POST', '/v1/screens/pair', { code: codeLine.pairingCode, name: 'Lobby' })
  t.equal(paired.status, 201, 'paired')
  const screenId = paired.body.data.id as string
  await screenUntil(screenId, 'online and reporting', (s) => s.status === 'online' && applied((p) => p.source === 'none')(s))
  t.pass('the agent is online and reports the desired version')

  const castBody = (extra: Record<string, unknown> = {}) => ({
    contentKind: 'playlist',
    contentId: playlistId,
    scopeKind: 'screens',
    screenIds: [screenId],
    ...extra,
  })

  // A cast plays; cleared, the screen goes back to normal.
  const cast1 = await call('POST', '/v1/casts', castBody())
  t.equal(cast1.status, 201)
  t.match(cast1.body.data, { status: 'active', screenCount: 1 })
  let s = await screenUntil(
    screenId,
    'cast 1 plays',
    applied((p) => p.castId === cast1.body.data.id),
  )
  t.match(s.reported!.playing, { source: 'cast', contentKind: 'playlist', contentId: playlistId })
  t.equal((await call('POST', `/v1/casts/${cast1.body.data.id}/clear`)).status, 200)
  s = await screenUntil(
    screenId,
    'back to normal after clear',
    applied((p) => p.source === 'none'),
  )
  t.notOk(s.reported!.playing.castId, 'no cast plays')

  // A cast that expires on the agent's own clock (the cloud does not sweep casts yet).
  const expiresAt = new Date(Date.now() + 2500).toISOString()
  const cast2 = await call('POST', '/v1/casts', castBody({ expiresAt }))
  t.equal(cast2.status, 201)
  const cast2Version = (
    await screenUntil(
      screenId,
      'cast 2 plays',
      applied((p) => p.castId === cast2.body.data.id),
    )
  ).desiredVersion
  s = await screenUntil(screenId, 'cast 2 expired on the agent', (x) => x.reported?.playing.source === 'none')
  t.equal(s.reported!.version, cast2Version, 'ended by the agent without a new desired state')
  const ended = agent.json().find((l) => l.msg === 'playback' && l.source === 'none' && l.version === cast2Version)
  t.ok(ended && Date.parse(String(ended.t)) >= Date.parse(expiresAt), 'not before expiresAt')
  t.equal(await servicesOf(running.app).casts.expireDue(), 1, 'the cloud sweeps it too')
  await screenUntil(
    screenId,
    'the sweep is applied',
    applied((p) => p.source === 'none'),
  )

  // An emergency over an active cast; cleared, the cast resumes.
  const cast3 = await call('POST', '/v1/casts', castBody())
  await screenUntil(
    screenId,
    'cast 3 plays',
    applied((p) => p.castId === cast3.body.data.id),
  )
  const emg = await call('POST', '/v1/emergencies', { contentKind: 'media', contentId: media.id, scopeKind: 'screens', screenIds: [screenId] })
  t.equal(emg.status, 201)
  s = await screenUntil(
    screenId,
    'emergency plays',
    applied((p) => p.emergencyId === emg.body.data.id),
  )
  t.match(s.reported!.playing, { source: 'emergency', contentKind: 'media', contentId: media.id })
  t.equal((await call('GET', '/v1/casts?status=paused')).body.data[0]?.id, cast3.body.data.id, 'the cast is paused')
  t.equal((await call('POST', `/v1/emergencies/${emg.body.data.id}/clear`)).status, 200)
  s = await screenUntil(
    screenId,
    'the cast resumes',
    applied((p) => p.castId === cast3.body.data.id),
  )
  t.equal(s.reported!.playing.source, 'cast')
  t.equal((await call('POST', `/v1/casts/${cast3.body.data.id}/clear`)).status, 200)
  await screenUntil(
    screenId,
    'normal again',
    applied((p) => p.source === 'none'),
  )

  // The cloud restarts on the same data dir and ports (with its expiry worker on).
  const connects = () => agent.json().filter((l) => l.msg === 'connected to the broker').length
  const before = connects()
  await running.close()
  await eventually('the agent saying it cannot reach the broker', () =>
    agent.json().some((l) => typeof l.msg === 'string' && l.msg.startsWith('cannot reach the broker')) ? true : undefined,
  )
  running = await startServer(config({ httpPort, mqttPort: mqttPort!, castExpiryIntervalMs: 500 }))
  const back = await eventually('the agent connecting again', () => (connects() > before ? true : undefined))
  t.ok(back, 'the agent reconnected by itself')
  await screenUntil(screenId, 'online after the cloud restart', (x) => x.status === 'online')
  // Long enough to be seen applied on a loaded machine before the expiry worker ends it.
  const cast5 = await call('POST', '/v1/casts', castBody({ expiresAt: new Date(Date.now() + 4000).toISOString() }))
  t.equal(cast5.status, 201)
  await screenUntil(
    screenId,
    'a cast after the restart reaches the agent',
    applied((p) => p.castId === cast5.body.data.id),
  )
  s = await screenUntil(screenId, 'and the cloud expires it', (x) => applied((p) => p.source === 'none')(x))
  // The agent ends it on its own clock; the cloud's expiry worker (every 500 ms) may come just after.
  t.equal(await expiredOnCloud(cast5.body.data.id), 'expired')

  // SIGKILL: offline after the debounce (its timing is tested on the injected clock:
  // cloud/test/devicelink/presenceTimers.test.ts).
  agent.child.kill('SIGKILL')
  await agent.exited
  s = await screenUntil(screenId, 'offline after the grace', (x) => x.status === 'offline')
  t.equal(s.status, 'offline', 'offline once the Last Will and the grace have passed')

  // While it is down, a cast is created and expires.
  const cast4 = await call('POST', '/v1/casts', castBody({ expiresAt: new Date(Date.now() + 800).toISOString() }))
  t.equal(cast4.status, 201)
  t.equal(await expiredOnCloud(cast4.body.data.id), 'expired', 'the cloud expired it while the agent was down')
  await servicesOf(running.app).desiredPublisher.idle() // the version its end published
  const latest = (await screen(screenId)).desiredVersion
  agent = await spawnAgent(t, base, agentDir)
  s = await screenUntil(
    screenId,
    'back online at the latest version',
    (x) => x.status === 'online' && applied((p) => p.source === 'none')(x) && x.reported!.version === latest,
  )
  t.equal(s.reported!.version, latest, 'version = the latest')
  t.notOk(
    agent.json().some((l) => l.msg === 'playback' && l.castId === cast4.body.data.id),
    'the expired cast never played',
  )
  t.notOk(
    agent.json().some((l) => l.msg === 'pairing code'),
    'no pairing again',
  )
  t.equal(
    (await call('GET', '/v1/casts?status=expired')).body.data.find((c: { id: string }) => c.id === cast4.body.data.id)?.status,
    'expired',
    'the cloud expired it meanwhile',
  )

  // Another screen's topics are refused to this device's credential.
  agent.child.kill('SIGTERM')
  t.same(await agent.exited, { code: 0, signal: null }, 'clean exit')
  const reg = await fetch(`${base}/v1/devices/register`, { method: 'POST' })
  const other = await call('POST', '/v1/screens/pair', { code: ((await reg.json()) as { data: { pairingCode: string } }).data.pairingCode, name: 'Other' })
  const otherId = other.body.data.id as string
  const cred = JSON.parse(fs.readFileSync(path.join(agentDir, 'credentials.json'), 'utf8')) as { screenId: string; deviceSecret: string; mqtt: { url: string } }
  t.equal(cred.screenId, screenId)
  const opts = {
    clientId: screenId,
    username: screenId,
    password: cred.deviceSecret,
    protocolVersion: 4 as const,
    clean: true,
    reconnectPeriod: 0,
    connectTimeout: 5000,
  }
  const dev = await connectAsync(cred.mqtt.url, opts)
  t.after(() => dev.endAsync(true).catch(() => undefined))
  const own = await dev.subscribeAsync(topics.desired(screenId), { qos: 1 })
  t.same(
    own.map((g) => g.qos),
    [1],
    'its own desired is granted',
  )
  // mqtt.js rejects when a SUBACK return code has bit 0x80; the packet rides on the error.
  const refused = await dev.subscribeAsync(topics.desired(otherId), { qos: 1 }).then(
    () => null,
    (err: Error & { packet?: { granted?: number[] } }) => err.packet?.granted,
  )
  t.same(refused, [128], 'another screen’s desired is refused (SUBACK 128)')
  t.ok(dev.connected, 'a refused subscription keeps the connection')
  const closed = new Promise<void>((r) => dev.once('close', () => r()))
  dev.publish(topics.status(otherId), JSON.stringify({ status: 'offline', at: new Date().toISOString() }), { qos: 1, retain: true })
  const wasClosed = await Promise.race([closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), HANG_GUARD_MS).unref())])
  t.ok(wasClosed, 'publishing to another screen’s status closes the connection')
})
