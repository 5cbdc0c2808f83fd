// Test helpers for the agent: a manual clock with timers, temp dirs, a log capture,
// bounded polling, and a runner for the agent CLI as a real child process.
import type { Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import { Logger } from '../src/runtime/Logger.js'
import type { Clock, Timers } from '../src/runtime/time.js'

/** Wall time that moves only on advance(); its timers fire in order as it passes them. */
export class FakeTime implements Timers {
  nowMs: number
  #seq = 0
  readonly timers = new Map<number, { at: number; fn: () => void }>()
  readonly delays: number[] = []

  constructor(start: string | number = Date.now()) {
    this.nowMs = typeof start === 'number' ? start : Date.parse(start)
  }

  readonly clock: Clock = { now: () => new Date(this.nowMs) }

  readonly setTimer = (fn: () => void, ms: number): unknown => {
    const id = ++this.#seq
    this.delays.push(ms)
    this.timers.set(id, { at: this.nowMs + ms, fn })
    return id
  }

  readonly clearTimer = (handle: unknown): void => {
    this.timers.delete(handle as number)
  }

  advance(ms: number): void {
    const end = this.nowMs + ms
    for (;;) {
      let nextId: number | null = null
      let nextAt = Infinity
      for (const [id, t] of this.timers) if (t.at <= end && t.at < nextAt) (nextId = id), (nextAt = t.at)
      if (nextId === null) break
      const t = this.timers.get(nextId)!
      this.timers.delete(nextId)
      this.nowMs = Math.max(this.nowMs, t.at)
      t.fn()
    }
    this.nowMs = end
  }

  advanceTo(iso: string): void {
    this.advance(Date.parse(iso) - this.nowMs)
  }

  get pending(): number {
    return this.timers.size
  }
}

export function tempDir(t: Test, prefix = 'svc-agent-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
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
  const log = new Logger({ write: (l) => lines.push(JSON.parse(l) as Record<string, unknown>), level, ...(clock ? { clock } : {}) })
  return {
    log,
    lines,
    async waitFor(pred, ms = 10_000) {
      const hit = await until(ms, async () => lines.find(pred))
      if (!hit) throw new Error(`no matching log line within ${ms} ms; got:\n${lines.map((l) => JSON.stringify(l)).join('\n')}`)
      return hit
    },
  }
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

/** Runs `node --import tsx agent/src/cli.ts …args` from the repo root; killed in t.after if still running. */
export function runAgentCli(t: Test, args: string[]): AgentProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'agent/src/cli.ts', ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
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
