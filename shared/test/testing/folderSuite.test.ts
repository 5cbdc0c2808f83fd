// Test files run one process per suite (`folder.suite.ts`): which files a suite runs, and
// that every test file of the workspace is run by exactly one suite that tap starts (a
// folder without a suite, under no recursive one, would silently leave its tests out of
// `pnpm test`; one under two suites would run twice).
import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { testFiles } from '@svc/shared/testing/folderSuite'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')
const PACKAGES = ['agent', 'cloud', 'shared', 'firmware-sim', 'demo']

/** A glob of tap.include as a regular expression (`**` any folders, `*` within one name). */
const globRegExp = (glob: string) =>
  new RegExp(
    `^${glob
      .split('/')
      .map((part) => (part === '**' ? '(?:[^/]+/)*' : `${part.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}/`))
      .join('')
      .slice(0, -1)}$`,
  )

/** Every file under `dir` (relative to the repository) whose name passes `keep`, outside node_modules. */
function find(dir: string, keep: (name: string) => boolean): string[] {
  const out: string[] = []
  for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.posix.join(dir, e.name)
    if (e.isDirectory() && e.name !== 'node_modules' && !e.name.startsWith('.')) out.push(...find(rel, keep))
    else if (e.isFile() && keep(e.name)) out.push(rel)
  }
  return out
}

t.test('a suite runs its folder’s test files in path order; recursive: also subfolders without a suite of their own', async (t) => {
  const dir = t.testdir({
    'b.test.ts': '',
    'a.test.ts': '',
    'helpers.ts': '',
    'folder.suite.ts': '',
    sub: { 'c.test.ts': '', 'a.test.ts': '', deeper: { 'd.test.ts': '' } },
    own: { 'folder.suite.ts': '', 'e.test.ts': '', inner: { 'f.test.ts': '' } },
    fixtures: { 'x.test.ts': '' },
  })
  t.same(testFiles(dir), ['a.test.ts', 'b.test.ts'])
  t.same(testFiles(dir, true), ['a.test.ts', 'b.test.ts', 'sub/a.test.ts', 'sub/c.test.ts', 'sub/deeper/d.test.ts'])
  t.same(testFiles(path.join(dir, 'own'), true), ['e.test.ts', 'inner/f.test.ts'], 'the folder with its own suite runs what is under it')
  t.same(testFiles(dir, 'subfolders'), ['sub/a.test.ts', 'sub/c.test.ts', 'sub/deeper/d.test.ts'], "'subfolders': not the folder's own files")
})

t.test('every test file of the workspace is run by exactly one suite that tap starts', async (t) => {
  const include = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { tap: { include: string[] } }).tap.include.map(globRegExp)
  const suites = PACKAGES.flatMap((p) => find(p, (n) => n.endsWith('.suite.ts')))
  t.ok(suites.length > 15, `${suites.length} suites`)
  for (const s of suites)
    t.ok(
      include.some((r) => r.test(s)),
      `tap starts ${s}`,
    )
  for (const glob of include)
    t.ok(
      suites.some((s) => glob.test(s)),
      `${glob} names a suite`,
    )
  const run = new Map<string, string[]>()
  for (const s of suites) {
    const dir = path.posix.dirname(s)
    const text = fs.readFileSync(path.join(ROOT, s), 'utf8')
    const recursive = /recursive:\s*'subfolders'/.test(text) ? 'subfolders' : /recursive:\s*true/.test(text)
    for (const f of testFiles(path.join(ROOT, dir), recursive)) {
      const file = path.posix.join(dir, f)
      run.set(file, [...(run.get(file) ?? []), s])
    }
  }
  const all = PACKAGES.flatMap((p) => find(p, (n) => n.endsWith('.test.ts')))
  t.ok(all.length > 150, `${all.length} test files`)
  t.same(
    all.filter((f) => !run.has(f)),
    [],
    'no test file left out',
  )
  t.same(
    [...run].filter(([, by]) => by.length > 1),
    [],
    'no test file run by two suites',
  )
})
