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
import { forkFleet, type Match } from './lib/device-fleet.js'
import {
  call,
  cli,
  cloudEnv,
  expect,
  f1,
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

    const { proc: devicesProc, channel: dev } = forkFleet()
    const connecting = dev.next('connected')
    dev.tell({ type: 'connect', url: paired[0]!.mqttUrl, creds: paired.map((p) => ({ id: p.screenId, password: p.deviceSecret })), report: true, tries: 5 })
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
        await timed(`cap-clear-${r}`, { kind: 'no-emergency' }, async () => {
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
        await timed(`manual-clear-${r}`, { kind: 'no-emergency' }, async () => {
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

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e)
    killAll()
    process.exit(1)
  },
)
