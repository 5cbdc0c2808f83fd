// A gzipped tar (POSIX ustar) of a folder, written with Node alone: `agent pack` must work
// on a machine with Node and npm only. Entries are owned by root (uid/gid 0), keep their
// permission bits, and come in name order; only folders and regular files are written.
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'

const BLOCK = 512

function octal(n: number, width: number): string {
  return `${n.toString(8).padStart(width - 1, '0')}\0`
}

/** Splits a path into ustar's prefix (≤ 155 bytes) and name (≤ 100 bytes) at a slash. */
function splitName(name: string): { prefix: string; name: string } {
  if (Buffer.byteLength(name) <= 100) return { prefix: '', name }
  for (let i = name.indexOf('/'); i >= 0; i = name.indexOf('/', i + 1)) {
    const prefix = name.slice(0, i)
    const rest = name.slice(i + 1)
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(rest) <= 100) return { prefix, name: rest }
  }
  throw new Error(`path too long for a tar entry: ${name}`)
}

function header(name: string, mode: number, size: number, mtime: number, type: '0' | '5'): Buffer {
  const h = Buffer.alloc(BLOCK)
  const parts = splitName(name)
  h.write(parts.name, 0, 100, 'utf8')
  h.write(octal(mode & 0o7777, 8), 100, 'ascii')
  h.write(octal(0, 8), 108, 'ascii')
  h.write(octal(0, 8), 116, 'ascii')
  h.write(octal(size, 12), 124, 'ascii')
  h.write(octal(mtime, 12), 136, 'ascii')
  h.write('        ', 148, 'ascii')
  h.write(type, 156, 'ascii')
  h.write('ustar\u000000', 257, 'ascii')
  h.write('root', 265, 'ascii')
  h.write('root', 297, 'ascii')
  h.write(parts.prefix, 345, 155, 'utf8')
  let sum = 0
  for (const b of h) sum += b
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii')
  return h
}

/** Every folder and file under `dir`, as paths relative to it, in name order (a folder before its contents). */
function walk(dir: string, rel = ''): string[] {
  const out: string[] = []
  for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
    const r = rel ? `${rel}/${name}` : name
    const st = fs.lstatSync(path.join(dir, r))
    if (st.isDirectory()) out.push(`${r}/`, ...walk(dir, r))
    else if (st.isFile()) out.push(r)
    else throw new Error(`not a file or folder: ${r}`)
  }
  return out
}

/** Writes `<dir>` as `<top>/…` into the gzipped tar `outFile`; `mtime` in seconds. */
export function writeTarGz(dir: string, top: string, outFile: string, mtime: number): void {
  const chunks: Buffer[] = [header(`${top}/`, 0o755, 0, mtime, '5')]
  for (const rel of walk(dir)) {
    const abs = path.join(dir, rel)
    const mode = fs.statSync(abs).mode
    if (rel.endsWith('/')) {
      chunks.push(header(`${top}/${rel}`, mode, 0, mtime, '5'))
      continue
    }
    const body = fs.readFileSync(abs)
    chunks.push(header(`${top}/${rel}`, mode, body.length, mtime, '0'), body)
    const pad = (BLOCK - (body.length % BLOCK)) % BLOCK
    if (pad) chunks.push(Buffer.alloc(pad))
  }
  chunks.push(Buffer.alloc(BLOCK * 2))
  fs.writeFileSync(outFile, zlib.gzipSync(Buffer.concat(chunks), { level: 9 }))
}
