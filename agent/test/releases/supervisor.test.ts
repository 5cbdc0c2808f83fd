// The launcher's supervisor (agent/src/launcher/supervisor.ts) in-process, with fake agent
// programs: small scripts at <program>/lib/svc-agent.mjs that do what their behaviour.json
// says on each start (exit with a code, install an update and exit 75, confirm the trial,
// hang without confirming, wait for SIGUSR2 before exiting). The trial window and the
// confirmation polls run on a ManualClock: a test moves it past the window, or not at all.
import t, { type Test } from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { supervise, trialMsFrom } from '../../src/launcher/supervisor.js'
import { dataDirOf } from '../../src/launcher/main.js'
import { type ReleaseState, readState, stateFile, writeState } from '../../src/releases/state.js'
import { ManualClock } from '@svc/shared'
import type { ChildProcess } from 'node:child_process'
import { tempDir } from '../helpers.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

type Step =
  | { do: 'exit'; code: number }
  | { do: 'install'; version: string; dir: string; jobId: string; from: string }
  | { do: 'confirm'; code: number }
  | { do: 'hang' }

const FAKE = `import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
const dir = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
const { steps, runs } = JSON.parse(fs.readFileSync(path.join(dir, 'behaviour.json'), 'utf8'))
const file = process.env.SVC_AGENT_RELEASE_STATE
fs.appendFileSync(runs, JSON.stringify({ args: process.argv.slice(2), state: file, program: process.env.SVC_AGENT_PROGRAM, installed: process.env.SVC_AGENT_INSTALLED_VERSION }) + '\\n')
const n = fs.readFileSync(runs, 'utf8').trim().split('\\n').length
const step = steps[Math.min(n, steps.length) - 1]
const read = () => JSON.parse(fs.readFileSync(file, 'utf8'))
const write = (s) => { fs.writeFileSync(file + '.tmp', JSON.stringify(s)); fs.renameSync(file + '.tmp', file) }
if (step.do === 'exit') process.exit(step.code)
if (step.do === 'install') {
  let s
  try { s = read() } catch { s = { installed: process.env.SVC_AGENT_INSTALLED_VERSION, active: null, previous: null, trial: null, rolledBack: null } }
  // As the update job does: the unpacked release renamed into place, then the state.
  const to = path.join(path.dirname(file), step.dir)
  fs.mkdirSync(to, { recursive: true })
  fs.renameSync(step.from, path.join(to, 'svc-agent'))
  write({ ...s, previous: s.active, active: { version: step.version, dir: step.dir }, trial: { jobId: step.jobId, version: step.version, since: new Date().toISOString() } })
  process.exit(75)
}
if (step.do === 'confirm') {
  // Runs on until the test says (SIGUSR2, listened for before the test can see the confirmation), then exits with the step's code.
  process.on('SIGUSR2', () => process.exit(step.code))
  setInterval(() => {}, 1000)
  const s = read()
  s.trial.confirmedAt = new Date().toISOString()
  write(s)
}
if (step.do === 'hang') setInterval(() => {}, 1000)
`

/**
 * A fake program folder: package.json with the version, lib/svc-agent.mjs, behaviour.json
 * (its steps, and the file each start is recorded in: `runs`, default <version>.jsonl beside the data).
 */
function program(dir: string, version: string, steps: Step[], runsFile = path.join(dir, '..', `${version}.runs.jsonl`)): string {
  fs.mkdirSync(path.join(dir, 'lib'), { recursive: true })
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'svc-agent', version }))
  fs.writeFileSync(path.join(dir, 'lib', 'svc-agent.mjs'), FAKE)
  fs.writeFileSync(path.join(dir, 'behaviour.json'), JSON.stringify({ steps, runs: runsFile }))
  runFiles.set(dir, runsFile)
  return dir
}

const runFiles = new Map<string, string>()

function runs(dir: string): Array<{ args: string[]; state: string; program: string; installed: string }> {
  const f = runFiles.get(dir)!
  return fs.existsSync(f)
    ? fs
        .readFileSync(f, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
    : []
}

/** Polls `read` (every 20 ms) until it answers something; after HANG_GUARD_MS (a hang guard) fails naming `what`. */
async function waitFor<T>(read: () => T | undefined | null, what: string): Promise<T> {
  for (const end = Date.now() + HANG_GUARD_MS; ; await new Promise((r) => setTimeout(r, 20))) {
    const v = (() => {
      try {
        return read()
      } catch {
        return undefined
      }
    })()
    if (v !== undefined && v !== null) return v
    if (Date.now() > end) throw new Error(`gave up after ${HANG_GUARD_MS / 60_000} minutes waiting for ${what}`)
  }
}

function setup(t: Test) {
  const root = tempDir(t)
  const data = path.join(root, 'data')
  fs.mkdirSync(data)
  const lines: Array<Record<string, unknown>> = []
  const release = (name: string, version: string, steps: Step[]) =>
    program(path.join(data, 'releases', name, 'svc-agent'), version, steps, path.join(root, `${name}.runs.jsonl`))
  /** A release as downloaded and unpacked, not yet in place (an `install` step moves it there); answers where it will be. */
  const incoming = (name: string, version: string, steps: Step[]): string => {
    const runsFile = path.join(root, `${name}.runs.jsonl`)
    program(path.join(root, 'incoming', name), version, steps, runsFile)
    const dest = path.join(data, 'releases', name, 'svc-agent')
    runFiles.set(dest, runsFile)
    return dest
  }
  const clock = new ManualClock()
  /** Each child as the supervisor starts it, with its program's version. */
  const children: Array<{ child: ChildProcess; version: string }> = []
  const waiters: Array<() => void> = []
  /** The child of `version` (its `n`th start), once the supervisor has started it. */
  const childOf = async (version: string, n = 1): Promise<ChildProcess> => {
    for (;;) {
      const hit = children.filter((c) => c.version === version)[n - 1]
      if (hit) return hit.child
      await new Promise<void>((r) => waiters.push(r))
    }
  }
  const sup = (installed: string, trialMs = 400) =>
    supervise({
      installedDir: installed,
      dataDir: data,
      args: ['--cloud', 'http://x', '--data', data],
      trialMs,
      pollMs: 50,
      log: (l) => lines.push(l),
      handleSignals: false,
      clock,
      onChild: (child, p) => {
        children.push({ child, version: p.version })
        for (const w of waiters.splice(0)) w()
      },
    })
  return { root, data, lines, release, incoming, sup, clock, childOf, file: stateFile(data) }
}

t.test('no update ever: the installed program runs with the arguments and the environment; its exit code is the supervisor’s; nothing written', async (t) => {
  const s = setup(t)
  const installed = program(path.join(s.root, 'opt'), '1.0.0', [{ do: 'exit', code: 3 }])
  t.equal(await s.sup(installed), 3)
  t.same(runs(installed), [{ args: ['start', '--cloud', 'http://x', '--data', s.data], state: s.file, program: installed, installed: '1.0.0' }])
  t.notOk(fs.existsSync(path.join(s.data, 'releases')), 'no releases folder')
})

t.test('exit 75 → the new version starts on trial; it confirms; then it runs on (its exit code ends the supervisor)', async (t) => {
  const s = setup(t)
  const b = s.incoming('2.0.0-x64', '2.0.0', [{ do: 'confirm', code: 4 }])
  const installed = program(path.join(s.root, 'opt'), '1.0.0', [
    { do: 'install', version: '2.0.0', dir: '2.0.0-x64', jobId: 'job_1', from: path.join(s.root, 'incoming', '2.0.0-x64') },
  ])
  const done = s.sup(installed, 2000)
  const child = await s.childOf('2.0.0')
  // B confirms (the state file says so); the supervisor sees it at its next poll.
  await waitFor(() => readState(s.file)?.trial?.confirmedAt, 'the new version writing its confirmation into the state')
  s.clock.advance(50)
  t.ok(
    s.lines.some((l) => l.msg === 'the new version confirmed its trial' && l.version === '2.0.0'),
    'the poll after the confirmation sees it',
  )
  t.equal(s.clock.pending, 0, 'no trial deadline left once confirmed')
  // Well past the window: nothing stops it.
  s.clock.advance(10_000)
  t.equal(child.exitCode, null, 'still running after the trial window')
  t.equal(child.signalCode, null, 'not signalled')
  child.kill('SIGUSR2')
  t.equal(await done, 4, 'the confirmed version is not rolled back (its exit code 4 after its trial ends the supervisor)')
  t.equal(runs(installed).length, 1)
  t.equal(runs(b).length, 1)
  t.equal(runs(b)[0]!.program, b)
  const st = readState(s.file)!
  t.match(st, {
    installed: '1.0.0',
    active: { version: '2.0.0', dir: '2.0.0-x64' },
    previous: null,
    rolledBack: null,
    trial: { jobId: 'job_1', version: '2.0.0' },
  })
  t.ok(st.trial?.confirmedAt, 'confirmed')
  t.ok(
    s.lines.some((l) => l.msg === 'starting the new version on trial' && l.version === '2.0.0'),
    'says it runs on trial',
  )
})

t.test('the new version exits with an error during its trial → back to the previous program, the rollback recorded', async (t) => {
  const s = setup(t)
  const b = s.incoming('2.0.0-x64', '2.0.0', [{ do: 'exit', code: 1 }])
  const installed = program(path.join(s.root, 'opt'), '1.0.0', [
    { do: 'install', version: '2.0.0', dir: '2.0.0-x64', jobId: 'job_2', from: path.join(s.root, 'incoming', '2.0.0-x64') },
    { do: 'exit', code: 0 },
  ])
  t.equal(await s.sup(installed, 10_000), 0, 'the installed program ran again and exited 0')
  t.equal(s.clock.nowMs, new ManualClock().nowMs, 'without waiting for the trial window (its clock never moved)')
  t.equal(s.clock.pending, 0, 'no timer left behind')
  t.equal(runs(b).length, 1)
  t.equal(runs(installed).length, 2)
  const st = readState(s.file)!
  t.match(st, { active: null, previous: null, trial: null, rolledBack: { jobId: 'job_2', version: '2.0.0', reason: /exited with code 1 during its trial/ } })
  t.match(
    s.lines.find((l) => l.msg === 'update rolled back'),
    { level: 'error', jobId: 'job_2', version: '2.0.0', back: '1.0.0' },
  )
  t.notOk(fs.existsSync(path.join(s.data, 'releases', '2.0.0-x64')), 'the failed release is deleted at the next start')
})

t.test('the new version never confirms → stopped at the end of the trial window, back to the previous release', async (t) => {
  const s = setup(t)
  const installed = program(path.join(s.root, 'opt'), '1.0.0', [])
  // Running: release 2 (confirmed earlier), which installs 3; 3 hangs; 2 runs again and exits 0.
  const threeDir = s.incoming('3.0.0-x64', '3.0.0', [{ do: 'hang' }])
  const two = s.release('2.0.0-x64', '2.0.0', [
    { do: 'install', version: '3.0.0', dir: '3.0.0-x64', jobId: 'job_3', from: path.join(s.root, 'incoming', '3.0.0-x64') },
    { do: 'exit', code: 0 },
  ])
  s.release('1.5.0-x64', '1.5.0', [])
  writeState(s.file, {
    installed: '1.0.0',
    active: { version: '2.0.0', dir: '2.0.0-x64' },
    previous: { version: '1.5.0', dir: '1.5.0-x64' },
    trial: null,
    rolledBack: null,
  })
  const done = s.sup(installed, 2000)
  const three = await s.childOf('3.0.0')
  await waitFor(() => runs(threeDir).length === 1 || undefined, 'version 3.0.0 recording its start')
  s.clock.advance(1999)
  t.equal(three.signalCode, null, 'not stopped before the end of the window')
  t.notOk(
    s.lines.some((l) => l.msg === 'update rolled back'),
    'no rollback before the end of the window',
  )
  s.clock.advance(1)
  t.equal(await done, 0)
  t.equal(three.signalCode, 'SIGTERM', 'stopped with SIGTERM at the end of the window')
  t.equal(runs(installed).length, 0)
  t.equal(runs(two).length, 2)
  t.equal(runs(threeDir).length, 1)
  const st: ReleaseState = readState(s.file)!
  t.match(st, {
    active: { version: '2.0.0', dir: '2.0.0-x64' },
    previous: null,
    trial: null,
    rolledBack: { jobId: 'job_3', version: '3.0.0', reason: /did not connect and report within the trial window \(2 s\)/ },
  })
  t.same(fs.readdirSync(path.join(s.data, 'releases')).sort(), ['2.0.0-x64', 'state.json'], 'releases beyond the active and previous ones are deleted')
})

t.test('an apt upgrade (the installed version differs from the state’s): the installed program wins, the state starts again', async (t) => {
  const s = setup(t)
  const installed = program(path.join(s.root, 'opt'), '1.1.0', [{ do: 'exit', code: 0 }])
  const b = s.release('2.0.0-x64', '2.0.0', [{ do: 'exit', code: 9 }])
  writeState(s.file, { installed: '1.0.0', active: { version: '2.0.0', dir: '2.0.0-x64' }, previous: null, trial: null, rolledBack: null })
  t.equal(await s.sup(installed), 0)
  t.equal(runs(b).length, 0)
  t.equal(runs(installed).length, 1)
  t.same(readState(s.file), { installed: '1.1.0', active: null, previous: null, trial: null, rolledBack: null })
  t.ok(s.lines.some((l) => /upgraded/.test(String(l.msg))))
})

t.test('an active release whose folder is gone: the installed program runs', async (t) => {
  const s = setup(t)
  const installed = program(path.join(s.root, 'opt'), '1.0.0', [{ do: 'exit', code: 0 }])
  writeState(s.file, { installed: '1.0.0', active: { version: '2.0.0', dir: '2.0.0-x64' }, previous: null, trial: null, rolledBack: null })
  t.equal(await s.sup(installed), 0)
  t.equal(runs(installed).length, 1)
  t.match(readState(s.file), { active: null })
})

t.test('the trial window from the environment; --data among the arguments', async (t) => {
  t.equal(trialMsFrom({}), 300_000)
  t.equal(trialMsFrom({ SVC_AGENT_UPDATE_TRIAL_SECONDS: '2.5' }), 2500)
  t.throws(() => trialMsFrom({ SVC_AGENT_UPDATE_TRIAL_SECONDS: 'soon' }), /SVC_AGENT_UPDATE_TRIAL_SECONDS must be a number of seconds/)
  t.equal(dataDirOf(['--cloud', 'x', '--data', '/var/lib/svc-agent']), '/var/lib/svc-agent')
  t.equal(dataDirOf(['--data=/d']), '/d')
  t.equal(dataDirOf([]), path.resolve('agent-data'))
})
