#!/usr/bin/env node
// Runs the whole tap suite and ends with the plain closing line "N passed, N failed"
// that CI reads. Extra arguments go to tap (for example a file path).
// Without a file argument (the whole suite, `pnpm test`) it also runs the static checks:
// the type check of both TypeScript projects (the workspace, and the console's browser
// code) and `biome ci` (format and lint). They run beside the tests, not before them: on
// the 2-core machine the ~15 s of CPU they take fills the tests' waits. Their output is
// shown after tap's when one fails, and each counts as one test in the closing line.
// Before that closing line it lists every failed test with the names of the subtests it
// sits in and what its diagnostics say, so a log cut to its tail still says what failed.
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
// The type check is TypeScript 7's native compiler (the `typescript7` alias): a quarter of
// 5.9's CPU. `typescript` itself stays 5.9, the JavaScript API tap's loader builds on.
const tsc = join(process.cwd(), 'node_modules', 'typescript7', 'bin', 'tsc')
const CHECKS = [
  ['type check: tsconfig.json', tsc, ['-p', 'tsconfig.json', '--noEmit']],
  ['type check: cloud/console/tsconfig.json', tsc, ['-p', 'cloud/console/tsconfig.json', '--noEmit']],
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
const failures = collectFailures()
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk)
  tail = (tail + chunk.toString()).slice(-4000)
  failures.push(chunk.toString())
})

/**
 * Follows tap's output line by line: the stack of subtest names by indentation, and for
 * each failed test its path and what its diagnostics say (where, found/wanted, the error,
 * a timeout). A failed parent whose failed child is already listed is not repeated.
 */
function collectFailures() {
  const MAX_FAILURES = 40
  const KEPT = /^(message|found|wanted|error|code|exitCode|signal|expired|timeout|fileName|lineNumber|[-+][^-+])/
  const stack = []
  const found = []
  let partial = ''
  let diagnostics = null
  return {
    push(text) {
      const lines = (partial + text).split('\n')
      partial = lines.pop() ?? ''
      for (const line of lines) {
        const trimmed = line.trim()
        if (diagnostics) {
          if (trimmed === '...') diagnostics = null
          else if (KEPT.test(trimmed) && diagnostics.lines.length < 10) diagnostics.lines.push(trimmed.slice(0, 300))
          continue
        }
        const subtest = /^( *)# Subtest: (.*)$/.exec(line)
        if (subtest) {
          const depth = subtest[1].length / 4
          stack.length = depth
          stack[depth] = subtest[2]
          continue
        }
        const notOk = /^( *)not ok \d+ - (.*?)(?: # time=.*)?$/.exec(line)
        if (!notOk) continue
        const depth = notOk[1].length / 4
        const path = [...stack.slice(0, depth), notOk[2]].join(' > ')
        const entry = { path, lines: [] }
        diagnostics = entry
        if (found.some((f) => f.path.startsWith(`${path} > `)) || found.length >= MAX_FAILURES) continue
        found.push(entry)
      }
    },
    report() {
      if (found.length === 0) return ''
      const out = ['', `# failed (${found.length}${found.length >= MAX_FAILURES ? '+' : ''}):`]
      for (const f of found) {
        out.push(`# - ${f.path}`)
        for (const l of f.lines) out.push(`#     ${l}`)
      }
      return `${out.join('\n')}\n`
    },
  }
}
child.on('close', async (code, signal) => {
  const results = await checks
  for (const r of results) {
    process.stdout.write(`\n# static check ${r.ok ? 'ok' : 'FAILED'}: ${r.name}\n`)
    if (!r.ok) process.stdout.write(`${r.output.trimEnd()}\n`)
  }
  process.stdout.write(failures.report())
  const staticFailed = results.filter((r) => !r.ok).length
  const m = /# \{ total: (\d+), pass: (\d+)(?:, fail: (\d+))?(?:, skip: (\d+))?/.exec(tail)
  if (m) {
    const failed = (Number(m[3] ?? 0) || Number(m[1]) - Number(m[2]) - Number(m[4] ?? 0)) + staticFailed
    const passed = Number(m[2]) + results.length - staticFailed
    process.stdout.write(`\n${passed} passed, ${failed} failed${m[4] ? `, ${m[4]} skipped` : ''}\n`)
  }
  process.exit(staticFailed ? 1 : (code ?? (signal ? 1 : 0)))
})
