// Shared pieces of the benchmarks (not tests): child processes that are always killed,
// the cloud started through its own CLI, HTTP calls that can pick their loopback source
// address, and pairing screens exactly as devices pair.
import { execFileSync, spawn, fork, type ChildProcess } from 'node:child_process'
import { openSync, closeSync, readFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import http from 'node:http'
import { createServer } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
export const now = (): number => performance.timeOrigin + performance.now()
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
export const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!
export const f1 = (n: number) => n.toFixed(1)

// ---- child processes: every one is killed when this process ends, however it ends ----
const children = new Set<ChildProcess>()
export function track<T extends ChildProcess>(c: T): T {
  children.add(c)
  c.once('exit', () => children.delete(c))
  return c
}
export function killAll(): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
}
const dirs = new Set<string>()
/** A fresh temporary directory, removed when this process ends, however it ends (kept with BENCH_KEEP=1, e.g. for the cloud's log). */
export function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix))
  dirs.add(d)
  return d
}
process.on('exit', () => {
  killAll()
  if (!process.env.BENCH_KEEP) for (const d of dirs) rmSync(d, { recursive: true, force: true })
})
for (const sig of ['SIGINT', 'SIGTERM'] as const)
  process.on(sig, () => {
    killAll()
    process.exit(130)
  })

/** Waits for a child to exit; SIGKILL after `graceMs`. */
export async function stop(c: ChildProcess, signal: NodeJS.Signals = 'SIGTERM', graceMs = 15_000): Promise<void> {
  if (c.exitCode !== null || c.signalCode !== null) return
  const exited = new Promise((r) => c.once('exit', r))
  c.kill(signal)
  const t = setTimeout(() => c.kill('SIGKILL'), graceMs)
  await exited
  clearTimeout(t)
}

/** This file's sibling script forked as a child with the tsx loader and an IPC channel. */
export function forkScript(file: string, env: Record<string, string> = {}, execArgv: string[] = []): ChildProcess {
  return track(fork(file, [], { env: { ...process.env, ...env }, execArgv: ['--import', 'tsx', ...execArgv], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }))
}

/** The bare Fastify baseline (bench/lib/bare-fastify.ts) in its own process, once it listens. */
export async function startBareFastify(): Promise<{ proc: ChildProcess; port: number }> {
  const port = await freePort()
  const proc = forkScript(join(ROOT, 'bench', 'lib', 'bare-fastify.ts'), { BENCH_PORT: String(port) })
  await new Promise<void>((resolve, reject) => {
    proc.once('message', () => resolve())
    proc.once('exit', (c) => reject(new Error(`bare fastify exited (${c})`)))
  })
  return { proc, port }
}

export async function freePort(): Promise<number> {
  const s = createServer()
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
  const port = (s.address() as { port: number }).port
  await new Promise((r) => s.close(r))
  return port
}

/** Resident set size of a process in bytes (Linux /proc). */
export function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Number(m[1]) * 1024 : NaN
}

/** A process's CPU time so far (user + system), in ms (Linux /proc; USER_HZ = 100). */
export function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
}

/**
 * Waits until the process has used under 5 % of a core for two 1-second windows in a row, at
 * most `limitMs`; resolves with the time it took.
 */
export async function settle(pid: number, limitMs: number): Promise<number> {
  const t0 = now()
  let quiet = 0
  let last = cpuMsOf(pid)
  while (quiet < 2 && now() - t0 < limitMs) {
    await sleep(1000)
    const cpu = cpuMsOf(pid)
    quiet = cpu - last < 50 ? quiet + 1 : 0
    last = cpu
  }
  return now() - t0
}

/**
 * A cloud's RSS after two full garbage collections (SIGPWR, bench/lib/gc-signal.mjs), each
 * given `gcWaitMs`: the smallest of five readings taken 200 ms apart.
 */
export async function steadyRss(pid: number, gcWaitMs: number): Promise<number> {
  for (let i = 0; i < 2; i++) {
    process.kill(pid, 'SIGPWR')
    await sleep(gcWaitMs)
  }
  let min = Infinity
  for (let i = 0; i < 5; i++, await sleep(200)) min = Math.min(min, rssOf(pid))
  return min
}

/** The open-files limit of a process, raised to `want` with prlimit; answers the limit it has. */
export function raiseNofile(pid: number, want: number): number {
  try {
    execFileSync('prlimit', [`--pid=${pid}`, `--nofile=${want}:${want}`], { stdio: 'ignore' })
  } catch {
    // not allowed: keep what it has
  }
  const m = /Max open files\s+(\d+)/.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'))
  return m ? Number(m[1]) : 0
}

export async function loadAvg(): Promise<string> {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
}

// ---- HTTP ----
const operatorAgent = new http.Agent({ keepAlive: true, maxSockets: 32 })

export interface Answer {
  status: number
  body: any // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string
}

/** One HTTP call. With `localAddress` it goes out on its own connection from that loopback address. */
export function call(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: unknown; raw?: Buffer; localAddress?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const u = new URL(url)
    const headers: Record<string, string> = { ...(opts.headers ?? {}) }
    let payload: Buffer | undefined = opts.raw
    if (opts.body !== undefined) {
      payload = Buffer.from(JSON.stringify(opts.body))
      headers['content-type'] ??= 'application/json'
    }
    if (payload) headers['content-length'] = String(payload.length)
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method: opts.method ?? 'GET',
        headers,
        ...(opts.localAddress ? { localAddress: opts.localAddress, agent: false } : { agent: operatorAgent }),
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          let body: unknown = null
          try {
            body = JSON.parse(text)
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode ?? 0, body, text })
        })
        res.on('error', reject)
      },
    )
    req.setTimeout(120_000, () => req.destroy(new Error(`timeout: ${opts.method ?? 'GET'} ${url}`)))
    req.on('error', reject)
    req.end(payload)
  })
}

export function expect(a: Answer, status: number, what: string): Answer {
  if (a.status !== status) throw new Error(`${what}: HTTP ${a.status} ${a.text.slice(0, 300)}`)
  return a
}

// ---- the cloud, started as `pnpm start` starts it ----
export interface Cloud {
  proc: ChildProcess
  base: string
  httpPort: number
  mqttPort: number
  env: Record<string, string>
}

export function cloudEnv(dataDir: string, httpPort: number, mqttPort: number, extra: Record<string, string> = {}): Record<string, string> {
  return { SVC_DATA_DIR: dataDir, SVC_HOST: '127.0.0.1', SVC_HTTP_PORT: String(httpPort), SVC_MQTT_PORT: String(mqttPort), ...extra }
}

/** `pnpm cloud <args>` (node scripts/cloud.mjs, the cloud's bundled CLI) to completion; answers its stdout. */
export async function cli(env: Record<string, string>, args: string[]): Promise<string> {
  const c = track(
    spawn(process.execPath, ['scripts/cloud.mjs', ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  )
  let out = ''
  c.stdout!.on('data', (d: Buffer) => (out += d.toString()))
  const code = await new Promise<number | null>((r) => c.once('exit', r))
  if (code !== 0) throw new Error(`pnpm cloud ${args.join(' ')} exited ${code}`)
  return out
}

/**
 * `pnpm start` (node scripts/cloud.mjs start: the bundle of cloud/src/cli.ts, run in the
 * launcher's own process, so the pid is the cloud's). The log (default level) goes to
 * `logFile`. Answers once GET /v1/status answers.
 */
export async function startCloud(env: Record<string, string>, logFile: string): Promise<Cloud> {
  const fd = openSync(logFile, 'a')
  const proc = track(spawn(process.execPath, ['scripts/cloud.mjs', 'start'], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', fd, fd] }))
  closeSync(fd)
  const httpPort = Number(env.SVC_HTTP_PORT)
  const base = `http://127.0.0.1:${httpPort}`
  const deadline = Date.now() + 120_000
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`the cloud exited (${proc.exitCode}); see ${logFile}`)
    try {
      if ((await call(`${base}/v1/status`)).status === 200) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the cloud did not answer within 120 s; see ${logFile}`)
    await sleep(100)
  }
  return { proc, base, httpPort, mqttPort: Number(env.SVC_MQTT_PORT), env }
}

// ---- pairing, as a device and an operator do it ----
export interface Paired {
  screenId: string
  deviceSecret: string
  mqttUrl: string
}

/**
 * Registrations per loopback source address: below the open registration route's
 * per-address limit (30 a minute), so N devices come from ceil(N / 25) addresses 127.x.y.z.
 */
export const PER_ADDRESS = 25
export function loopback(i: number): string {
  const n = Math.floor(i / PER_ADDRESS) + 2 // 127.0.0.2 onwards
  return `127.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`
}

/**
 * Pairs one screen: POST /v1/devices/register (from the device's address) → POST
 * /v1/screens/pair (the operator's key) → GET /v1/devices/register/<id> (the device's poll
 * secret) until `paired`; answers the device credentials.
 */
export async function pairOne(base: string, apiKey: string, i: number, name: string): Promise<Paired> {
  const localAddress = loopback(i)
  const reg = expect(
    await call(`${base}/v1/devices/register`, { method: 'POST', body: { model: 'bench', serialNumber: `SN${i}` }, localAddress }),
    201,
    'register',
  ).body.data
  expect(
    await call(`${base}/v1/screens/pair`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` }, body: { code: reg.pairingCode, name } }),
    201,
    'pair',
  )
  for (let tries = 0; tries < 50; tries++) {
    const p = expect(
      await call(`${base}/v1/devices/register/${reg.registrationId}`, { headers: { authorization: `Bearer ${reg.pollSecret}` }, localAddress }),
      200,
      'poll',
    ).body.data
    if (p.state === 'paired') return { screenId: p.screenId, deviceSecret: p.deviceSecret, mqttUrl: p.mqtt.url }
    await sleep(100)
  }
  throw new Error(`registration ${reg.registrationId} never paired`)
}

export async function pairMany(base: string, apiKey: string, n: number, concurrency = 16, log?: (done: number) => void): Promise<Paired[]> {
  const out: Paired[] = new Array(n)
  let next = 0
  let done = 0
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async () => {
      for (let i = next++; i < n; i = next++) {
        out[i] = await pairOne(base, apiKey, i, `Bench ${i}`)
        if (++done % 1000 === 0) log?.(done)
      }
    }),
  )
  return out
}

/** A valid 1×1 RGBA PNG. */
export const PNG_1x1 = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f000500020127efa3d50000000049454e44ae426082',
  'hex',
)

/** POST /v1/media/upload (multipart) of a real PNG; waits until the library says it is ready. */
export async function uploadImage(base: string, apiKey: string): Promise<string> {
  const boundary = `----bench${Date.now()}`
  const raw = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\nBench image\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench.png"\r\nContent-Type: image/png\r\n\r\n`),
    PNG_1x1,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ])
  const auth = { authorization: `Bearer ${apiKey}` }
  const item = expect(
    await call(`${base}/v1/media/upload`, { method: 'POST', headers: { ...auth, 'content-type': `multipart/form-data; boundary=${boundary}` }, raw }),
    201,
    'upload',
  ).body.data
  for (let tries = 0; tries < 300; tries++) {
    const m = expect(await call(`${base}/v1/media/${item.id}`, { headers: auth }), 200, 'media').body.data
    if (m.state === 'ready') return item.id as string
    if (m.state === 'failed') throw new Error(`the uploaded image failed processing: ${JSON.stringify(m)}`)
    await sleep(100)
  }
  throw new Error('the uploaded image never became ready')
}

/** How many screens GET /v1/screens calls online (all pages of 500). */
export async function countOnline(base: string, apiKey: string): Promise<{ online: number; total: number }> {
  let cursor: string | null = null
  let online = 0
  let total = 0
  do {
    const q: string = `limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`
    const page = expect(await call(`${base}/v1/screens?${q}`, { headers: { authorization: `Bearer ${apiKey}` } }), 200, 'screens').body as {
      data: { status: string }[]
      nextCursor?: string | null
    }
    for (const s of page.data) {
      total++
      if (s.status === 'online') online++
    }
    cursor = page.nextCursor ?? null
  } while (cursor)
  return { online, total }
}
