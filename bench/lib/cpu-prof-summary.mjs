// Summarises a .cpuprofile (from BENCH_CPU_PROF, bench/lib/cpu-prof.mjs, or node --cpu-prof):
//   node bench/lib/cpu-prof-summary.mjs FILE [top=40] [--incl=REGEX]
// Self time by function and by file; with --incl, inclusive time (each frame counted once
// per stack) of the frames whose label matches REGEX, e.g. --incl='cloud/src|shared/src'.
// Careful with inclusive times: a frame that calls into the rest of the program (the packet
// guard's parse hands each packet to aedes) carries everything below it.
import { readFileSync } from 'node:fs'

const args = process.argv.slice(2)
const file = args.find((a) => !a.startsWith('--') && !/^\d+$/.test(a))
const top = Number(args.find((a) => /^\d+$/.test(a)) ?? 40)
const inclArg = args.find((a) => a.startsWith('--incl='))
if (!file) {
  console.error('usage: node bench/lib/cpu-prof-summary.mjs FILE [top] [--incl=REGEX]')
  process.exit(2)
}
const p = JSON.parse(readFileSync(file, 'utf8'))
const byId = new Map(p.nodes.map((n) => [n.id, n]))
const parent = new Map()
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
const self = new Map()
for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0))
const fileOf = (cf) =>
  (cf.url || '(native)')
    .replace(/^file:\/\//, '')
    .replace(/.*node_modules\/\.pnpm\/[^/]+\/node_modules\//, '')
    .replace(/.*\/(cloud|shared|agent|bench)\/src\//, '$1/src/')
const label = (n) => `${n.callFrame.functionName || '(anonymous)'} ${fileOf(n.callFrame)}:${n.callFrame.lineNumber + 1}`
const fn = new Map()
const fl = new Map()
let total = 0
let idle = 0
for (const [id, t] of self) {
  const n = byId.get(id)
  fn.set(label(n), (fn.get(label(n)) ?? 0) + t)
  fl.set(fileOf(n.callFrame), (fl.get(fileOf(n.callFrame)) ?? 0) + t)
  total += t
  if (n.callFrame.functionName === '(idle)') idle += t
}
const ms = (t) => `${(t / 1000).toFixed(0).padStart(7)} ms ${((100 * t) / total).toFixed(1).padStart(5)} %`
const show = (m, title) => {
  console.log(`== ${title}`)
  for (const [k, t] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${ms(t)}  ${k}`)
}
console.log(`${file}: ${(total / 1000).toFixed(0)} ms sampled, ${(idle / 1000).toFixed(0)} ms idle, ${((total - idle) / 1000).toFixed(0)} ms busy`)
show(fn, 'self time by function')
show(fl, 'self time by file')
if (inclArg) {
  const rx = new RegExp(inclArg.slice(7))
  const incl = new Map()
  for (const [id, t] of self) {
    if (byId.get(id).callFrame.functionName === '(idle)') continue
    const seen = new Set()
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const l = label(byId.get(cur))
      if (seen.has(l) || !rx.test(l)) continue
      seen.add(l)
      incl.set(l, (incl.get(l) ?? 0) + t)
    }
  }
  show(incl, `inclusive time of frames matching ${rx}`)
}
