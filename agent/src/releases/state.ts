// The releases folder, `<data>/releases/`: the agent versions installed by `update` jobs,
// each unpacked as `<version>-<arch>/svc-agent/`, and state.json, which says which program
// the launcher's supervisor runs (agent/src/launcher/supervisor.ts) and what is to be told
// to the cloud about the last update. Two programs write it, never at once: the supervisor
// while no agent runs (start, roll back), the agent while it runs (install, confirm,
// report). Every write is atomic (a temporary file renamed over the old one).
// This module is bundled into the launcher too: Node's built-ins only.
import fs from 'node:fs'
import path from 'node:path'

/** A program the supervisor can run: the installed one (dir null) or an unpacked release. */
export interface ProgramRef {
  version: string
  /** The release's folder name under releases/ (`<version>-<arch>`); null = the installed program. */
  dir: string | null
}

export interface ReleaseState {
  /** The installed program's version when the supervisor last started (an apt upgrade changes it). */
  installed: string
  /** What runs; null = the installed program. */
  active: ProgramRef | null
  /** What ran before `active`, where a failed trial goes back to; null = the installed program. */
  previous: ProgramRef | null
  /** The update on trial: `confirmedAt` once the new version connected and reported (its `ok` is then still to be published). */
  trial: { jobId: string; version: string; since: string; confirmedAt?: string } | null
  /** An update that was rolled back, until the version gone back to has told the cloud. */
  rolledBack: { jobId: string; version: string; reason: string; at: string } | null
}

/** The environment variable that tells a supervised agent where the state file is. */
export const STATE_ENV = 'SVC_AGENT_RELEASE_STATE'
/** The environment variable naming the folder of the program the supervisor started (bin/, lib/, share/). */
export const PROGRAM_ENV = 'SVC_AGENT_PROGRAM'
/** The environment variable with the installed program's version (what a fresh state records). */
export const INSTALLED_ENV = 'SVC_AGENT_INSTALLED_VERSION'
/** The exit code by which the agent asks its supervisor to restart into the update it installed. */
export const RESTART_EXIT_CODE = 75
/** The trial window's default length: a new version must connect and report within it. */
export const DEFAULT_TRIAL_SECONDS = 300
export const TRIAL_ENV = 'SVC_AGENT_UPDATE_TRIAL_SECONDS'

export function releasesDir(dataDir: string): string {
  return path.join(dataDir, 'releases')
}

export function stateFile(dataDir: string): string {
  return path.join(releasesDir(dataDir), 'state.json')
}

/** A release's program folder (the one holding bin/ and lib/). */
export function releaseProgramDir(releases: string, dir: string): string {
  return path.join(releases, dir, 'svc-agent')
}

export function freshState(installed: string): ReleaseState {
  return { installed, active: null, previous: null, trial: null, rolledBack: null }
}

/** The state, or null when there is none; throws when the file is there but unreadable. */
export function readState(file: string): ReleaseState | null {
  let text: string
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw err
  }
  const v = JSON.parse(text) as Partial<ReleaseState>
  if (!v || typeof v !== 'object' || typeof v.installed !== 'string') throw new Error(`${file} is not a release state`)
  return { installed: v.installed, active: v.active ?? null, previous: v.previous ?? null, trial: v.trial ?? null, rolledBack: v.rolledBack ?? null }
}

/** Writes the state atomically (temporary file, fsync, rename). */
export function writeState(file: string, state: ReleaseState): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  const tmp = `${file}.${process.pid}.tmp`
  const fd = fs.openSync(tmp, 'w', 0o600)
  try {
    fs.writeSync(fd, `${JSON.stringify(state, null, 2)}\n`)
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
  fs.renameSync(tmp, file)
}

/** Reads, changes and writes the state (the change may return a new object or edit it). */
export function updateState(file: string, change: (s: ReleaseState) => ReleaseState | undefined, installed = ''): ReleaseState {
  const now = readState(file) ?? freshState(installed)
  const next = change(now) ?? now
  writeState(file, next)
  return next
}
