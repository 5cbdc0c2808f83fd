// `pnpm start` and `pnpm cloud` run the cloud from one bundle (scripts/cloud.mjs): built on
// the first run, run as it is while its sources are unchanged, built again when one
// changed. A bundle folder of the test's own (SVC_BUNDLE_DIR) keeps it apart from the
// cloud/dist that other tests run.
import t from 'tap'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { cleanEnv } from '../fixtures/processes.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..')

function run(bundleDir: string, args: string[], extra: Record<string, string> = {}): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['scripts/cloud.mjs', ...args], {
      cwd: ROOT,
      env: cleanEnv({ SVC_BUNDLE_DIR: bundleDir, ...extra }),
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
    // A hang guard, not a bound on how fast it is.
    const guard = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`waited ${HANG_GUARD_MS / 60_000} minutes for \`scripts/cloud.mjs ${args.join(' ')}\` to exit; stderr: ${stderr}`))
    }, HANG_GUARD_MS)
    child.once('error', reject)
    child.once('exit', (code) => {
      clearTimeout(guard)
      resolve({ code, stderr })
    })
  })
}

t.test('built once, reused while the sources are unchanged, built again when one changes', async (t) => {
  const rel = path.join('cloud', `.bundle-test-${process.pid}`)
  const dir = path.join(ROOT, rel)
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const bundle = path.join(dir, 'cli.js')

  const first = await run(rel, ['no-such-command'])
  t.equal(first.code, 2, `the CLI ran from the bundle and refused the command (${first.stderr.trim()})`)
  t.match(first.stderr, /unknown command no-such-command/)
  t.ok(fs.existsSync(bundle), 'the bundle is written')
  t.ok(fs.existsSync(`${bundle}.map`), 'with its source map')
  const inputs = JSON.parse(fs.readFileSync(path.join(dir, 'inputs.json'), 'utf8')) as { inputs: Record<string, string> }
  t.ok(inputs.inputs['cloud/src/cli.ts'], 'the entry is among the recorded inputs')
  t.ok(inputs.inputs['shared/src/index.ts'] || Object.keys(inputs.inputs).some((f) => f.startsWith('shared/src/')), 'so are the shared sources')
  t.notOk(
    Object.keys(inputs.inputs).some((f) => f.includes('node_modules')),
    'npm packages stay outside the bundle',
  )
  // The server's modules sit in a chunk of their own, which only `start` loads: the entry and
  // the chunks it imports statically do not name Fastify.
  const { outputs } = JSON.parse(fs.readFileSync(path.join(dir, 'inputs.json'), 'utf8')) as { outputs: string[] }
  const code = outputs.filter((f) => f.endsWith('.js'))
  t.same(fs.readdirSync(dir).sort(), [...outputs, 'inputs.json'].sort(), 'the folder holds what the build wrote and its record')
  const staticImports = (file: string) =>
    [...fs.readFileSync(path.join(dir, file), 'utf8').matchAll(/^import\s+(?:[^;]*?\s+from\s+)?"([^"]+)";$/gm)].map((m) => m[1]!)
  const loadedFirst = [
    'cli.js',
    ...staticImports('cli.js')
      .filter((i) => i.startsWith('./'))
      .map((i) => i.slice(2)),
  ]
  t.notOk(
    loadedFirst.some((f) => staticImports(f).includes('fastify')),
    `the entry and its static chunks (${loadedFirst.join(', ')}) do not import Fastify`,
  )
  t.ok(
    code.some((f) => staticImports(f).includes('fastify')),
    'a chunk the entry loads later does',
  )

  // Marked so that a rebuild (which writes a new file) is seen.
  fs.appendFileSync(bundle, '\n// marker\n')
  const again = await run(rel, ['no-such-command'])
  t.equal(again.code, 2)
  t.match(fs.readFileSync(bundle, 'utf8'), /\/\/ marker\n$/, 'unchanged sources: the bundle is run as it is')

  // A source whose recorded size and time no longer match: as after an edit.
  const edited = JSON.parse(fs.readFileSync(path.join(dir, 'inputs.json'), 'utf8')) as { inputs: Record<string, string>; outputs: string[] }
  edited.inputs['cloud/src/cli.ts'] = '0:0'
  // And a chunk of that earlier build which the new one will not write.
  fs.writeFileSync(path.join(dir, 'chunk-EARLIER.js'), '')
  edited.outputs.push('chunk-EARLIER.js')
  fs.writeFileSync(path.join(dir, 'inputs.json'), JSON.stringify(edited))
  const rebuilt = await run(rel, ['no-such-command'])
  t.equal(rebuilt.code, 2)
  t.notMatch(fs.readFileSync(bundle, 'utf8'), /\/\/ marker/, 'a changed source: built again')
  t.notOk(fs.existsSync(path.join(dir, 'chunk-EARLIER.js')), "the earlier build's chunk is removed")
  t.notOk(
    fs.readdirSync(dir).some((f) => f.includes('.tmp')),
    'no temporary file left behind',
  )
})

t.test('SVC_SOURCE=1 runs the TypeScript sources, without a bundle', async (t) => {
  const rel = path.join('cloud', `.bundle-test-src-${process.pid}`)
  t.after(() => fs.rmSync(path.join(ROOT, rel), { recursive: true, force: true }))
  const r = await run(rel, ['no-such-command'], { SVC_SOURCE: '1' })
  t.equal(r.code, 2)
  t.match(r.stderr, /unknown command no-such-command/)
  t.notOk(fs.existsSync(path.join(ROOT, rel)), 'no bundle built')
})
