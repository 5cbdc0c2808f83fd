// The cloud's test files run one process per folder: each folder's `folder.suite.ts` (the
// files tap starts, see package.json) imports the folder's `*.test.ts` files in name order,
// one after the other's tests have finished. Starting a process that loads the cloud costs
// about 4.5 s of CPU (Node's module loader through tap's three loader hooks, for ~1,100
// modules); a folder's files share that once. Each file still runs alone:
// `node scripts/test.mjs cloud/test/assign/assign.test.ts`.
import fs from 'node:fs'
import t from 'tap'

/** The most a folder's process may run: a file's own limit (package.json, 120 s) per file. */
const PER_FILE_MS = 120_000

/** Runs every `*.test.ts` beside `suiteUrl` (the suite file's `import.meta.url`) in this process. */
export async function runFolder(suiteUrl: string): Promise<void> {
  const dir = new URL('./', suiteUrl)
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.test.ts'))
    .sort()
  t.setTimeout(PER_FILE_MS * Math.max(1, files.length))
  for (const f of files) {
    // The file's top-level tests queue behind this one, so the next file is imported only
    // once they have run: files never overlap.
    await t.test(`loads ${f}`, async (t) => {
      await import(new URL(f, dir).href)
      t.pass(f)
    })
  }
}
