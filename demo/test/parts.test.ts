// The demo's pieces that need no network: the generated PNG, the data-folder rule and
// the plain (non-terminal) progress output.
import t from 'tap'
import { mkdtempSync, writeFileSync, existsSync, readdirSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { inflateSync, crc32 } from 'node:zlib'
import { demoPng } from '../png.js'
import { MARKER, prepareDataDir } from '../Demo.js'
import { Progress } from '../progress.js'

t.test('demoPng is a well-formed PNG', async (t) => {
  const png = demoPng(32, 16)
  t.same([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'signature')
  let o = 8
  const types: string[] = []
  let idat = Buffer.alloc(0)
  while (o < png.length) {
    const len = png.readUInt32BE(o)
    const type = png.subarray(o + 4, o + 8).toString('ascii')
    const body = png.subarray(o + 4, o + 8 + len)
    t.equal(png.readUInt32BE(o + 8 + len), crc32(body) >>> 0, `${type} CRC`)
    if (type === 'IHDR') {
      t.equal(png.readUInt32BE(o + 8), 32)
      t.equal(png.readUInt32BE(o + 12), 16)
    }
    if (type === 'IDAT') idat = Buffer.concat([idat, png.subarray(o + 8, o + 8 + len)])
    types.push(type)
    o += 12 + len
  }
  t.same(types, ['IHDR', 'IDAT', 'IEND'])
  t.equal(inflateSync(idat).length, 16 * (1 + 32 * 3), 'one filter byte + RGB per row')
})

t.test('the data folder: new, reset when the demo made it, refused otherwise', async (t) => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'svc-demo-dir-'))
  t.teardown(() => rmSync(root, { recursive: true, force: true }))
  const dir = path.join(root, 'demo')
  t.equal(await prepareDataDir(dir), 'new')
  t.ok(existsSync(path.join(dir, MARKER)))
  writeFileSync(path.join(dir, 'svc.sqlite'), 'old')
  t.equal(await prepareDataDir(dir), 'reset')
  t.same(readdirSync(dir), [MARKER], 'emptied')
  const other = path.join(root, 'real-data')
  await prepareDataDir(other)
  writeFileSync(path.join(other, 'svc.sqlite'), 'precious')
  rmSync(path.join(other, MARKER))
  await t.rejects(prepareDataDir(other), /not empty and was not made by the demo/)
  t.ok(existsSync(path.join(other, 'svc.sqlite')), 'nothing deleted')
})

t.test('plain progress: a start line, periodic lines while waiting, a result line', async (t) => {
  let out = ''
  let wrote: (() => void) | null = null
  const p = new Progress({
    write: (s) => {
      out += s
      wrote?.()
    },
    tty: false,
    plainEveryMs: 20,
  })
  const periodic = () => out.split('\n').filter((l) => l.startsWith('… wait for things — 1/2 done')).length
  await p.run('wait for things', async (update) => {
    update('1/2 done')
    // The step lasts until two periodic lines are out (awaited on the output, not slept for).
    while (periodic() < 2) await new Promise<void>((r) => (wrote = r))
    return 'all done'
  })
  await t.rejects(
    p.run('fail', async () => Promise.reject(new Error('boom'))),
    /boom/,
  )
  const lines = out.trim().split('\n')
  t.equal(lines[0], '… wait for things')
  t.ok(periodic() >= 2, 'periodic lines')
  t.match(out, /✔ wait for things — all done \(\d+\.\ds\)/)
  t.match(out, /✘ fail — boom/)
  t.same(
    p.steps.map((s) => [s.step, s.ok, s.detail]),
    [
      ['wait for things', true, 'all done'],
      ['fail', false, 'boom'],
    ],
  )
})
