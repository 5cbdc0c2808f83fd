// Compares two V8 heap snapshots (bench/memory-per-screen.ts --heap-snapshots): the self
// size and count per constructor name (per string for strings, per code kind) that grew from
// the first to the second, largest first, divided by `per` (e.g. the connections added).
//   node bench/lib/heap-diff.mjs idle.heapsnapshot connected.heapsnapshot [per=1] [rows=40]
import { readFileSync } from 'node:fs'

function summary(file) {
  const snap = JSON.parse(readFileSync(file, 'utf8'))
  const meta = snap.snapshot.meta
  const fields = meta.node_fields
  const types = meta.node_types[0]
  const stride = fields.length
  const iType = fields.indexOf('type')
  const iName = fields.indexOf('name')
  const iSize = fields.indexOf('self_size')
  const nodes = snap.nodes
  const strings = snap.strings
  const out = new Map()
  for (let i = 0; i < nodes.length; i += stride) {
    const type = types[nodes[i + iType]]
    let name = type === 'object' || type === 'closure' || type === 'native' ? strings[nodes[i + iName]] : `(${type})`
    if (type === 'closure') name = `closure ${name}`
    const e = out.get(name) ?? { size: 0, count: 0 }
    e.size += nodes[i + iSize]
    e.count++
    out.set(name, e)
  }
  return out
}

const [a, b, perArg, rowsArg] = process.argv.slice(2)
const per = Number(perArg ?? 1)
const rows = Number(rowsArg ?? 40)
const before = summary(a)
const after = summary(b)
const diff = []
let total = 0
for (const [name, e] of after) {
  const o = before.get(name) ?? { size: 0, count: 0 }
  const d = e.size - o.size
  total += d
  if (d > 0) diff.push({ name, bytes: d / per, count: (e.count - o.count) / per })
}
diff.sort((x, y) => y.bytes - x.bytes)
console.log(`heap growth ${(total / per).toFixed(0)} B per unit (${per} units)`)
for (const d of diff.slice(0, rows)) console.log(`${d.bytes.toFixed(0).padStart(8)} B  ${d.count.toFixed(2).padStart(7)}×  ${d.name.slice(0, 100)}`)
