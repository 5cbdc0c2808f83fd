// `pnpm demo --headless` end to end, as a newcomer would run it: a child process on a
// temporary data folder with free ports, to completion; every step must report success,
// the last line is the JSON verdict and the exit code is 0.
import t from 'tap'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, existsSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

interface Verdict {
  ok: boolean
  steps: { step: string; ok: boolean; ms: number; detail: string }[]
}

t.test('pnpm demo --headless brings up cloud, players and panels, casts and powers on', async (t) => {
  const data = mkdtempSync(path.join(os.tmpdir(), 'svc-demo-test-'))
  t.teardown(() => rmSync(data, { recursive: true, force: true }))
  const env: NodeJS.ProcessEnv = { ...process.env, SVC_HTTP_PORT: '0', SVC_MQTT_PORT: '0', SVC_HOST: '127.0.0.1' }
  delete env.SVC_DATA_DIR
  const child = spawn(process.execPath, ['--import', 'tsx', 'demo/run.ts', '--headless', '--data', data], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (c: Buffer) => (out += c.toString()))
  child.stderr.on('data', (c: Buffer) => (err += c.toString()))
  const killer = setTimeout(() => child.kill('SIGKILL'), 50_000)
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('close', (c, s) => resolve([c, s])))
  clearTimeout(killer)

  t.equal(signal, null, 'finished on its own within 50 s')
  t.equal(code, 0, 'exit code 0')
  const lines = out.trim().split('\n')
  const last = lines.at(-1) ?? ''
  let verdict: Verdict | null = null
  try {
    verdict = JSON.parse(last) as Verdict
  } catch {
    t.fail(`the last line is not JSON: ${last}`)
  }
  if (!verdict) {
    t.comment(out, err)
    return
  }
  t.equal(verdict.ok, true, 'ok')
  t.equal(verdict.steps.length, 10, 'every step ran')
  for (const s of verdict.steps) t.ok(s.ok, `✔ ${s.step}: ${s.detail}`)
  const names = verdict.steps.map((s) => s.step).join(' | ')
  t.match(names, /pair the players/)
  t.match(names, /cast the playlist/)
  t.match(names, /power on every panel/)
  const serial = verdict.steps.find((s) => s.step.startsWith('power on'))!
  t.match(serial.detail, /Samsung MDC \[AA 11 01 01 01 14\] → ok/)
  t.match(serial.detail, /LG .* → ok/)
  t.match(serial.detail, /NEC .* → ok/)
  t.match(out, /API key\s+ak_us_live_/)
  t.match(out, /\/v1\/docs/)
  t.match(out, /curl /)
  t.notMatch(out, /"level":50/, 'the cloud logged no error')
  t.ok(existsSync(path.join(data, 'svc.sqlite')), 'the cloud used the demo data folder')
  t.ok(existsSync(path.join(data, 'players', 'screen-1', 'credentials.json')), 'players keep their files under players/')
})

t.test(
  'pnpm demo (not headless) runs until Ctrl-C: SIGINT to its process group, and the echo wrappers send after it, stop everything with exit 0',
  async (t) => {
    const data = mkdtempSync(path.join(os.tmpdir(), 'svc-demo-test-'))
    t.teardown(() => rmSync(data, { recursive: true, force: true }))
    const env: NodeJS.ProcessEnv = { ...process.env, SVC_HTTP_PORT: '0', SVC_MQTT_PORT: '0', SVC_HOST: '127.0.0.1' }
    delete env.SVC_DATA_DIR
    // Its own process group, as a terminal runs a command: Ctrl-C reaches the demo and every
    // process it started (players, panels, socat) at once.
    const child = spawn(process.execPath, ['--import', 'tsx', 'demo/run.ts', '--tcp', '--data', data], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    })
    t.teardown(() => {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL')
    })
    let out = ''
    child.stdout.on('data', (c: Buffer) => (out += c.toString()))
    child.stderr.on('data', (c: Buffer) => (out += c.toString()))
    const closed = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('close', (c, s) => resolve([c, s])))
    const deadline = Date.now() + 50_000
    while (!/Press Ctrl-C/.test(out) && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
    t.match(out, /Press Ctrl-C to stop everything/, 'up and waiting')
    // Ctrl-C, then at once what pnpm sends on (the SIGINT again, or a SIGTERM when npx is in front of it).
    process.kill(-child.pid!, 'SIGINT')
    process.kill(child.pid!, 'SIGTERM')
    const killer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 30_000)
    const [code, signal] = await closed
    clearTimeout(killer)
    t.same([code, signal], [0, null], `exit 0 (output: ${out.slice(-300)})`)
    t.match(out, /stopped\.\n$/, 'said so')
    let alive = true
    try {
      process.kill(-child.pid!, 0)
    } catch {
      alive = false
    }
    t.notOk(alive, 'nothing of the demo is left running')
  },
)
