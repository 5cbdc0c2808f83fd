// Preloaded into the cloud by `BENCH_CPU_PROF=<dir>` (bench/cast-fanout.ts, through
// NODE_OPTIONS=--import): SIGWINCH (no other handler; close-with-grace takes SIGUSR2) starts the V8 CPU profiler, the next SIGWINCH stops it
// and writes <dir>/cloud-<pid>-<n>.cpuprofile (open it in Chrome DevTools or speedscope).
import { Session } from 'node:inspector'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'

const dir = process.env.BENCH_CPU_PROF
if (dir) {
  const session = new Session()
  session.connect()
  let on = false
  let n = 0
  process.on('SIGWINCH', () => {
    if (!on) {
      on = true
      session.post('Profiler.enable', () => session.post('Profiler.setSamplingInterval', { interval: 500 }, () => session.post('Profiler.start')))
      return
    }
    on = false
    session.post('Profiler.stop', (err, res) => {
      if (!err) writeFileSync(join(dir, `cloud-${process.pid}-${++n}.cpuprofile`), JSON.stringify(res.profile))
    })
  })
}
