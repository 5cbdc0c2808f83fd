// Helpers of the packed-agent tests: `agent pack` as a child process (through pnpm when it
// is on PATH, as the guide shows it, else the same CLI through node), a folder whose only
// program is `node` (a PATH for "Node alone"), the tarball unpacked with tar, and the
// packed program run as a child process whose output is collected.
import type { Test } from 'tap'
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { pnpm, useTool } from '@svc/shared/testing'
import { bundledEntry } from '@svc/shared/testing/bundle'
import { tempDir } from '../helpers.js'

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')
export const VERSION = (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'agent/package.json'), 'utf8')) as { version: string }).version

export interface Run {
  child: ChildProcess
  stdout: () => string
  stderr: () => string
  /** The JSON log lines on stdout so far. */
  json: () => Array<Record<string, unknown>>
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/** Runs a program with its output collected; SIGKILLed when the test ends if still running. */
/** `group`: in a process group of its own, killed as a group (a program that starts others). */
export function run(t: Test, cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; group?: boolean } = {}): Run {
  const child = spawn(cmd, args, { cwd: opts.cwd ?? REPO_ROOT, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'], detached: !!opts.group })
  let out = ''
  let err = ''
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d))
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })))
  t.after(() => {
    if (opts.group) {
      try {
        process.kill(-child.pid!, 'SIGKILL')
      } catch {
        // the group is gone
      }
    } else if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    json: () =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    exited,
  }
}

/** A folder holding only a `node` link: as PATH, the machine has Node and nothing else. */
export function nodeOnly(t: Test): string {
  const dir = tempDir(t, 'svc-node-only-')
  fs.symlinkSync(process.execPath, path.join(dir, 'node'))
  return dir
}

/**
 * `agent pack --out DIR …` as the guide shows it (`pnpm --silent agent pack`; when pnpm is
 * not on PATH, the same CLI through node, saying so). `nodeOnlyPath`: PATH is a folder with
 * only node in it (so: no pnpm, no tar, no dpkg-deb).
 */
export async function pack(
  t: Test,
  extra: string[],
  opts: { nodeOnlyPath?: string } = {},
): Promise<{ out: string; code: number | null; stdout: string; stderr: string }> {
  const out = tempDir(t, 'svc-pack-out-')
  // The CLI's bundle (scripts/bundle.mjs, built once per run), as the pnpm script runs it.
  const cli = [await bundledEntry('agent/src/cli.ts'), 'pack', '--out', out, ...extra]
  let p: Run
  if (opts.nodeOnlyPath) p = run(t, process.execPath, cli, { env: { PATH: opts.nodeOnlyPath, HOME: out } })
  else if (useTool(t, pnpm, 'node scripts/run.mjs agent/src/cli.ts (what the pnpm script runs)'))
    p = run(t, 'pnpm', ['--silent', 'agent', 'pack', '--out', out, ...extra])
  else p = run(t, process.execPath, cli)
  const { code } = await p.exited
  return { out, code, stdout: p.stdout(), stderr: p.stderr() }
}

/** Unpacks a tarball with the system's tar (as the guide does); answers the folder holding svc-agent/. */
export function unpack(t: Test, tarball: string): string {
  const dir = tempDir(t, 'svc-unpacked-')
  execFileSync('tar', ['-xzf', tarball, '-C', dir])
  return dir
}

/** The members of a .deb (an ar archive: "!<arch>\n", then a 60-byte header and the data of each): their names in order. */
export function debMembers(file: string): string[] {
  const buf = fs.readFileSync(file)
  if (buf.subarray(0, 8).toString('latin1') !== '!<arch>\n') throw new Error(`${file} is not an ar archive`)
  const names: string[] = []
  for (let off = 8; off + 60 <= buf.length; ) {
    names.push(
      buf
        .subarray(off, off + 16)
        .toString('latin1')
        .trim()
        .replace(/\/$/, ''),
    )
    const size = Number(
      buf
        .subarray(off + 48, off + 58)
        .toString('latin1')
        .trim(),
    )
    off += 60 + size + (size % 2)
  }
  return names
}
