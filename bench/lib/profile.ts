// Optional CPU profile of one phase of a bench: with BENCH_CPU_PROFILE=<file>, profile(fn)
// records fn's run with the inspector and writes a .cpuprofile (open in Chrome DevTools).
import fs from 'node:fs'
import { Session } from 'node:inspector/promises'

export async function profile<T>(fn: () => Promise<T>, file = process.env.BENCH_CPU_PROFILE): Promise<T> {
  if (!file) return fn()
  const s = new Session()
  s.connect()
  await s.post('Profiler.enable')
  await s.post('Profiler.start')
  try {
    return await fn()
  } finally {
    const { profile } = await s.post('Profiler.stop')
    fs.writeFileSync(file, JSON.stringify(profile))
    s.disconnect()
  }
}
