// Test helpers for the agent: a manual clock with timers, temp dirs, a log capture,
// bounded polling, and a runner for the agent CLI as a real child process (from its bundle).
import type { Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import { JsonLogger, type Logger } from '../src/runtime/Logger.js'
import { ManualClock } from '@svc/shared'
import { bundledEntry } from '@svc/shared/testing/bundle'
import type { Clock } from '../src/runtime/time.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

/** Wall time that moves only on advance(); its timers fire in order as it passes them (the shared ManualClock, starting now by default). */
export class FakeTime extends ManualClock {
  constructor(start: string | number = Date.now()) {
    super(start)
  }

  /** The clock side alone, for options that take a Clock. */
  readonly clock: Clock = this
}

export function tempDir(t: Test, prefix = 'svc-agent-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  // Retried: an agent still stopping may write a last file into it meanwhile. A folder that
  // still cannot go is left in the temporary directory with a comment: a throwing teardown
  // would skip the test's other teardowns (its cloud, its other agents) and hang the file.
  t.after(async () => {
    await fs.promises.rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }).catch((err: Error) => t.comment(`left ${dir}: ${err.message}`))
  })
  return dir
}

export interface LogCapture {
  log: Logger
  lines: Array<Record<string, unknown>>
  /** Resolves with the first line (already written or to come) that matches. */
  waitFor(pred: (line: Record<string, unknown>) => boolean, ms?: number): Promise<Record<string, unknown>>
}

export function captureLog(clock?: Clock, level: 'debug' | 'info' = 'info'): LogCapture {
  const lines: Array<Record<string, unknown>> = []
  const log = new JsonLogger({ write: (l) => lines.push(JSON.parse(l) as Record<string, unknown>), level, ...(clock ? { clock } : {}) })
  return {
    log,
    lines,
    async waitFor(pred, ms = HANG_GUARD_MS) {
      const hit = await until(ms, async () => lines.find(pred))
      if (!hit) throw new Error(`no matching log line within ${ms} ms; got:\n${lines.map((l) => JSON.stringify(l)).join('\n')}`)
      return hit
    },
  }
}

/**
 * Polls `fn` every 20 ms until it answers something other than undefined: what a test waits
 * for from a real process or socket. The bound is a hang guard (HANG_GUARD_MS by default): when
 * it runs out this throws, naming `what` was awaited.
 */
export async function eventually<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, ms = HANG_GUARD_MS): Promise<T> {
  const v = await until(ms, fn)
  if (v === undefined) throw new Error(`gave up after ${Math.round(ms / 1000)} s waiting for ${what}`)
  return v
}

/** Polls `fn` every 20 ms until it returns something other than undefined, at most `ms`. */
export async function until<T>(ms: number, fn: () => Promise<T | undefined> | T | undefined): Promise<T | undefined> {
  const end = Date.now() + ms
  for (;;) {
    const v = await Promise.resolve()
      .then(fn)
      .catch(() => undefined)
    if (v !== undefined || Date.now() > end) return v
    await sleep(20)
  }
}

/** The agent CLI as a real child process: stdout lines, stderr text, exit, JSON log lines. */
export interface AgentProcess {
  child: ChildProcess
  out: string[]
  err: () => string
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  json(): Array<Record<string, unknown>>
}

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

/**
 * Runs the agent's CLI (agent/src/cli.ts, as its bundle: `bundledEntry`) with `args` from the
 * repo root (in `env`, default this process's); killed in t.after if still running.
 */
export async function runAgentCli(t: Test, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<AgentProcess> {
  const child = spawn(process.execPath, [await bundledEntry('agent/src/cli.ts'), ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
  const out: string[] = []
  let buf = ''
  let err = ''
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    buf += d
    const parts = buf.split('\n')
    buf = parts.pop()!
    out.push(...parts)
  })
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })))
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  return {
    child,
    out,
    err: () => err,
    exited,
    json: () => out.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>),
  }
}
