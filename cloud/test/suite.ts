// The cloud's test files run one process per folder: each folder's `folder.suite.ts` (the
// files tap starts, see package.json) imports the folder's `*.test.ts` files in name order,
// one after the other's tests have finished. Starting a process that loads the cloud costs
// about 4.5 s of CPU (Node's module loader through tap's three loader hooks, for ~1,100
// modules); a folder's files share that once. Each file still runs alone:
// `node scripts/test.mjs cloud/test/assign/assign.test.ts`.
import fs from 'node:fs'
import t from 'tap'

/** A file's own limit, as when it runs alone (package.json `tap.timeout`). */
const PER_FILE_MS = 120_000

/** Runs every `*.test.ts` beside `suiteUrl` (the suite file's `import.meta.url`) in this process. */
export async function runFolder(suiteUrl: string, perFileMs = PER_FILE_MS): Promise<void> {
  const dir = new URL('./', suiteUrl)
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.test.ts'))
    .sort()
  for (const f of files) {
    // The file's top-level tests queue behind this one, so the next file is imported only
    // once they have run: files never overlap. The process's timer restarts for each file,
    // so a file that hangs ends the folder's process after its own limit, as it would alone.
    await t.test(`loads ${f}`, async (t) => {
      await import(new URL(f, dir).href)
      t.pass(f)
    })
    t.setTimeout(perFileMs)
  }
}
