#!/usr/bin/env node
// Runs the whole tap suite and ends with the plain closing line "N passed, N failed"
// that CI reads. Extra arguments go to tap (for example a file path).
// tap's bin is started with this node directly: going through npx would make npm print
// a warning for every npm_config_* variable pnpm passes to scripts.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

const require = createRequire(join(process.cwd(), 'package.json'))
const tapPackage = require.resolve('tap/package.json')
const tapBin = join(dirname(tapPackage), JSON.parse(readFileSync(tapPackage, 'utf8')).bin.tap)

const child = spawn(process.execPath, [tapBin, ...process.argv.slice(2)], { stdio: ['ignore', 'pipe', 'inherit'] })
let tail = ''
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk)
  tail = (tail + chunk.toString()).slice(-4000)
})
child.on('close', (code, signal) => {
  const m = /# \{ total: (\d+), pass: (\d+)(?:, fail: (\d+))?(?:, skip: (\d+))?/.exec(tail)
  if (m) {
    const failed = Number(m[3] ?? 0) || Number(m[1]) - Number(m[2]) - Number(m[4] ?? 0)
    process.stdout.write(`\n${m[2]} passed, ${failed} failed${m[4] ? `, ${m[4]} skipped` : ''}\n`)
  }
  process.exit(code ?? (signal ? 1 : 0))
})
