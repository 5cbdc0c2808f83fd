// Cast fan-out at fleet size (not a test): the product path against a bare Aedes, each in
// its own process, with the same devices from a third process.
//   pnpm exec tsx bench/cast-fanout.ts [N=1000] [--restart] [--no-report] [--timeout=SECONDS]
//   pnpm exec tsx bench/cast-fanout.ts [N] --instances=2 --database-url=postgres://… (Redis: BENCH_REDIS_URL)
//
// --instances=2: one cloud of two processes (cli.ts start, one fresh PostgreSQL database,
// one Redis). In the same run the N devices connect first all to instance A (one instance
// serving them, B idle beside it), the cast is made on A and timed; then the cast is
// cleared, the devices disconnect and connect again split over A and B (even to A, odd to
// B), a new cast is made on A and timed. No bare-Aedes baseline in this mode.
//
// Product: the cloud started as `pnpm start` starts it (its CLI, a file SQLite database,
// the default broker persistence, the real content library); N screens paired through the
// API exactly as devices pair (register from loopback addresses 127.x.y.z, pair with the
// owner key, poll for the device credentials); one real PNG uploaded with POST
// /v1/media/upload; N devices (mqtt.js, clean: false, QoS 1, their own credentials)
// connect 100 at a time; once the cloud is quiet again (what the storm left behind is
// done), POST /v1/casts (scope all) and the time until the last device holds a desired
// state carrying that cast. Each device reports every desired state it gets as the agent
// does (`reported` with the version and what plays; --no-report turns that off), so GET
// /v1/casts/<id> counts the cast applied. With --restart: the cloud is stopped
// (SIGTERM) and started again with the devices connected; measured: the time until every
// device is connected again, and until every device holds its latest desired state again
// (a newer version than it held, sent by the new process, carrying the cast).
// Baseline: a bare Aedes (memory persistence, no authentication) in its own process
// (bench/lib/bare-aedes.ts), the same N clients as persistent QoS 1 subscribers to the same
// topics, the same connect storm, then one retained QoS 1 publish per screen topic with a
// payload of the size of the product's cast desired state.
//
// Times cross process boundaries as absolute high-resolution timestamps
// (performance.timeOrigin + performance.now()). Every child process is killed at the end,
// on failure and on the time limit.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { topics } from '@svc/shared/mqtt/index'
import { randomUUID } from 'node:crypto'
import { BATCH, forkFleet } from './lib/device-fleet.js'
import { databaseUrlArg, freshDatabase } from './lib/engine.js'
import {
  ROOT,
  call,
  countOnline,
  cli,
  cloudEnv,
  cpuMsOf,
  raiseNofile,
  expect,
  f1,
  forkScript,
  freePort,
  killAll,
  loadAvg,
  now,
  pairMany,
  pct,
  settle,
  sleep,
  startCloud,
  steadyRss,
  stop,
  tempDir,
  uploadImage,
  PER_ADDRESS,
  type Cloud,
} from './lib/harness.js'

async function main(): Promise<void> {
  if (process.argv.some((a) => a === '--instances=2')) return twoInstances()
  const args = process.argv.slice(2)
  const N = Number(args.find((a) => /^\d+$/.test(a)) ?? 1000)
  const restart = args.includes('--restart')
  // --no-report: the devices do not report their applied state (as before the reporting devices)
  const report = !args.includes('--no-report')
  const limitS = Number(args.find((a) => a.startsWith('--timeout='))?.slice(10) ?? 1800)
  setTimeout(() => {
    console.error(`time limit of ${limitS} s reached; stopping`)
    killAll()
    process.exit(1)
  }, limitS * 1000).unref()

  const dir = tempDir('svc-bench-fanout-')
  const log = (s: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${s}`)
  try {
    log(`N = ${N}; load average ${await loadAvg()}; cloud log in ${join(dir, 'cloud.log')} (kept with BENCH_KEEP=1)`)
    // ---- product ----
    // BENCH_CPU_PROF=<dir>: the cloud's CPU is profiled during the connect storm, the cast
    // phase and (the new process) the restart, one file each (bench/lib/cpu-prof.mjs).
    const profDir = process.env.BENCH_CPU_PROF
    // bench/lib/gc-signal.mjs (bench only): SIGPWR makes the cloud collect its garbage, so
    // its RSS is read after a full GC (steadyRss), not wherever V8's heap happens to stand.
    const preload = [join(ROOT, 'bench', 'lib', 'gc-signal.mjs'), ...(profDir ? [join(ROOT, 'bench', 'lib', 'cpu-prof.mjs')] : [])]
    const prof: Record<string, string> = {
      NODE_OPTIONS: [process.env.NODE_OPTIONS ?? '', ...preload.map((f) => `--import ${f}`)].join(' ').trim(),
      ...(profDir ? { BENCH_CPU_PROF: profDir } : {}),
    }
    const env = cloudEnv(dir, await freePort(), await freePort(), { SVC_RATE_LIMIT: '100000000', ...prof })
    const { apiKey } = JSON.parse(await cli(env, ['bootstrap', '--workspace', 'Bench'])) as { apiKey: string }
    // What the machine must hold: the open files of the cloud, the device process and the bare
    // broker (one per connection each), and their memory (a rough allowance of 70 KiB per
    // screen for the cloud and the device process together: about 20 KiB per connected screen
    // in the cloud, the rest the mqtt.js clients and the states they hold).
    const memNeed = N * 70 * 1024
    const memAvailable = Number(/MemAvailable:\s+(\d+) kB/.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1] ?? 0) * 1024
    if (memAvailable < memNeed) {
      console.log(
        `stopped: ${N} screens need about ${f1(memNeed / 2 ** 30)} GiB of memory (cloud and devices), the machine has ${f1(memAvailable / 2 ** 30)} GiB available`,
      )
      return
    }
    let cloud: Cloud = await startCloud(env, join(dir, 'cloud.log'))
    const limited = (what: string, pid: number) => {
      const has = raiseNofile(pid, N + 2000)
      return has < N + 200
        ? `stopped: the ${what}'s open-files limit is ${has}, ${N} connections need about ${N + 2000} (raise it: prlimit --nofile as root, LimitNOFILE)`
        : null
    }
    const cloudLimit = limited('cloud', cloud.proc.pid!)
    if (cloudLimit) {
      console.log(cloudLimit)
      return
    }
    log(`cloud started (pid ${cloud.proc.pid}); pairing ${N} screens from ${Math.ceil(N / PER_ADDRESS)} loopback addresses`)
    const p0 = now()
    const paired = await pairMany(cloud.base, apiKey, N, 16, (d) => log(`  ${d} paired`))
    log(`paired ${N} in ${f1((now() - p0) / 1000)} s`)
    const mediaId = await uploadImage(cloud.base, apiKey)
    log(`uploaded ${mediaId}`)
    const url = paired[0]!.mqttUrl
    if (!url.startsWith('mqtt://127.0.0.1:')) throw new Error(`unexpected device MQTT url ${url}`)

    const { proc: devicesProc, channel: dev } = forkFleet()
    await sleep(500)
    const fleetLimit = limited('device process', devicesProc.pid!)
    if (fleetLimit) {
      console.log(fleetLimit)
      return
    }
    const rssIdle = await steadyRss(cloud.proc.pid!, 300)
    const connecting = dev.next('connected')
    if (profDir) cloud.proc.kill('SIGWINCH')
    const stormCpu0 = cpuMsOf(cloud.proc.pid!)
    dev.tell({ type: 'connect', url, creds: paired.map((p) => ({ id: p.screenId, password: p.deviceSecret })), report })
    const conn = await connecting
    const stormCpu = cpuMsOf(cloud.proc.pid!) - stormCpu0
    log(`product connect storm: ${f1(conn.ms)} ms`)
    await sleep(2000) // presence writes and session bookkeeping settle
    if (profDir) cloud.proc.kill('SIGWINCH')
    // What the storm left behind (screen.online events, alert evaluation, webhook enqueues)
    // runs to its end before the cast, so the cast is measured alone, as the bare one is.
    const settledMs = await settle(cloud.proc.pid!, 180_000)
    log(`cloud quiet again ${f1(settledMs)} ms after that`)
    const rssConnected = await steadyRss(cloud.proc.pid!, 300)
    log(`cloud RSS after a full GC: ${f1(rssIdle / 2 ** 20)} MiB paired, ${f1(rssConnected / 2 ** 20)} MiB with the devices connected`)

    let done = dev.next('done')
    const armed = dev.next('armed')
    dev.tell({ type: 'arm', phase: 'cast', match: { kind: 'cast', contentId: mediaId } })
    await armed
    if (profDir) {
      cloud.proc.kill('SIGWINCH')
      await sleep(200)
    }
    const castCpu0 = cpuMsOf(cloud.proc.pid!)
    const c0 = now()
    const res = expect(
      await call(`${cloud.base}/v1/casts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}` },
        body: { contentKind: 'media', contentId: mediaId, scopeKind: 'all' },
      }),
      201,
      'cast',
    )
    const castAnswerMs = now() - c0
    const castRun = await done
    const castCpu = cpuMsOf(cloud.proc.pid!) - castCpu0
    if (profDir) {
      await sleep(1000) // what the cloud still does after the last device holds the cast
      cloud.proc.kill('SIGWINCH')
      await sleep(1000)
    }
    const castLat = castRun.times.map((t) => t - c0).sort((a, b) => a - b)
    const castSizes = [...castRun.sizes].sort((a, b) => a - b)
    const payloadBytes = pct(castSizes, 50)
    log(`cast ${res.body.data.id}: answered ${f1(castAnswerMs)} ms, last device ${f1(castLat[castLat.length - 1]!)} ms; desired state ${payloadBytes} bytes`)
    // the caller's view: GET /v1/casts/<id> counts it published to every screen, then applied
    // (the devices report the version they applied, as the agent does)
    let delivery: { targeted: number; published: number; applied: number } | null = null
    let deliveredMs: number | null = null
    let appliedMs: number | null = null
    while (now() - c0 < castLat[castLat.length - 1]! + 120_000) {
      delivery = expect(await call(`${cloud.base}/v1/casts/${res.body.data.id}`, { headers: { authorization: `Bearer ${apiKey}` } }), 200, 'get cast').body.data
        .delivery
      if (delivery?.published === N) deliveredMs ??= now() - c0
      if (!report && deliveredMs !== null) break // nothing will be applied
      if (delivery?.applied === N) {
        appliedMs = now() - c0
        break
      }
      await sleep(100)
    }
    log(
      `delivery ${JSON.stringify(delivery)}; published to all at ${deliveredMs === null ? '—' : f1(deliveredMs)} ms, applied by all at ${appliedMs === null ? '—' : f1(appliedMs)} ms`,
    )

    let restartMs: number | null = null
    let restartStopMs: number | null = null
    let restartUpMs: number | null = null
    let restartOnlineMs: number | null = null
    let restartHoldMs: number | null = null
    if (restart) {
      done = dev.next('done', 600_000, 'restart')
      const armedR = dev.next('armed')
      dev.tell({ type: 'arm-reconnect', phase: 'restart' })
      await armedR
      // and each device gets its latest desired state again from the restarted cloud (the
      // broker keeps nothing): a newer version than it held, still carrying the cast
      const doneHold = dev.next('done', 900_000, 'hold')
      const armedH = dev.next('armed')
      dev.tell({ type: 'arm', phase: 'hold', match: { kind: 'cast-since-restart', contentId: mediaId } })
      await armedH
      const r0 = now()
      await stop(cloud.proc, 'SIGTERM', 30_000)
      restartStopMs = now() - r0
      cloud = await startCloud(env, join(dir, 'cloud.log'))
      restartUpMs = now() - r0
      const again = limited('restarted cloud', cloud.proc.pid!)
      if (again) throw new Error(again)
      if (profDir) cloud.proc.kill('SIGWINCH') // the new process, from answering until every device holds its state
      const back = await done
      restartMs = Math.max(...back.times) - r0
      // the cloud's own view: every screen online again
      for (let tries = 0; ; tries++) {
        const { online, total } = await countOnline(cloud.base, apiKey)
        if (online === N && total === N) break
        if (tries >= 240) throw new Error(`after the restart only ${online} of ${total} screens are online`)
        await sleep(500)
      }
      restartOnlineMs = now() - r0
      const held = await doneHold
      restartHoldMs = Math.max(...held.times) - r0
      if (profDir) {
        cloud.proc.kill('SIGWINCH')
        await sleep(1000)
      }
      log(
        `restart: stopped in ${f1(restartStopMs)} ms, answering again at ${f1(restartUpMs)} ms; all ${N} devices connected again at ${f1(restartMs)} ms, all online per the API at ${f1(restartOnlineMs)} ms, all holding their latest state again at ${f1(restartHoldMs)} ms (from the stop)`,
      )
    }
    const ended = dev.next('ended')
    dev.tell({ type: 'end' })
    const { regressions } = await ended
    await stop(cloud.proc, 'SIGTERM', 30_000)

    // ---- baseline: bare Aedes in its own process ----
    const bport = await freePort()
    const bare = forkScript(join(ROOT, 'bench', 'lib', 'bare-aedes.ts'), { BENCH_PORT: String(bport) })
    await new Promise<void>((resolve, reject) => {
      bare.once('message', () => resolve())
      bare.once('exit', (c) => reject(new Error(`bare aedes exited (${c})`)))
    })
    const bareLimit = limited('bare broker', bare.pid!)
    if (bareLimit) throw new Error(bareLimit)
    const bconnecting = dev.next('connected')
    const bStormCpu0 = cpuMsOf(bare.pid!)
    dev.tell({ type: 'connect', url: `mqtt://127.0.0.1:${bport}`, creds: paired.map((p) => ({ id: p.screenId, password: undefined })), report })
    const bconn = await bconnecting
    const bStormCpu = cpuMsOf(bare.pid!) - bStormCpu0
    log(`bare connect storm: ${f1(bconn.ms)} ms`)
    // Two publishes to every screen topic. A padded payload of the same size, which the
    // devices do not report. And what the product sent them: the cast's desired state, each
    // with its own screen id, so they do what they did for the product (parse it, decide what
    // plays, report it at QoS 1; the bare broker takes the reports and routes them nowhere):
    // the same clients doing the same work, the ratio the fan-out target is read against.
    const bareCast = async (phase: string, min: number, msg: Record<string, unknown>) => {
      const finished = dev.next('done', 600_000, phase)
      const armed = dev.next('armed')
      dev.tell({ type: 'arm', phase, match: { kind: 'version', min } })
      await armed
      const cpu0 = cpuMsOf(bare.pid!)
      const t0 = now()
      bare.send({ type: 'publish', topics: paired.map((p) => topics.desired(p.screenId)), ...msg })
      const run = await finished
      return {
        cpuMs: cpuMsOf(bare.pid!) - cpu0,
        lat: run.times.map((t) => t - t0).sort((a, b) => a - b),
        size: pct(
          [...run.sizes].sort((a, b) => a - b),
          50,
        ),
      }
    }
    // The silent one first (as the baseline of earlier runs, on a fresh broker); the reporting
    // one second, on a broker already warmed by it (if anything, in the baseline's favour).
    const bareSilent = await bareCast('bare-silent', 1, { payloadBytes, version: 1 })
    // Its own version when that is above the silent one's (the same bytes); 2 otherwise.
    const sampleVersion = (JSON.parse(castRun.sample) as { version: number }).version
    const v2 = Math.max(2, sampleVersion)
    const text = v2 === sampleVersion ? castRun.sample : castRun.sample.replace(/"version":\d+/, `"version":${v2}`)
    const bareReporting = await bareCast('bare', v2, { template: { text, screenId: paired[0]!.screenId } })
    const bareLat = bareReporting.lat
    const bareSize = bareReporting.size
    const bended = dev.next('ended')
    dev.tell({ type: 'end' })
    await bended
    bare.send({ type: 'close' })
    await stop(bare, 'SIGTERM', 10_000)
    await stop(devicesProc, 'SIGTERM', 10_000)

    // ---- report ----
    const last = (xs: number[]) => xs[xs.length - 1]!
    const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`
    const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`
    console.log('')
    console.log(`cast fan-out, N = ${N} screens (load average at the end: ${await loadAvg()})`)
    console.log(`| | product | bare Aedes | ratio |`)
    console.log(`| --- | --- | --- | --- |`)
    console.log(`| connect storm, ${BATCH} at a time | ${s(conn.ms)} | ${s(bconn.ms)} | ${ratio(conn.ms, bconn.ms)} |`)
    console.log(`| … the broker process's CPU time during the storm | ${s(stormCpu)} | ${s(bStormCpu)} | ${ratio(stormCpu, bStormCpu)} |`)
    console.log(`| … the cloud quiet again (its CPU under 5 % for 2 s), from 2 s after the storm | ${s(settledMs)} | | |`)
    console.log(`| one cast, scope all: last screen holds it | ${s(last(castLat))} | ${s(last(bareLat))} | ${ratio(last(castLat), last(bareLat))} |`)
    console.log(
      `| … the broker process's CPU time until the last screen holds it | ${s(castCpu)} | ${s(bareReporting.cpuMs)} | ${ratio(castCpu, bareReporting.cpuMs)} |`,
    )
    console.log(`| one cast: median screen holds it | ${s(pct(castLat, 50))} | ${s(pct(bareLat, 50))} | ${ratio(pct(castLat, 50), pct(bareLat, 50))} |`)
    console.log(
      `| … last / median screen, against a bare Aedes whose devices do not report (a padded payload) | | ${s(last(bareSilent.lat))} / ${s(pct(bareSilent.lat, 50))} | ${ratio(last(castLat), last(bareSilent.lat))} / ${ratio(pct(castLat, 50), pct(bareSilent.lat, 50))} |`,
    )
    console.log(`| \`POST /v1/casts\` answered | ${s(castAnswerMs)} | — | — |`)
    console.log(
      `| \`GET /v1/casts/<id>\` delivery | ${delivery ? `targeted ${delivery.targeted}, published ${delivery.published}, applied ${delivery.applied}` : '—'}; published = N at ${deliveredMs === null ? '—' : s(deliveredMs)}, applied = N at ${appliedMs === null ? '—' : s(appliedMs)} | | |`,
    )
    console.log(`| desired-state payload (median bytes) | ${payloadBytes} | ${bareSize} | |`)
    console.log(
      `| cloud RSS after a full GC, paired / with devices connected (storm settled) | ${f1(rssIdle / 2 ** 20)} / ${f1(rssConnected / 2 ** 20)} MiB (${f1((rssConnected - rssIdle) / N / 1024)} KiB per connected screen; ${f1(rssConnected / N / 1024)} KiB per screen all told) | | |`,
    )
    if (restartMs !== null) {
      console.log(`| cloud restart with ${N} connected: stop (SIGTERM) / answering again | ${s(restartStopMs!)} / ${s(restartUpMs!)} | | |`)
      console.log(`| … all devices connected again | ${s(restartMs)} | | ${ratio(restartMs, bconn.ms)} of the bare storm |`)
      console.log(
        `| … all devices hold their latest state again (a newer version from the new process, with the cast) | ${s(restartHoldMs!)} | | ${ratio(restartHoldMs!, bconn.ms)} of the bare storm |`,
      )
      console.log(
        `| … the same, from the moment the new process answers | ${s(restartHoldMs! - restartUpMs!)} | | ${ratio(restartHoldMs! - restartUpMs!, bconn.ms)} of the bare storm |`,
      )
      console.log(`| … all screens online per \`GET /v1/screens\` | ${s(restartOnlineMs!)} | | ${ratio(restartOnlineMs!, bconn.ms)} of the bare storm |`)
    }
    console.log(`| devices that received an older desired version after a newer one | ${regressions} | | |`)
  } finally {
    killAll()
  }
}

/** The --instances=2 run: the same devices on one instance, then split over two, one cast each. */
async function twoInstances(): Promise<void> {
  const databaseUrl = databaseUrlArg()
  const redisUrl = process.env.BENCH_REDIS_URL || null
  if (!databaseUrl || !redisUrl) throw new Error('--instances=2 needs --database-url=postgres://… and BENCH_REDIS_URL=redis://…')
  const args = process.argv.slice(2)
  const N = Number(args.find((a) => /^\d+$/.test(a)) ?? 1000)
  const limitS = Number(args.find((a) => a.startsWith('--timeout='))?.slice(10) ?? 1800)
  setTimeout(() => {
    console.error(`time limit of ${limitS} s reached; stopping`)
    killAll()
    process.exit(1)
  }, limitS * 1000).unref()
  const log = (s: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${s}`)
  const db = await freshDatabase(databaseUrl)
  try {
    const media = tempDir('svc-bench-media-')
    const shared = {
      SVC_DATABASE_URL: db.url,
      SVC_REDIS_URL: redisUrl,
      SVC_REDIS_PREFIX: `bench-${randomUUID()}:`,
      SVC_MEDIA_DIR: media,
      SVC_RATE_LIMIT: '100000000',
    }
    const dirA = tempDir('svc-bench-a-')
    const dirB = tempDir('svc-bench-b-')
    const envA = cloudEnv(dirA, await freePort(), await freePort(), shared)
    const envB = cloudEnv(dirB, await freePort(), await freePort(), shared)
    log(`N = ${N}; load average ${await loadAvg()}; logs in ${dirA} and ${dirB}`)
    const a = await startCloud(envA, join(dirA, 'cloud.log'))
    const b = await startCloud(envB, join(dirB, 'cloud.log'))
    const { apiKey } = JSON.parse(await cli({ ...envA, SVC_DATA_DIR: tempDir('svc-bench-cli-') }, ['bootstrap', '--workspace', 'Bench'])) as { apiKey: string }
    const paired = await pairMany(a.base, apiKey, N, 16, (d) => log(`  ${d} paired`))
    const mediaId = await uploadImage(a.base, apiKey)
    const creds = paired.map((p) => ({ id: p.screenId, password: p.deviceSecret }))
    const { proc: devicesProc, channel: dev } = forkFleet()
    const auth = { authorization: `Bearer ${apiKey}` }
    const urlA = `mqtt://127.0.0.1:${a.mqttPort}`
    const urlB = `mqtt://127.0.0.1:${b.mqttPort}`

    const round = async (label: string, url: string | string[]) => {
      const connecting = dev.next('connected')
      dev.tell({ type: 'connect', url, creds, report: !process.argv.includes('--no-report') })
      const conn = await connecting
      log(`${label}: connect storm ${f1(conn.ms)} ms`)
      await sleep(2000)
      const done = dev.next('done', 600_000, label)
      const armed = dev.next('armed')
      dev.tell({ type: 'arm', phase: label, match: { kind: 'cast', contentId: mediaId } })
      await armed
      const c0 = now()
      const res = expect(
        await call(`${a.base}/v1/casts`, { method: 'POST', headers: auth, body: { contentKind: 'media', contentId: mediaId, scopeKind: 'all' } }),
        201,
        'cast',
      )
      const answered = now() - c0
      const lat = (await done).times.map((t) => t - c0).sort((x, y) => x - y)
      log(`${label}: cast answered ${f1(answered)} ms, last device ${f1(lat[lat.length - 1]!)} ms`)
      expect(await call(`${a.base}/v1/casts/${res.body.data.id}/clear`, { method: 'POST', headers: auth }), 200, 'clear')
      await sleep(1000)
      const ended = dev.next('ended')
      dev.tell({ type: 'end' })
      await ended
      await sleep(2000)
      return { connectMs: conn.ms, lastMs: lat[lat.length - 1]!, medianMs: pct(lat, 50), answered }
    }
    // BENCH_ORDER=two-first runs the split round first (to see what the order itself costs: warm-up, caches).
    const twoFirst = process.env.BENCH_ORDER === 'two-first'
    const two0 = twoFirst ? await round('two', [urlA, urlB]) : null
    const one = await round('one', urlA)
    const two = two0 ?? (await round('two', [urlA, urlB]))
    await stop(devicesProc, 'SIGTERM', 10_000)
    await stop(b.proc, 'SIGTERM', 30_000)
    await stop(a.proc, 'SIGTERM', 30_000)
    const sec = (ms: number) => `${(ms / 1000).toFixed(2)} s`
    console.log('')
    console.log(
      `cast fan-out over instances, N = ${N} screens, PostgreSQL + Redis, ${twoFirst ? 'split round first' : 'one-instance round first'} (load average at the end: ${await loadAvg()})`,
    )
    console.log('| | one instance (A) | split over A and B | two / one |')
    console.log('| --- | --- | --- | --- |')
    console.log(`| connect storm, ${BATCH} at a time | ${sec(one.connectMs)} | ${sec(two.connectMs)} | ${(two.connectMs / one.connectMs).toFixed(2)} |`)
    console.log(`| one cast made on A: last screen holds it | ${sec(one.lastMs)} | ${sec(two.lastMs)} | ${(two.lastMs / one.lastMs).toFixed(2)} |`)
    console.log(`| one cast: median screen holds it | ${sec(one.medianMs)} | ${sec(two.medianMs)} | ${(two.medianMs / one.medianMs).toFixed(2)} |`)
    console.log(`| \`POST /v1/casts\` answered | ${sec(one.answered)} | ${sec(two.answered)} | |`)
  } finally {
    killAll()
    await db.drop().catch(() => undefined)
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
