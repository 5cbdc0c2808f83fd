// The "this test needs system tool X" helper, through a real tap run of a test file:
// the tool missing → one skip line naming it and how to get it (exit 0); missing with
// CI=true → a failure naming it (exit 1); present → the test runs.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { HANG_GUARD_MS, missingTool, onPath, postgres, socat, toolsRequired } from '@svc/shared/testing'
import { REPO_ROOT, bundledEntry } from '@svc/shared/testing/bundle'

// The fixture as a bundle (built once per run), not through tsx: a child process each run.
const FIXTURE = await bundledEntry(path.relative(REPO_ROOT, path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/needsFake.ts')))

function run(env: NodeJS.ProcessEnv): { status: number | null; out: string } {
  const base: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (k !== 'CI' && !k.startsWith('TAP')) base[k] = v
  const r = spawnSync(process.execPath, [FIXTURE], { env: { ...base, ...env }, encoding: 'utf8', timeout: HANG_GUARD_MS })
  return { status: r.status, out: r.stdout + r.stderr }
}

t.test('onPath finds executables only; the lookups take the env given', async (t) => {
  const dir = t.testdir({ 'svc-fake-tool': '#!/bin/sh\n', 'not-executable': '' })
  fs.chmodSync(path.join(dir, 'svc-fake-tool'), 0o755)
  t.equal(onPath('svc-fake-tool', { PATH: dir }), true)
  t.equal(onPath('not-executable', { PATH: dir }), false)
  t.equal(onPath('svc-fake-tool', { PATH: '' }), false)
  t.match(missingTool(socat, { PATH: '' }), /^needs socat, not found: apt-get install -y socat/)
  t.equal(missingTool(postgres, { SVC_TEST_DATABASE_URL: 'postgres://x' }), null)
  t.match(missingTool(postgres, {}), /SVC_TEST_DATABASE_URL/)
  t.equal(toolsRequired({ CI: 'true' }), true)
  t.equal(toolsRequired({}), false)
})

t.test('a tap file that needs a missing tool: one skip line, exit 0; with CI=true: a failure, exit 1; with the tool: it runs', async (t) => {
  const dir = t.testdir({ 'svc-fake-tool': '#!/bin/sh\n' })
  fs.chmodSync(path.join(dir, 'svc-fake-tool'), 0o755)

  const skipped = run({})
  t.equal(skipped.status, 0, 'exit 0')
  const skipLines = skipped.out.split('\n').filter((l) => /# SKIP/.test(l))
  t.equal(skipLines.length, 1)
  t.match(skipLines[0], /# SKIP needs svc-fake-tool, not found: put svc-fake-tool on PATH/)
  t.notMatch(skipped.out, /ran with the tool/)

  const failed = run({ CI: 'true' })
  t.equal(failed.status, 1, 'exit 1')
  t.match(failed.out, /not ok 1 - needs svc-fake-tool, not found: put svc-fake-tool on PATH \(CI is set: a missing tool fails\)/)

  const ran = run({ PATH: `${dir}${path.delimiter}${process.env.PATH}` })
  t.equal(ran.status, 0, 'exit 0')
  t.match(ran.out, /ok 1 - ran with the tool/)
})
