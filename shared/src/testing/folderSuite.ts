// Test files run one process per suite: each `folder.suite.ts` (the files tap starts, see
// package.json `tap.include`) imports its folder's `*.test.ts` files in path order, one after
// the other's tests have finished. Under tap a process costs about 2 s of CPU before its
// first assertion (tap's loader hooks; for the cloud, about 5 s with its ~1,100 modules), so
// a folder shares that once. A folder whose tests take a few seconds has no suite of its own:
// with `recursive`, a suite also runs the subfolders that have none (cloud/test's and
// agent/test's top suites run their small folders), so they share one process too. With
// `recursive: 'subfolders'` a suite runs those subfolders but not the folder's own files: the
// cloud's small domain folders are `cloud/test/domains.suite.ts`, its own files
// `cloud/test/folder.suite.ts`, so the run's longest process does not hold those too. Each
// file still runs alone: `node scripts/test.mjs agent/test/unit/state.test.ts`.
//
//   // <folder>/folder.suite.ts
//   import { runFolder } from '@svc/shared/testing/folderSuite'
//   await runFolder(import.meta.url)
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import t from 'tap'

/**
 * tap starts a test process with NODE_OPTIONS naming its process-tracking hooks
 * (`--import=…@tapjs/processinfo…`), and puts them back into every child's environment as
 * the child is spawned (through process-on-spawn's listeners, kept under a global symbol):
 * every child the tests start (the cloud, the agent, the simulator, their CLIs) loaded them,
 * about 0.9 s of CPU more per child, for tracking this suite does not use (coverage is off).
 * A suite's process drops both, so its children start as they do outside the tests.
 */
export function withoutTapChildHooks(nodeOptions: string | undefined): string | undefined {
  if (!nodeOptions) return nodeOptions
  const kept = nodeOptions
    .split(/\s+(?=(?:[^"]*"[^"]*")*[^"]*$)/)
    .filter((o) => o && !/@tapjs[/+]processinfo/.test(o))
    .join(' ')
  return kept || undefined
}
const childOptions = withoutTapChildHooks(process.env.NODE_OPTIONS)
if (childOptions === undefined) delete process.env.NODE_OPTIONS
else process.env.NODE_OPTIONS = childOptions
const onSpawn = (globalThis as { [k: symbol]: { listeners?: unknown[] } | undefined })[Symbol.for('process-on-spawn@*:singletonId')]
if (Array.isArray(onSpawn?.listeners)) onSpawn.listeners.length = 0

/** The name of a suite file, one per folder that has its own process. */
export const SUITE = 'folder.suite.ts'

/**
 * A file's own limit, as when it runs alone (package.json `tap.timeout`): a hang guard, not a
 * bound on speed. Under load (the suite's own three jobs on two cores, or other work beside
 * them) a file of real processes or browser pages takes several times what it takes alone, and
 * a limit of two minutes ended healthy files; fifteen minutes still ends a hung one well inside
 * CI's limit.
 */
export const PER_FILE_MS = 15 * 60_000

export interface FolderOptions {
  /** Each file's time limit (the process's timer restarts for each file). */
  perFileMs?: number
  /**
   * Also the `*.test.ts` files of the subfolders that have no `folder.suite.ts` of their own;
   * `'subfolders'`: only those, not the folder's own files.
   */
  recursive?: boolean | 'subfolders'
}

/**
 * The `*.test.ts` files under `dir` (relative, in path order); with `recursive`, also those in
 * its subfolders, except a subfolder with a suite of its own (and what is under it); with
 * `'subfolders'`, only those.
 */
export function testFiles(dir: string, recursive: boolean | 'subfolders' = false): string[] {
  const out: string[] = []
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const name = path.posix.join(rel, e.name)
      if (e.isDirectory() && recursive && e.name !== 'node_modules' && e.name !== 'fixtures') {
        if (!fs.existsSync(path.join(dir, name, SUITE))) walk(name)
      } else if (e.isFile() && e.name.endsWith('.test.ts') && (rel !== '' || recursive !== 'subfolders')) out.push(name)
    }
  }
  walk('')
  return out.sort()
}

/** What runs once the folder's last file has run: kept on the process, so every copy of this module sees one list. */
interface FolderEnd {
  running: boolean
  closers: (() => Promise<unknown> | unknown)[]
}
const folderEnd: FolderEnd = ((globalThis as { [k: symbol]: FolderEnd })[Symbol.for('svc.folderSuite.end')] ??= { running: false, closers: [] })

/**
 * In a folder suite, registers `close` to run after the folder's last file (for something its
 * files share, such as one browser) and answers true; outside one (a file run alone) answers
 * false and the caller closes it itself.
 */
export function whenFolderEnds(close: () => Promise<unknown> | unknown): boolean {
  if (!folderEnd.running) return false
  folderEnd.closers.push(close)
  return true
}

/** Runs every `*.test.ts` beside `suiteUrl` (the suite file's `import.meta.url`) in this process. */
export async function runFolder(suiteUrl: string, opts: FolderOptions = {}): Promise<void> {
  const perFileMs = opts.perFileMs ?? PER_FILE_MS
  const dir = path.dirname(fileURLToPath(suiteUrl))
  folderEnd.running = true
  for (const f of testFiles(dir, opts.recursive)) {
    // The file's top-level tests queue behind this one, so the next file is imported only
    // once they have run: files never overlap. The process's timer restarts for each file,
    // so a file that hangs ends the folder's process after its own limit, as it would alone.
    await t.test(`loads ${f}`, async (t) => {
      await import(pathToFileURL(path.join(dir, f)).href)
      t.pass(f)
    })
    t.setTimeout(perFileMs)
  }
  // Queued behind the last file's tests: what the files shared closes, so the process can end.
  await t.test('the folder ends: what its files shared is closed', async (t) => {
    for (const close of folderEnd.closers.splice(0).reverse()) await Promise.resolve(close()).catch(() => {})
    t.pass()
  })
}
