// Pools the pairs of several runs of `bench/audit-write.ts` (ROUNDS mode, its output saved
// to files): the median over all their pairs of the ratio on ÷ off, of the median latency and
// of the CPU per request, each with a 95 % bootstrap confidence interval (bench/lib/bootstrap.ts).
// One run's 16 pairs leave the median a few per cent either way; many runs narrow it.
//   pnpm exec tsx bench/audit-pairs.ts FILE…
import { readFileSync } from 'node:fs'
import { formatCi, medianCi } from './lib/bootstrap.js'

const LINE = /^round (\d+) (on|off) (\{.*?\}) cpu us\/req (\d+)/
const files = process.argv.slice(2)
if (files.length === 0) {
  console.error('usage: pnpm exec tsx bench/audit-pairs.ts FILE…')
  process.exit(2)
}
const p50: number[] = []
const cpu: number[] = []
for (const file of files) {
  const rounds = new Map<number, Record<string, { p50: number; cpu: number }>>()
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = LINE.exec(line)
    if (!m) continue
    const r = rounds.get(Number(m[1])) ?? {}
    r[m[2]!] = { p50: (JSON.parse(m[3]!) as { p50: number }).p50, cpu: Number(m[4]) }
    rounds.set(Number(m[1]), r)
  }
  let pairs = 0
  for (const r of rounds.values()) {
    if (!r.on || !r.off) continue
    p50.push(r.on.p50 / r.off.p50)
    cpu.push(r.on.cpu / r.off.cpu)
    pairs++
  }
  console.log(`${file}: ${pairs} pairs`)
}
console.log(`on ÷ off over ${p50.length} pairs: median latency ${formatCi(medianCi(p50))}; CPU per request ${formatCi(medianCi(cpu))}`)
