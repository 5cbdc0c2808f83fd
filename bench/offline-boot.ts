// The offline boot: a paired agent that has cached what it plays, started while its cloud
// cannot be reached (as at a player's boot with the cable out), until its player page
// answers `/state` with the cached playlist. Target: within 3 s of the start (what
// agent/test/pack/offline.test.ts checks happens, without timing it).
// Set-up: a real cloud in this process and a file server for the playlist's picture; the
// agent pairs online, caches the file, and is stopped; the cloud is then closed, so every
// sample's broker connection is refused. Each sample starts the program afresh on the same
// data folder and polls its player page every 10 ms. Prints each sample, then the median
// and the worst against the target.
// The program is the agent's CLI bundled from the repository (what the tests start), or a
// packed agent's bin/svc-agent when given (`agent pack`, then untar).
// Run: npx tsx bench/offline-boot.ts [samples=10] [path/to/svc-agent/bin/svc-agent]
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { topics } from '@svc/shared/mqtt/index'
import { bundledEntry } from '@svc/shared/testing/bundle'
import type { Test } from 'tap'
import { fileServer, solidPng } from '../agent/test/browser/chromium.js'
import { startCloud } from '../agent/test/cloud.js'

const SAMPLES = Number(process.argv[2] ?? 10)
const PACKED = process.argv[3]
const TARGET_MS = 3000

// The test helpers take a tap Test for their clean-up; here they run at the end.
const cleanups: Array<() => unknown> = []
const host = { after: (fn: () => unknown) => cleanups.push(fn), teardown: (fn: () => unknown) => cleanups.push(fn) } as unknown as Test

const program = PACKED ? [PACKED] : [process.execPath, await bundledEntry('agent/src/cli.ts')]
const data = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-offline-boot-'))

function start(args: string[]): { child: ChildProcess; lines: string[]; exited: Promise<unknown> } {
  const child = spawn(program[0]!, [...program.slice(1), 'start', ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
  const lines: string[] = []
  createInterface({ input: child.stdout! }).on('line', (l) => lines.push(l))
  return { child, lines, exited: new Promise((r) => child.once('exit', r)) }
}

async function poll<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, everyMs = 10): Promise<T> {
  for (const end = Date.now() + 120_000; ; await new Promise((r) => setTimeout(r, everyMs))) {
    const v = await Promise.resolve()
      .then(fn)
      .catch(() => undefined)
    if (v !== undefined) return v
    if (Date.now() > end) throw new Error(`gave up after 2 minutes waiting for ${what}`)
  }
}

async function freePort(): Promise<number> {
  const srv = net.createServer()
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()))
  const { port } = srv.address() as net.AddressInfo
  await new Promise((r) => srv.close(r))
  return port
}

type State = { type: string; content?: { items?: Array<{ url: string }> } }
const cached = (s: State) => s.type === 'playing' && s.content?.items?.[0]?.url.startsWith('/media/')
const stateAt = async (port: number) => (await (await fetch(`http://127.0.0.1:${port}/state`)).json()) as State

try {
  const media = await fileServer(host, { 'red.png': { body: solidPng(64, 36, [230, 20, 20]), type: 'image/png' } })
  const cloud = await startCloud(host)
  const port = await freePort()
  const args = ['--cloud', cloud.base, '--data', data, '--player-port', String(port)]

  // Online once: pairs, receives the playlist, caches its file.
  const online = start(args)
  const json = () => online.lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>)
  const code = await poll('the pairing code', () => json().find((l) => l.msg === 'pairing code')?.pairingCode as string | undefined, 50)
  const screenId = await cloud.pair(code)
  await cloud.waitFor(topics.status(screenId), (p) => p.status === 'online', 120_000)
  await cloud.publish(topics.desired(screenId), {
    version: 7,
    screenId,
    timezone: 'UTC',
    assignment: {
      contentKind: 'playlist',
      contentId: 'pl_red',
      content: { name: 'Red', items: [{ contentKind: 'media', contentId: 'med_red', durationMs: 5000, url: media.url('red.png'), mimeType: 'image/png' }] },
    },
    schedule: null,
    casts: [],
    emergency: null,
    panel: null,
    generatedAt: new Date().toISOString(),
  })
  await poll('the playlist played from the cache', async () => (cached(await stateAt(port)) ? true : undefined), 50)
  online.child.kill('SIGTERM')
  await online.exited
  await cloud.close()

  const samples: number[] = []
  for (let i = 0; i < SAMPLES; i++) {
    const t0 = performance.now()
    const offline = start(args)
    await poll('the offline page playing the cached playlist', async () => (cached(await stateAt(port)) ? true : undefined))
    const ms = performance.now() - t0
    samples.push(ms)
    console.log(`sample ${i + 1}: ${Math.round(ms)} ms`)
    offline.child.kill('SIGTERM')
    await offline.exited
  }
  samples.sort((a, b) => a - b)
  const median = samples[Math.floor(samples.length / 2)]!
  const worst = samples.at(-1)!
  console.log(
    `offline boot to the cached playlist (${PACKED ? 'packed agent' : 'bundled agent CLI'}): median ${Math.round(median)} ms, worst ${Math.round(worst)} ms; target ${TARGET_MS} ms: ${worst <= TARGET_MS ? 'met' : 'MISSED'}`,
  )
} finally {
  for (const fn of cleanups.reverse())
    await Promise.resolve()
      .then(fn)
      .catch(() => undefined)
  fs.rmSync(data, { recursive: true, force: true })
}
