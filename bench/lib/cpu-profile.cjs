// Preloaded into the cloud by bench/cast-fanout.ts with BENCH_CPU_PROF=<dir> (NODE_OPTIONS
// --require; `--cpu-prof` itself is not allowed there): the first SIGWINCH (close-with-grace takes SIGUSR2) starts the V8 CPU
// profiler, the second writes <dir>/cloud-<pid>.cpuprofile, so a profile covers one phase.
const inspector = require('node:inspector')
const { writeFileSync } = require('node:fs')
const { join } = require('node:path')

const dir = process.env.BENCH_CPU_PROF
const session = new inspector.Session()
session.connect()
let running = false
process.on('SIGWINCH', () => {
  if (!running) {
    running = true
    session.post('Profiler.setSamplingInterval', { interval: 500 }, () => session.post('Profiler.enable', () => session.post('Profiler.start')))
    return
  }
  running = false
  session.post('Profiler.stop', (err, res) => {
    if (!err) writeFileSync(join(dir, `cloud-${process.pid}.cpuprofile`), JSON.stringify(res.profile))
  })
})
