// Preloaded into the cloud by bench/cast-fanout.ts (through NODE_OPTIONS=--import), never by
// the product: SIGPWR (no other handler in the cloud) runs a full garbage collection, so the
// bench reads the cloud's RSS after one rather than wherever V8's heap happens to stand.
// The collector is reached without --expose-gc on the command line (a V8 flag set at run time).
// With BENCH_MEMORY_FILE set, process.memoryUsage() after the collection is written there
// (JSON), so a bench can tell the V8 heap from the rest of the RSS (sockets, buffers, malloc).
import { writeFileSync } from 'node:fs'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc')
process.on('SIGPWR', () => {
  gc()
  gc()
  const file = process.env.BENCH_MEMORY_FILE
  if (file) writeFileSync(file, JSON.stringify(process.memoryUsage()))
})
