#!/usr/bin/env node
// Runs the whole tap suite and ends with the plain closing line "N passed, N failed"
// that CI reads. Extra arguments go to tap (for example a file path).
// Without a file argument (the whole suite, `pnpm test`) it also runs the static checks:
// the type check of both TypeScript projects (the workspace, and the console's browser
// code) and `biome ci` (format and lint). They run beside the tests, not before them: on
// the 2-core machine the ~40 s of CPU they take fills the tests' waits. Their output is
// shown after tap's when one fails, and each counts as one test in the closing line.
// tap's bin is started with this node directly: going through npx would make npm print
// a warning for every npm_config_* variable pnpm passes to scripts.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

const require = createRequire(join(process.cwd(), 'package.json'))
const tapPackage = require.resolve('tap/package.json')
const tapBin = join(dirname(tapPackage), JSON.parse(readFileSync(tapPackage, 'utf8')).bin.tap)
const args = process.argv.slice(2)
const wholeSuite = !args.some((a) => !a.startsWith('-'))

const bin = (name) => join(process.cwd(), 'node_modules', '.bin', name)
const CHECKS = [
  ['type check: tsconfig.json', bin('tsc'), ['-p', 'tsconfig.json', '--noEmit']],
  ['type check: cloud/console/tsconfig.json', bin('tsc'), ['-p', 'cloud/console/tsconfig.json', '--noEmit']],
  ['biome ci .', bin('biome'), ['ci', '--colors=off', '.']],
]

/** One static check as a child process: its exit code and everything it printed. */
function check([name, cmd, cmdArgs]) {
  return new Promise((resolve) => {
    const child = spawn(cmd, cmdArgs, { env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (d) => (output += d))
    child.stderr.on('data', (d) => (output += d))
    child.on('error', (err) => resolve({ name, ok: false, output: String(err) }))
    child.on('close', (code) => resolve({ name, ok: code === 0, output }))
  })
}

const checks = wholeSuite ? Promise.all(CHECKS.map(check)) : Promise.resolve([])

const child = spawn(process.execPath, [tapBin, ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
let tail = ''
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk)
  tail = (tail + chunk.toString()).slice(-4000)
})
child.on('close', async (code, signal) => {
  const results = await checks
  for (const r of results) {
    process.stdout.write(`\n# static check ${r.ok ? 'ok' : 'FAILED'}: ${r.name}\n`)
    if (!r.ok) process.stdout.write(`${r.output.trimEnd()}\n`)
  }
  const staticFailed = results.filter((r) => !r.ok).length
  const m = /# \{ total: (\d+), pass: (\d+)(?:, fail: (\d+))?(?:, skip: (\d+))?/.exec(tail)
  if (m) {
    const failed = (Number(m[3] ?? 0) || Number(m[1]) - Number(m[2]) - Number(m[4] ?? 0)) + staticFailed
    const passed = Number(m[2]) + results.length - staticFailed
    process.stdout.write(`\n${passed} passed, ${failed} failed${m[4] ? `, ${m[4]} skipped` : ''}\n`)
  }
  process.exit(staticFailed ? 1 : (code ?? (signal ? 1 : 0)))
})
