// `pnpm demo --headless` end to end, as a newcomer would run it: a child process on a
// temporary data folder with free ports, to completion; every step must report success,
// the last line is the JSON verdict and the exit code is 0. The child is the demo's bundle
// (`bundledEntry`, built once per run), not tsx compiling its sources on the fly; its
// bounds are hang guards of minutes whose expiry names what was awaited.
import t from 'tap'
import { spawn } from 'node:child_process'
import { EventEmitter, once } from 'node:events'
import { mkdtempSync, rmSync, existsSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { HANG_GUARD_MS } from '@svc/shared/testing'
import { bundledEntry } from '@svc/shared/testing/bundle'

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
  const child = spawn(process.execPath, [await bundledEntry('demo/run.ts'), '--headless', '--data', data], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  child.stdout.on('data', (c: Buffer) => (out += c.toString()))
  child.stderr.on('data', (c: Buffer) => (err += c.toString()))
  const killer = setTimeout(() => child.kill('SIGKILL'), HANG_GUARD_MS)
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('close', (c, s) => resolve([c, s])))
  clearTimeout(killer)

  t.equal(signal, null, 'finished on its own (killed after 5 minutes waiting for its verdict otherwise)')
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
    const child = spawn(process.execPath, [await bundledEntry('demo/run.ts'), '--tcp', '--data', data], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    })
    t.teardown(() => {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL')
    })
    let out = ''
    const output = new EventEmitter()
    const take = (c: Buffer) => {
      out += c.toString()
      output.emit('data')
    }
    child.stdout.on('data', take)
    child.stderr.on('data', take)
    const closed = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('close', (c, s) => resolve([c, s])))
    // Up when it says so; or it ended; or the hang guard.
    const guard = AbortSignal.timeout(HANG_GUARD_MS)
    while (!/Press Ctrl-C/.test(out) && child.exitCode === null && !guard.aborted)
      await Promise.race([once(output, 'data', { signal: guard }).catch(() => {}), closed])
    t.match(out, /Press Ctrl-C to stop everything/, 'up and waiting (5 minutes at most waiting for "Press Ctrl-C")')
    // Ctrl-C, then at once what pnpm sends on (the SIGINT again, or a SIGTERM when npx is in front of it).
    process.kill(-child.pid!, 'SIGINT')
    process.kill(child.pid!, 'SIGTERM')
    const killer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), HANG_GUARD_MS)
    const [code, signal] = await closed
    clearTimeout(killer)
    t.same([code, signal], [0, null], `exit 0 (killed after 5 minutes waiting for the demo to stop otherwise; output: ${out.slice(-300)})`)
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
