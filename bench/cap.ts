// A CAP alert to a fleet (not a test): the time from the POST of an Extreme CAP alert to a
// push feed until the last device holds the emergency in its desired state, beside a manual
// emergency (POST /v1/emergencies) to the same screens in the same run, interleaved round by
// round (the order alternating).
//   pnpm exec tsx bench/cap.ts [N=5000] [--rounds=5] [--timeout=SECONDS]
//
// The cloud is started as `pnpm start` starts it (its CLI, a file SQLite database, the real
// content library); N screens paired through the API exactly as devices pair; one PNG
// uploaded; a push feed (target: every screen, Extreme full screen) created through the API;
// N devices (mqtt.js, clean: false, QoS 1, their own credentials) in a child process,
// connecting 100 at a time and reporting each desired state as the agent does. Each round:
// (CAP) POST /v1/cap-feeds/<id>/alerts of an Extreme Alert, timed until the last device
// holds an emergency whose message carries the round's headline; then a Cancel, until every
// device holds no emergency; (manual) POST /v1/emergencies to every screen with the same
// content and a message naming the round, timed the same way; then its clear. Each figure
// is the last device's time from the POST; the ratio is taken per round (the two kinds of a
// round see the same machine) and its median printed.
// Times cross process boundaries as absolute high-resolution timestamps
// (performance.timeOrigin + performance.now()). Every child process is killed at the end,
// on failure and on the time limit.
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { ChildProcess } from 'node:child_process'
import { connectAsync, type MqttClient } from 'mqtt'
import { encodeMessage, topics, type DesiredState, type Reported } from '@svc/shared/mqtt/index'
import { decidePlayback, toPlaying } from '@svc/shared/playback/index'
import {
  call,
  cli,
  cloudEnv,
  expect,
  f1,
  forkScript,
  freePort,
  killAll,
  loadAvg,
  now,
  pairMany,
  PER_ADDRESS,
  sleep,
  startCloud,
  stop,
  tempDir,
  uploadImage,
} from './lib/harness.js'

const BATCH = 100

type Match = { kind: 'emergency'; token: string } | { kind: 'none' }
type ToDevices = { type: 'connect'; url: string; creds: { id: string; password: string }[] } | { type: 'arm'; phase: string; match: Match } | { type: 'end' }
type FromDevices =
  | { type: 'connected'; ms: number }
  | { type: 'armed' }
  | { type: 'done'; phase: string; times: number[] }
  | { type: 'ended' }
  | { type: 'error'; message: string }

/** A connect that a reset during the storm does not end (a loaded machine drops some): five tries. */
async function connectRetrying(url: string, opts: Parameters<typeof connectAsync>[1]): Promise<MqttClient> {
  for (let tries = 1; ; tries++) {
    try {
      return await connectAsync(url, opts)
    } catch (err) {
      if (tries >= 5) throw err
      await sleep(1000 * tries)
    }
  }
}

// ---- the devices (child process) ----
function devices(): void {
  const send = (m: FromDevices) => process.send!(m)
  let clients: MqttClient[] = []
  /** Per client: its newest desired state. */
  let held: (DesiredState | null)[] = []
  let watch: ((k: number) => void) | null = null
  process.on('message', async (m: ToDevices) => {
    try {
      if (m.type === 'connect') {
        const t0 = performance.now()
        clients = new Array(m.creds.length)
        held = m.creds.map(() => null)
        for (let i = 0; i < m.creds.length; i += BATCH) {
          await Promise.all(
            m.creds.slice(i, i + BATCH).map(async ({ id, password }, j) => {
              const k = i + j
              const desired = topics.desired(id)
              const c = await connectRetrying(m.url, {
                clientId: id,
                username: id,
                password,
                clean: false,
                protocolVersion: 4,
                reconnectPeriod: 1000,
                connectTimeout: 120_000,
              })
              c.on('message', (topic, payload) => {
                if (topic !== desired) return
                const state = JSON.parse(payload.toString()) as DesiredState
                if (held[k] && state.version < held[k]!.version) return
                held[k] = state
                watch?.(k)
                // As the agent does once it applied a desired state: report the version and what plays.
                const report: Reported = { version: state.version, playing: toPlaying(decidePlayback(state, new Date())), at: new Date().toISOString() }
                c.publish(topics.reported(id), encodeMessage(report), { qos: 1 }, () => undefined)
              })
              await c.subscribeAsync(desired, { qos: 1 })
              clients[k] = c
            }),
          )
        }
        send({ type: 'connected', ms: performance.now() - t0 })
      } else if (m.type === 'arm') {
        const match = m.match
        const holds = (k: number): boolean => {
          const e = held[k]?.emergency ?? null
          return match.kind === 'none' ? held[k] !== null && e === null : (e?.message?.includes(match.token) ?? false)
        }
        const times = new Map<number, number>()
        const check = (k: number) => {
          if (times.has(k) || !holds(k)) return
          times.set(k, now())
          if (times.size === clients.length) {
            watch = null
            send({ type: 'done', phase: m.phase, times: [...times.values()] })
          }
        }
        watch = check
        send({ type: 'armed' })
        for (let k = 0; k < clients.length; k++) check(k)
      } else if (m.type === 'end') {
        await Promise.all(clients.map((c) => c.endAsync(true).catch(() => undefined)))
        clients = []
        send({ type: 'ended' })
      }
    } catch (err) {
      send({ type: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) })
    }
  })
  process.on('disconnect', () => process.exit(0))
}

// ---- the orchestrator ----
function channel(child: ChildProcess) {
  const next = <T extends FromDevices['type']>(type: T, timeoutMs = 600_000, phase?: string): Promise<Extract<FromDevices, { type: T }>> =>
    new Promise((resolve, reject) => {
      const t = setTimeout(() => done(new Error(`no "${type}"${phase ? ` (${phase})` : ''} from the devices within ${timeoutMs / 1000} s`)), timeoutMs)
      const onExit = (code: number | null) => done(new Error(`devices process exited (${code})`))
      const on = (m: FromDevices) => {
        if (m.type === 'error') done(new Error(`devices: ${m.message}`))
        else if (m.type === type && (phase === undefined || (m as { phase?: string }).phase === phase)) done(null, m as Extract<FromDevices, { type: T }>)
      }
      const done = (err: Error | null, v?: Extract<FromDevices, { type: T }>) => {
        clearTimeout(t)
        child.off('message', on)
        child.off('exit', onExit)
        if (err) reject(err)
        else resolve(v!)
      }
      child.on('message', on)
      child.once('exit', onExit)
    })
  return { next, tell: (m: ToDevices) => child.send(m) }
}

const capTime = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, '+00:00')
const SENDER = 'bench@alerts.example'

function alertDoc(identifier: string, headline: string, msgType: 'Alert' | 'Cancel', references?: string): string {
  const info =
    msgType === 'Alert'
      ? `<info><language>en-US</language><category>Safety</category><event>Civil Emergency</event><urgency>Immediate</urgency>
    <severity>Extreme</severity><certainty>Observed</certainty><senderName>Bench County Emergency Management</senderName>
    <headline>${headline}</headline><description>A bench alert to every screen.</description><instruction>Shelter in place.</instruction>
    <area><areaDesc>Everywhere</areaDesc></area></info>`
      : ''
  return `<?xml version="1.0" encoding="UTF-8"?>
<alert xmlns="urn:oasis:names:tc:emergency:cap:1.2"><identifier>${identifier}</identifier><sender>${SENDER}</sender>
<sent>${capTime(new Date())}</sent><status>Actual</status><msgType>${msgType}</msgType><scope>Public</scope>
${references ? `<references>${references}</references>` : ''}${info}</alert>`
}

const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

async function main(): Promise<void> {
  const args = process.argv.slice(2)
  const N = Number(args.find((a) => /^\d+$/.test(a)) ?? 5000)
  const R = Number(args.find((a) => a.startsWith('--rounds='))?.slice(9) ?? 5)
  const limitS = Number(args.find((a) => a.startsWith('--timeout='))?.slice(10) ?? 3600)
  setTimeout(() => {
    console.error(`time limit of ${limitS} s reached; stopping`)
    killAll()
    process.exit(1)
  }, limitS * 1000).unref()
  const self = fileURLToPath(import.meta.url)
  const dir = tempDir('svc-bench-cap-')
  const log = (s: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${s}`)
  try {
    log(`N = ${N}, ${R} rounds; load average ${await loadAvg()}; cloud log in ${join(dir, 'cloud.log')}`)
    const env = cloudEnv(dir, await freePort(), await freePort(), { SVC_RATE_LIMIT: '100000000' })
    const { apiKey } = JSON.parse(await cli(env, ['bootstrap', '--workspace', 'Bench'])) as { apiKey: string }
    const cloud = await startCloud(env, join(dir, 'cloud.log'))
    const auth = { authorization: `Bearer ${apiKey}` }
    log(`cloud started (pid ${cloud.proc.pid}); pairing ${N} screens from ${Math.ceil(N / PER_ADDRESS)} loopback addresses`)
    const paired = await pairMany(cloud.base, apiKey, N, 16, (d) => log(`  ${d} paired`))
    const mediaId = await uploadImage(cloud.base, apiKey)
    const feed = expect(
      await call(`${cloud.base}/v1/cap-feeds`, { method: 'POST', headers: auth, body: { name: 'Bench', contentKind: 'media', contentId: mediaId } }),
      201,
      'create feed',
    ).body.data as { id: string; pushSecret: string }

    const devicesProc = forkScript(self, { BENCH_ROLE: 'devices' })
    const dev = channel(devicesProc)
    const connecting = dev.next('connected')
    dev.tell({ type: 'connect', url: paired[0]!.mqttUrl, creds: paired.map((p) => ({ id: p.screenId, password: p.deviceSecret })) })
    log(`connect storm: ${f1((await connecting).ms)} ms`)
    await sleep(5000) // presence writes and what the storm left behind settle

    /** Arms the devices for `match`, runs `act`, answers the last device's time from the act's start. */
    const timed = async (phase: string, match: Match, act: () => Promise<void>): Promise<number> => {
      const done = dev.next('done', 600_000, phase)
      const armed = dev.next('armed')
      dev.tell({ type: 'arm', phase, match })
      await armed
      const t0 = now()
      await act()
      return Math.max(...(await done).times) - t0
    }
    const cap: number[] = []
    const manual: number[] = []
    for (let r = 0; r < R; r++) {
      const runCap = async () => {
        const headline = `BENCH CAP ROUND ${r}`
        const id = `bench-${r}`
        let sent = ''
        cap.push(
          await timed(`cap-${r}`, { kind: 'emergency', token: headline }, async () => {
            const doc = alertDoc(id, headline, 'Alert')
            sent = /<sent>([^<]+)<\/sent>/.exec(doc)![1]!
            const a = expect(
              await call(`${cloud.base}/v1/cap-feeds/${feed.id}/alerts`, {
                method: 'POST',
                headers: { authorization: `Bearer ${feed.pushSecret}`, 'content-type': 'application/cap+xml' },
                raw: Buffer.from(doc),
              }),
              202,
              'push alert',
            )
            if (a.body.data.state !== 'started') throw new Error(`the alert was not started: ${a.text}`)
          }),
        )
        await timed(`cap-clear-${r}`, { kind: 'none' }, async () => {
          expect(
            await call(`${cloud.base}/v1/cap-feeds/${feed.id}/alerts`, {
              method: 'POST',
              headers: { authorization: `Bearer ${feed.pushSecret}`, 'content-type': 'application/cap+xml' },
              raw: Buffer.from(alertDoc(`bench-${r}-cancel`, '', 'Cancel', `${SENDER},${id},${sent}`)),
            }),
            202,
            'push cancel',
          )
        })
      }
      const runManual = async () => {
        const token = `BENCH MANUAL ROUND ${r}`
        let emgId = ''
        manual.push(
          await timed(`manual-${r}`, { kind: 'emergency', token }, async () => {
            emgId = expect(
              await call(`${cloud.base}/v1/emergencies`, {
                method: 'POST',
                headers: auth,
                body: { contentKind: 'media', contentId: mediaId, scopeKind: 'all', message: token },
              }),
              201,
              'emergency',
            ).body.data.id
          }),
        )
        await timed(`manual-clear-${r}`, { kind: 'none' }, async () => {
          expect(await call(`${cloud.base}/v1/emergencies/${emgId}/clear`, { method: 'POST', headers: auth }), 200, 'clear')
        })
      }
      if (r % 2 === 0) {
        await runCap()
        await runManual()
      } else {
        await runManual()
        await runCap()
      }
      log(`round ${r}: CAP ${f1(cap[r]!)} ms, manual ${f1(manual[r]!)} ms`)
    }
    const ended = dev.next('ended')
    dev.tell({ type: 'end' })
    await ended
    await stop(devicesProc, 'SIGTERM', 10_000)
    await stop(cloud.proc, 'SIGTERM', 30_000)
    const ratios = cap.map((c, i) => c / manual[i]!)
    console.log('')
    console.log(`| N = ${N}, SQLite, ${R} rounds (load average at the end ${await loadAvg()}) | median | each |`)
    console.log('| --- | --- | --- |')
    console.log(`| pushed Extreme CAP alert: POST to the last device's desired state | ${f1(med(cap))} ms | ${cap.map(f1).join(', ')} |`)
    console.log(`| manual emergency to the same screens | ${f1(med(manual))} ms | ${manual.map(f1).join(', ')} |`)
    console.log(`| CAP / manual, per round | ${med(ratios).toFixed(2)}× | ${ratios.map((x) => x.toFixed(2)).join(', ')} |`)
  } finally {
    killAll()
  }
}

if (process.env.BENCH_ROLE === 'devices') devices()
else
  main().then(
    () => process.exit(0),
    (e) => {
      console.error(e)
      killAll()
      process.exit(1)
    },
  )
