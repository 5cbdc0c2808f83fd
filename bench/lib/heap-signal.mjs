// Preloaded into the cloud by bench/memory-per-screen.ts --heap-snapshots (never by the
// product): SIGWINCH writes a V8 heap snapshot to BENCH_HEAP_DIR/<n>.heapsnapshot (n = 1,
// 2, …), renamed there once complete. Not SIGUSR2 (--heapsnapshot-signal's usual one): the
// cloud shuts down on it.
import { renameSync } from 'node:fs'
import { join } from 'node:path'
import { writeHeapSnapshot } from 'node:v8'

let n = 0
process.on('SIGWINCH', () => {
  const dir = process.env.BENCH_HEAP_DIR
  if (!dir) return
  const file = join(dir, `${++n}.heapsnapshot`)
  renameSync(writeHeapSnapshot(`${file}.tmp`), file)
})
