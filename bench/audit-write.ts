// The audit log's cost on a write, alone: POST /v1/playlists on fresh clouds (`pnpm start`,
// file SQLite) with the audit log off and on, alternating, so the machine's load falls on
// both alike:
//   pnpm exec tsx bench/audit-write.ts   (env: ORDER=off,on,off,on  C=50 connections  D=8 s  SLEEP=12 s)
//   ROUNDS=8 D=4 pnpm exec tsx bench/audit-write.ts   (both clouds at once, loaded in turn: below)
//   TOGETHER=1 ROUNDS=16 D=4 …   (both clouds loaded at the same time in each round)
//   SAME=1 ROUNDS=16 D=4 …       (two clouds with the audit log off: the bench's own bias and noise)
// Each cloud waits SLEEP seconds after it answers (the schemas no request needed yet are
// compiled in the background meanwhile), is warmed for 2 s, then loaded for D seconds; the
// line per cloud is autocannon's req/s, median and total, and the cloud's CPU per request
// (user + system of all its threads, from /proc). A recorded run ends with /verify's answer.
// BENCH_CPU_PROF=<dir> profiles each measured run (bench/lib/cpu-prof.mjs).
import { spawn } from 'node:child_process'
import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { formatCi, median, medianCi } from './lib/bootstrap.js'
import { ROOT, cli, cloudEnv, expect, call, freePort, killAll, startCloud, stop, tempDir, track } from './lib/harness.js'
const D = Number(process.env.D ?? 8)
const C = Number(process.env.C ?? 50)
function ticks(file: string): number {
  const s = readFileSync(file, 'utf8')
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ')
  return (Number(f[11]) + Number(f[12])) * 1e4
}
/** The process's CPU so far in µs: all threads, and the main (JavaScript) thread alone. */
function cpuOf(pid: number): number {
  return ticks(`/proc/${pid}/stat`)
}
function mainCpuOf(pid: number): number {
  return ticks(`/proc/${pid}/task/${pid}/stat`)
}
async function cannon(url: string, headers: Record<string, string>, d: number, body: string) {
  const args = [join(ROOT, 'node_modules', 'autocannon', 'autocannon.js'), '-c', String(C), '-d', String(d), '-j', '-m', 'POST', '-b', body]
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}=${v}`)
  args.push(url)
  const c = track(spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] }))
  let out = ''
  c.stdout!.on('data', (x: Buffer) => (out += x))
  await new Promise((r) => c.once('exit', r))
  const j = JSON.parse(out.trim().split('\n').pop()!)
  return { rps: j.requests.average, p50: j.latency.p50, total: j.requests.total, non2xx: j.non2xx }
}
async function run(label: string, extra: Record<string, string>) {
  const dir = join(tempDir('svc-bench-audit-'), label)
  mkdirSync(dir, { recursive: true })
  const prof: Record<string, string> = process.env.BENCH_CPU_PROF
    ? { NODE_OPTIONS: `--import ${join(ROOT, 'bench', 'lib', 'cpu-prof.mjs')}`, BENCH_CPU_PROF: process.env.BENCH_CPU_PROF }
    : {}
  const env = cloudEnv(dir, await freePort(), await freePort(), { SVC_RATE_LIMIT: '1000000000', ...prof, ...extra })
  const { apiKey } = JSON.parse(await cli(env, ['bootstrap', '--workspace', 'Bench']))
  const cloud = await startCloud(env, join(dir, 'cloud.log'))
  await new Promise((r) => setTimeout(r, Number(process.env.SLEEP ?? 12) * 1000))
  const h = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }
  const body = JSON.stringify({ name: 'Bench playlist' })
  expect(await call(`${cloud.base}/v1/playlists`, { method: 'POST', headers: h, body: JSON.parse(body) }), 201, 'w')
  await cannon(`${cloud.base}/v1/playlists`, h, 2, body)
  if (process.env.BENCH_CPU_PROF) cloud.proc.kill('SIGWINCH')
  const c0 = cpuOf(cloud.proc.pid!)
  const m0 = mainCpuOf(cloud.proc.pid!)
  const r = await cannon(`${cloud.base}/v1/playlists`, h, D, body)
  const cpu = (cpuOf(cloud.proc.pid!) - c0) / r.total
  const main = (mainCpuOf(cloud.proc.pid!) - m0) / r.total
  if (process.env.BENCH_CPU_PROF) {
    cloud.proc.kill('SIGWINCH')
    await new Promise((r) => setTimeout(r, 2000))
  }
  if (extra.SVC_AUDIT !== 'off') {
    const v = await call(`${cloud.base}/v1/audit-log/verify`, { headers: h })
    console.log('verify', JSON.stringify(v.body))
  }
  await stop(cloud.proc)
  console.log(label, JSON.stringify(r), 'cpu us/req', Math.round(cpu), 'main thread', Math.round(main), 'other threads', Math.round(cpu - main))
}
/** A cloud started for ROUNDS mode: bootstrapped, answering, its key and the request's headers. */
async function boot(label: string, extra: Record<string, string>) {
  const dir = join(tempDir('svc-bench-audit-'), label)
  mkdirSync(dir, { recursive: true })
  const env = cloudEnv(dir, await freePort(), await freePort(), { SVC_RATE_LIMIT: '1000000000', ...extra })
  const { apiKey } = JSON.parse(await cli(env, ['bootstrap', '--workspace', 'Bench']))
  const cloud = await startCloud(env, join(dir, 'cloud.log'))
  const h = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }
  return { label, cloud, h }
}

if (process.env.ROUNDS) {
  // ROUNDS=n: one cloud with the audit log off and one with it on, started together and
  // loaded in turn, D seconds each, n times, in the order off, on, on, off, off, on… (so
  // neither is always the second of its pair while the tables grow): the machine's load
  // changes between seconds, not between a round and the next, so each pair is compared on
  // the same load. Printed: each round, then the median over the pairs of the ratio on ÷ off.
  const body = JSON.stringify({ name: 'Bench playlist' })
  // SAME=1: the second cloud runs with the audit log off too: the ratio the bench reads
  // between two like clouds (its own bias and noise on this machine).
  const clouds = [await boot('off', { SVC_AUDIT: 'off' }), await boot('on', process.env.SAME === '1' ? { SVC_AUDIT: 'off' } : {})]
  await new Promise((r) => setTimeout(r, Number(process.env.SLEEP ?? 12) * 1000))
  for (const c of clouds) {
    expect(await call(`${c.cloud.base}/v1/playlists`, { method: 'POST', headers: c.h, body: JSON.parse(body) }), 201, 'w')
    await cannon(`${c.cloud.base}/v1/playlists`, c.h, 2, body)
  }
  const ratios = { cpu: [] as number[], p50: [] as number[], rps: [] as number[], main: [] as number[], other: [] as number[] }
  for (let i = 0; i < Number(process.env.ROUNDS); i++) {
    const got: Record<string, { rps: number; p50: number; cpu: number; main: number; r: Awaited<ReturnType<typeof cannon>> }> = {}
    const load = async (c: (typeof clouds)[number]) => {
      const c0 = cpuOf(c.cloud.proc.pid!)
      const m0 = mainCpuOf(c.cloud.proc.pid!)
      const r = await cannon(`${c.cloud.base}/v1/playlists`, c.h, D, body)
      const main = (mainCpuOf(c.cloud.proc.pid!) - m0) / r.total
      got[c.label] = { rps: r.rps, p50: r.p50, cpu: (cpuOf(c.cloud.proc.pid!) - c0) / r.total, main, r }
    }
    // TOGETHER=1: both clouds loaded at the same time (each by its own autocannon), so every
    // second of the machine's load falls on both; otherwise one after the other.
    if (process.env.TOGETHER === '1') await Promise.all(clouds.map(load))
    for (const c of i % 2 === 0 ? clouds : [...clouds].reverse()) {
      if (process.env.TOGETHER !== '1') await load(c)
      const g = got[c.label]!
      console.log(
        `round ${i + 1} ${c.label}`,
        JSON.stringify(g.r),
        'cpu us/req',
        Math.round(g.cpu),
        'main thread',
        Math.round(g.main),
        'other threads',
        Math.round(g.cpu - g.main),
      )
    }
    ratios.cpu.push(got.on!.cpu / got.off!.cpu)
    ratios.p50.push(got.on!.p50 / got.off!.p50)
    ratios.rps.push(got.on!.rps / got.off!.rps)
    ratios.main.push(got.on!.main - got.off!.main)
    ratios.other.push(got.on!.cpu - got.on!.main - (got.off!.cpu - got.off!.main))
  }
  if (process.env.SAME !== '1') {
    const v = await call(`${clouds[1]!.cloud.base}/v1/audit-log/verify`, { headers: clouds[1]!.h })
    console.log('verify', JSON.stringify(v.body))
  }
  const f3 = (x: number) => x.toFixed(3)
  console.log(
    `on ÷ off, median of ${ratios.cpu.length} pairs: CPU per request ${f3(median(ratios.cpu))}, median latency ${f3(median(ratios.p50))}, req/s ${f3(median(ratios.rps))}`,
  )
  // How far the medians can be trusted: one pair moves by several per cent here.
  console.log(`  CPU per request ${formatCi(medianCi(ratios.cpu))}; median latency ${formatCi(medianCi(ratios.p50))}`)
  console.log(
    `on − off, median of ${ratios.cpu.length} pairs: main thread ${Math.round(median(ratios.main))} µs per request, other threads (SQLite's, GC) ${Math.round(median(ratios.other))} µs`,
  )
  for (const c of clouds) await stop(c.cloud.proc)
} else {
  const order = (process.env.ORDER ?? 'on,off').split(',')
  for (const o of order) await run(o, o === 'off' ? { SVC_AUDIT: 'off' } : {})
}
killAll()
process.exit(0)
