// The packed agent's supervisor: `bin/svc-agent start …` runs this small program (built into
// lib/launcher.cjs), which runs the agent itself as its child: `node <program>/lib/svc-agent.mjs
// start …`. The program is the installed one (the folder the launcher is in) or a release an
// `update` job unpacked under <data>/releases/<version>-<arch>/svc-agent/, as
// <data>/releases/state.json says (releases/state.ts).
//   - exit 75 from the child: it installed an update; start the (new) active program;
//   - a version on trial (just installed) must confirm (connect and report, which the agent
//     writes into the state) within the trial window; if it does not, or exits with a code
//     other than 0 and 75 before, it is stopped and the previous program runs again; the
//     rollback is recorded for the previous version to report;
//   - SIGTERM/SIGINT go to the child; any other exit of the child ends the supervisor with
//     its code (the service manager restarts it).
// An installed program whose version differs from the one the state recorded was upgraded
// by the package manager: it wins and the state starts again.
import { type ChildProcess, spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { type Clock, systemClock, type TimerHandle, type Timers } from '@svc/shared/time'
import {
  DEFAULT_TRIAL_SECONDS,
  INSTALLED_ENV,
  PROGRAM_ENV,
  type ProgramRef,
  RESTART_EXIT_CODE,
  type ReleaseState,
  STATE_ENV,
  TRIAL_ENV,
  freshState,
  readState,
  releaseProgramDir,
  releasesDir,
  stateFile,
  writeState,
} from '../releases/state.js'

export interface SupervisorOptions {
  /** The installed program's folder (bin/, lib/, package.json). */
  installedDir: string
  /** The agent's data folder (`--data`). */
  dataDir: string
  /** The arguments after `start`, passed on as they are. */
  args: string[]
  /** The trial window (default: SVC_AGENT_UPDATE_TRIAL_SECONDS, else 300 s). */
  trialMs?: number
  /** How often the state file is read for a confirmation (default 1 s). */
  pollMs?: number
  /** Writes a JSON log line (default: stdout). */
  log?: (line: Record<string, unknown>) => void
  /** The environment of the child (default process.env). */
  env?: NodeJS.ProcessEnv
  /** Forward SIGTERM/SIGINT received by this process (default true). */
  handleSignals?: boolean
  /** The clock and timers of the trial window, the confirmation polls and the rollback's time (default: the real ones). */
  clock?: Clock & Timers
  /** Called with each child as it starts (tests). */
  onChild?: (child: ChildProcess, program: ProgramRef & { path: string }) => void
}

/** The trial window from the environment: whole or fractional seconds, at least 0.1. */
export function trialMsFrom(env: NodeJS.ProcessEnv): number {
  const text = env[TRIAL_ENV]
  if (text === undefined || text.trim() === '') return DEFAULT_TRIAL_SECONDS * 1000
  const s = Number(text)
  if (!Number.isFinite(s) || s < 0.1) throw new Error(`${TRIAL_ENV} must be a number of seconds (at least 0.1), got "${text}"`)
  return Math.round(s * 1000)
}

function programVersion(dir: string): string {
  return (JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version
}

const SIGNAL_CODES: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 }

/** Runs the agent under supervision; resolves with the exit code for the supervisor. */
export async function supervise(o: SupervisorOptions): Promise<number> {
  const clock = o.clock ?? systemClock
  const log =
    o.log ??
    ((line: Record<string, unknown>) => {
      // The agent's own line format (runtime/Logger.ts): t, level, msg, then the fields.
      const { level = 'info', msg, ...fields } = line
      process.stdout.write(`${JSON.stringify({ t: clock.now().toISOString(), level, msg, part: 'supervisor', ...fields })}\n`)
    })
  const env = o.env ?? process.env
  const trialMs = o.trialMs ?? trialMsFrom(env)
  const pollMs = o.pollMs ?? 1000
  const releases = releasesDir(o.dataDir)
  const file = stateFile(o.dataDir)
  const installedVersion = programVersion(o.installedDir)

  // No state file yet (no update ever installed): nothing is written, the installed program runs.
  let state: ReleaseState = freshState(installedVersion)
  try {
    const stored = readState(file)
    if (stored && stored.installed !== installedVersion) {
      if (stored.active)
        log({ installed: installedVersion, was: stored.installed, msg: 'the installed program was upgraded: it runs, the releases are set aside' })
      writeState(file, { ...state, rolledBack: stored.rolledBack })
    } else if (stored) state = stored
  } catch (err) {
    log({ level: 'error', file, err: (err as Error).message, msg: 'the release state cannot be read; running the installed program' })
  }

  let child: ChildProcess | null = null
  let stopping: NodeJS.Signals | null = null
  const onSignal = (signal: NodeJS.Signals): void => {
    stopping = signal
    child?.kill(signal)
  }
  if (o.handleSignals !== false) {
    process.on('SIGTERM', onSignal)
    process.on('SIGINT', onSignal)
  }
  try {
    for (;;) {
      if (stopping) return SIGNAL_CODES[stopping as NodeJS.Signals] ? 128 + SIGNAL_CODES[stopping as NodeJS.Signals]! : 1
      const program = chosen(state)
      prune(releases, state, log)
      const onTrial = state.trial !== null && !state.trial.confirmedAt && state.trial.version === program.version && state.active !== null
      const spawned = spawn(process.execPath, [path.join(program.path, 'lib', 'svc-agent.mjs'), 'start', ...o.args], {
        stdio: 'inherit',
        env: { ...env, [STATE_ENV]: file, [PROGRAM_ENV]: program.path, [INSTALLED_ENV]: installedVersion },
      })
      child = spawned
      o.onChild?.(spawned, program)
      log({ version: program.version, program: program.path, trial: onTrial, msg: onTrial ? 'starting the new version on trial' : 'starting the agent' })
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
        spawned.once('exit', (code, signal) => resolve({ code, signal }))
        spawned.once('error', () => resolve({ code: 1, signal: null }))
      })
      let timedOut = false
      let deadline: TimerHandle | null = null
      let poll: TimerHandle | null = null
      let kill: TimerHandle | null = null
      const stopPolling = (): void => {
        if (deadline !== null) clock.clearTimer(deadline)
        if (poll !== null) clock.clearTimer(poll)
        deadline = poll = null
      }
      if (onTrial) {
        deadline = clock.setTimer(() => {
          deadline = null
          timedOut = true
          stopPolling()
          spawned.kill('SIGTERM')
          // One that does not stop when asked is killed.
          kill = clock.setTimer(() => spawned.kill('SIGKILL'), 10_000)
        }, trialMs)
        const check = (): void => {
          poll = null
          const s = safeRead(file)
          if (s?.trial?.confirmedAt || !s?.trial) {
            stopPolling()
            log({ version: program.version, msg: 'the new version confirmed its trial' })
          } else poll = clock.setTimer(check, pollMs)
        }
        poll = clock.setTimer(check, pollMs)
      }
      const { code, signal } = await exited
      stopPolling()
      if (kill !== null) clock.clearTimer(kill)
      child = null
      if (stopping) return code ?? 128 + (SIGNAL_CODES[signal ?? 'SIGTERM'] ?? 15)
      const now = safeRead(file) ?? state
      if (code === RESTART_EXIT_CODE) {
        // No new program to go to (the state names none, or its folder is missing): not a restart loop.
        const next = now.active?.dir ? releaseProgramDir(releases, now.active.dir) : o.installedDir
        if (next === program.path || !fs.existsSync(path.join(next, 'lib', 'svc-agent.mjs'))) {
          log({ level: 'error', code, program: program.path, msg: 'the agent asked for a restart into an update, but no other program is installed; stopping' })
          return 1
        }
        log({ from: program.version, to: now.active?.version ?? installedVersion, msg: 'restarting into the update' })
        state = now
        continue
      }
      const confirmed = now.trial === null || Boolean(now.trial.confirmedAt)
      if (onTrial && !confirmed && (timedOut || code !== 0)) {
        const trial = now.trial!
        const reason = timedOut
          ? `version ${trial.version} did not connect and report within the trial window (${trialMs / 1000} s)`
          : `version ${trial.version} exited with ${signal ? `signal ${signal}` : `code ${code}`} during its trial`
        state = {
          ...now,
          active: now.previous,
          previous: null,
          trial: null,
          rolledBack: { jobId: trial.jobId, version: trial.version, reason, at: clock.now().toISOString() },
        }
        writeState(file, state)
        log({ level: 'error', jobId: trial.jobId, version: trial.version, back: state.active?.version ?? installedVersion, reason, msg: 'update rolled back' })
        continue
      }
      return code ?? 128 + (SIGNAL_CODES[signal ?? 'SIGTERM'] ?? 15)
    }
  } finally {
    if (o.handleSignals !== false) {
      process.off('SIGTERM', onSignal)
      process.off('SIGINT', onSignal)
    }
  }

  function chosen(s: ReleaseState): ProgramRef & { path: string } {
    if (s.active?.dir) {
      const p = releaseProgramDir(releases, s.active.dir)
      if (fs.existsSync(path.join(p, 'lib', 'svc-agent.mjs'))) return { ...s.active, path: p }
      log({ level: 'error', program: p, msg: 'the active release is missing; running the installed program' })
      state = { ...s, active: null, previous: null, trial: null }
      writeState(file, state)
    }
    return { version: installedVersion, dir: null, path: o.installedDir }
  }
}

function safeRead(file: string): ReleaseState | null {
  try {
    return readState(file)
  } catch {
    return null
  }
}

/** Deletes the releases other than the active and the previous one (and leftovers of unpacking). */
function prune(releases: string, s: ReleaseState, log: (line: Record<string, unknown>) => void): void {
  const keep = new Set([s.active?.dir, s.previous?.dir].filter((d): d is string => typeof d === 'string'))
  let names: string[]
  try {
    names = fs.readdirSync(releases, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? [e.name] : []))
  } catch {
    return
  }
  for (const name of names) {
    if (keep.has(name)) continue
    try {
      fs.rmSync(path.join(releases, name), { recursive: true, force: true })
      log({ release: name, msg: 'old release deleted' })
    } catch (err) {
      log({ level: 'warn', release: name, err: (err as Error).message, msg: 'could not delete an old release' })
    }
  }
}
