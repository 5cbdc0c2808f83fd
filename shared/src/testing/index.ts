// Tests that need a program or service outside Node (socat, PostgreSQL, Redis, Chromium,
// a `pnpm` on PATH; for the packed agent: root with network namespaces, dpkg, systemd-analyze,
// cage and Xwayland). Without it a test is skipped with one line naming the tool and how
// to get it, so the suite passes on a machine with Node and npm only; with CI=true
// (where `.ci/run` installs them all) a missing tool is a failure, never a silent skip.
//
//   import { socat, toolTest } from '@svc/shared/testing'
//   toolTest(t, socat, 'MDC power on over a pty', async (t) => { … })
//
// Where a pure-Node stand-in exercises the same path (a TCP link instead of a pty),
// `useTool(t, socat, 'TCP')` says which one to run.
import fs from 'node:fs'
import path from 'node:path'
import type { Test } from 'tap'

export interface SystemTool {
  /** What the skip line calls it. */
  name: string
  /** How to get it, in one phrase. */
  install: string
  /** Whether this machine has it (a program on PATH, a setting pointing at a server). */
  found(env?: NodeJS.ProcessEnv): boolean
}

/** Whether an executable with this name is on PATH (looked up without running anything). */
export function onPath(name: string, env: NodeJS.ProcessEnv = process.env): boolean {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue
    try {
      fs.accessSync(path.join(dir, name), fs.constants.X_OK)
      return true
    } catch {
      // not here
    }
  }
  return false
}

export const socat: SystemTool = {
  name: 'socat',
  install: 'apt-get install -y socat (brew install socat)',
  found: (env) => onPath('socat', env),
}

export const chromium: SystemTool = {
  name: 'Chromium',
  install: 'apt-get install -y chromium, or set CHROME_PATH to a Chrome/Chromium binary',
  found: (env = process.env) => Boolean(env.CHROME_PATH) || ['chromium', 'chromium-browser', 'google-chrome'].some((n) => onPath(n, env)),
}

export const postgres: SystemTool = {
  name: 'PostgreSQL',
  install: 'apt-get install -y postgresql, then set SVC_TEST_DATABASE_URL=postgres://user:pass@localhost/db',
  found: (env = process.env) => Boolean(env.SVC_TEST_DATABASE_URL),
}

export const redis: SystemTool = {
  name: 'Redis',
  install: 'apt-get install -y redis-server, then set SVC_TEST_REDIS_URL=redis://localhost:6379',
  found: (env = process.env) => Boolean(env.SVC_TEST_REDIS_URL),
}

export const pnpm: SystemTool = {
  name: 'pnpm',
  install: 'npm install -g pnpm@10.34.9, or run the tests with npx -y pnpm@10.34.9 test',
  found: (env) => onPath('pnpm', env),
}

const isRoot = (): boolean => process.getuid?.() === 0

export const netns: SystemTool = {
  name: 'network namespaces (ip netns, as root)',
  install: 'run the tests as root with iproute2 (apt-get install -y iproute2)',
  found: (env) => isRoot() && onPath('ip', env),
}

export const dpkgDeb: SystemTool = {
  name: 'dpkg-deb',
  install: 'apt-get install -y dpkg (Debian, Ubuntu)',
  found: (env) => onPath('dpkg-deb', env),
}

/** dpkg installing into a mount namespace of its own (a copy of /etc and of dpkg's database). */
export const dpkgInstall: SystemTool = {
  name: 'dpkg with mount namespaces (as root)',
  install: 'run the tests as root on Debian or Ubuntu (dpkg, deb-systemd-helper from init-system-helpers, unshare from util-linux)',
  found: (env) => isRoot() && ['dpkg', 'unshare', 'useradd', 'deb-systemd-helper'].every((n) => onPath(n, env)),
}

/** The packed agent's kiosk: cage (a Wayland kiosk compositor, run headless) with Xwayland, and Debian's Chromium. */
export const kiosk: SystemTool = {
  name: 'the kiosk browser (cage, Xwayland, Chromium, as root)',
  install: 'run the tests as root with apt-get install -y cage xwayland chromium',
  found: (env) =>
    isRoot() &&
    ['cage', 'Xwayland', 'runuser'].every((n) => onPath(n, env)) &&
    ['/usr/bin/chromium', '/usr/bin/chromium-browser'].some((p) => fs.existsSync(p)),
}

/** The kiosk compositor's output captured: cage (headless), Chromium in it, and grim (as root). */
export const displayCapture: SystemTool = {
  name: 'the display capture (cage, grim, Chromium, as root)',
  install: 'run the tests as root with apt-get install -y cage grim chromium',
  found: (env) =>
    isRoot() && ['cage', 'grim', 'runuser'].every((n) => onPath(n, env)) && ['/usr/bin/chromium', '/usr/bin/chromium-browser'].some((p) => fs.existsSync(p)),
}

/**
 * A window drawn in the kiosk compositor and captured: cage (headless, pixman), a foot
 * terminal as the window (cage draws it whole in software, unlike Chromium), grim (as root).
 */
export const displayWindow: SystemTool = {
  name: 'the display capture of a window (cage, foot, grim, as root)',
  install: 'run the tests as root with apt-get install -y cage foot fonts-dejavu-core grim',
  found: (env) => isRoot() && ['cage', 'foot', 'grim', 'runuser'].every((n) => onPath(n, env)),
}

/** ffmpeg and ffprobe, for the cloud's video thumbnails and facts (test videos made on the spot). */
export const ffmpeg: SystemTool = {
  name: 'ffmpeg',
  install: 'apt-get install -y ffmpeg',
  found: (env = process.env) => onPath('ffmpeg', env) && onPath('ffprobe', env),
}

/** ffmpeg, for the test videos (VP9 and H.264 made on the spot, never downloaded) and Chromium to play them. */
export const ffmpegChromium: SystemTool = {
  name: 'ffmpeg and Chromium',
  install: 'apt-get install -y ffmpeg chromium (or set CHROME_PATH)',
  found: (env = process.env) => onPath('ffmpeg', env) && chromium.found(env),
}

export const systemdAnalyze: SystemTool = {
  name: 'systemd-analyze',
  install: 'apt-get install -y systemd',
  found: (env) => onPath('systemd-analyze', env),
}

/** Whether a missing tool fails the test instead of skipping it (CI=true or CI=1). */
export function toolsRequired(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.CI === 'true' || env.CI === '1'
}

/** The one line a skip prints, or null when the tool is there. */
export function missingTool(tool: SystemTool, env: NodeJS.ProcessEnv = process.env): string | null {
  return tool.found(env) ? null : `needs ${tool.name}, not found: ${tool.install}`
}

/**
 * `t.test(name, fn)` when the tool is there. Without it: skipped with one line naming the
 * tool and how to get it, or (CI=true) a failing test that says the same.
 */
export function toolTest(t: Test, tool: SystemTool, name: string, fn: (t: Test) => unknown, env: NodeJS.ProcessEnv = process.env): void {
  const missing = missingTool(tool, env)
  if (!missing) void t.test(name, fn)
  else if (toolsRequired(env)) void t.test(name, async (t) => void t.fail(`${missing} (CI is set: a missing tool fails)`))
  else void t.test(name, { skip: missing }, fn)
}

/**
 * For a test with a pure-Node stand-in: true = the tool is there, run the real thing;
 * false = run the stand-in (a comment names the tool and the stand-in). With CI=true a
 * missing tool also fails the test, so CI always covers the real path.
 */
export function useTool(t: Test, tool: SystemTool, standIn: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const missing = missingTool(tool, env)
  if (!missing) return true
  if (toolsRequired(env)) t.fail(`${missing} (CI is set: a missing tool fails)`)
  else t.comment(`${missing}; running over ${standIn} instead`)
  return false
}
export { seededRandom } from './random.js'
export { HANG_GUARD_MS } from './guards.js'
