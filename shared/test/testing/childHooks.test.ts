// A suite's children start without tap's process-tracking hooks (folderSuite.ts): each would
// cost about 0.9 s of CPU more, for tracking the suite does not use.
import { execFileSync } from 'node:child_process'
import t from 'tap'
import { withoutTapChildHooks } from '../../src/testing/folderSuite.js'

const HOOKS = '"--import=file:///r/node_modules/.pnpm/@tapjs+processinfo@3.1.12/node_modules/@tapjs/processinfo/dist/esm/import.mjs"'

t.test('the hooks go, every other option stays', async (t) => {
  t.equal(withoutTapChildHooks(HOOKS), undefined)
  t.equal(withoutTapChildHooks(`--require /tmp/log.cjs ${HOOKS}`), '--require /tmp/log.cjs')
  t.equal(withoutTapChildHooks(`${HOOKS} --max-old-space-size=512`), '--max-old-space-size=512')
  t.equal(
    withoutTapChildHooks('"--import=file:///a b/loader.mjs" --enable-source-maps'),
    '"--import=file:///a b/loader.mjs" --enable-source-maps',
    'a quoted option with a space is one',
  )
  t.equal(withoutTapChildHooks(undefined), undefined)
})

t.test('a child started by a test has no tap hooks in its NODE_OPTIONS', async (t) => {
  const seen = execFileSync(process.execPath, ['-e', 'process.stdout.write(process.env.NODE_OPTIONS ?? "")']).toString()
  t.notMatch(seen, /processinfo/, `the child's NODE_OPTIONS: ${JSON.stringify(seen)}`)
})
