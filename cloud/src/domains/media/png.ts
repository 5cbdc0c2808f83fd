// A PNG checked whole, not by its first bytes: the 8-byte signature, then chunks (length,
// type, data, CRC-32 of type and data) with IHDR first (13 bytes, a size within bounds) and
// IEND last, and nothing after IEND. A file that only starts like a PNG (a PNG header with
// HTML or a zip after it, a truncated image, a corrupted chunk) is not one. The file is
// read once as a stream; CRCs come from node:zlib.
import fs from 'node:fs'
import { crc32 } from 'node:zlib'

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
/** Widest and tallest image accepted, pixels. */
export const PNG_MAX_SIDE = 32_768
/** A chunk's length field may not exceed 2^31 - 1 (PNG specification, 5.3). */
const MAX_CHUNK = 0x7fffffff

export type PngCheck = { ok: true; width: number; height: number } | { ok: false; reason: string }

class NotPng extends Error {}

/**
 * Walks a PNG's bytes as they come: `push` each block, then `end`. Throws NotPng at the
 * first fault, naming it.
 */
class PngWalker {
  private state: 'signature' | 'header' | 'data' | 'crc' | 'done' = 'signature'
  /** Bytes of a fixed-size field (signature, chunk header, CRC) gathered so far. */
  private field = Buffer.alloc(0)
  private offset = 0
  private index = 0
  private type = ''
  private left = 0
  private crc = 0
  private ihdr = Buffer.alloc(0)

  push(block: Buffer): void {
    let p = 0
    while (p < block.length) {
      if (this.state === 'done') throw new NotPng(`The file goes on after the PNG's IEND chunk; a PNG ends there.`)
      if (this.state === 'data') {
        const n = Math.min(this.left, block.length - p)
        const data = block.subarray(p, p + n)
        this.crc = crc32(data, this.crc)
        if (this.index === 0 && this.ihdr.length < 8) this.ihdr = Buffer.concat([this.ihdr, data]).subarray(0, 8)
        this.left -= n
        p += n
        if (this.left === 0) this.state = 'crc'
        continue
      }
      const need = this.state === 'crc' ? 4 : 8
      if (this.field.length === 0 && block.length - p >= need) {
        // The whole field is in this block (the usual case): no copy.
        this.fieldDone(block.subarray(p, p + need))
        p += need
        continue
      }
      const n = Math.min(need - this.field.length, block.length - p)
      this.field = Buffer.concat([this.field, block.subarray(p, p + n)])
      p += n
      if (this.field.length < need) continue
      const f = this.field
      this.field = Buffer.alloc(0)
      this.fieldDone(f)
    }
  }

  private fieldDone(f: Buffer): void {
    if (this.state === 'signature') {
      if (!f.equals(PNG_SIGNATURE)) throw new NotPng('The file does not start with the PNG signature.')
      this.offset = 8
      this.state = 'header'
    } else if (this.state === 'header') {
      const length = f.readUInt32BE(0)
      this.type = f.toString('latin1', 4, 8)
      if (length > MAX_CHUNK || !/^[A-Za-z]{4}$/.test(this.type)) throw new NotPng(`The PNG has a malformed chunk at byte ${this.offset}.`)
      if (this.index === 0 && (this.type !== 'IHDR' || length !== 13)) throw new NotPng('The PNG does not start with its IHDR chunk.')
      if (this.index > 0 && this.type === 'IHDR') throw new NotPng('The PNG has a second IHDR chunk.')
      if (this.type === 'IEND' && length !== 0) throw new NotPng('The PNG has a malformed IEND chunk.')
      this.crc = crc32(f.subarray(4, 8))
      this.left = length
      this.offset += 12 + length
      this.state = length === 0 ? 'crc' : 'data'
    } else {
      if (f.readUInt32BE(0) !== this.crc >>> 0) throw new NotPng(`The PNG's ${this.type} chunk fails its CRC check (corrupted?).`)
      this.index++
      this.state = this.type === 'IEND' ? 'done' : 'header'
    }
  }

  end(): { width: number; height: number } {
    if (this.state !== 'done')
      throw new NotPng(this.state === 'signature' ? 'The file is too short to be a PNG.' : 'The PNG ends before its IEND chunk (truncated?).')
    const width = this.ihdr.readUInt32BE(0)
    const height = this.ihdr.readUInt32BE(4)
    if (width <= 0 || height <= 0 || width > PNG_MAX_SIDE || height > PNG_MAX_SIDE)
      throw new NotPng(`The PNG's size (${width}×${height}) is outside 1 to ${PNG_MAX_SIDE} pixels a side.`)
    return { width, height }
  }
}

/** Reads `file` through; `ok` with the IHDR size when it is a whole PNG, else the first fault. */
export async function checkPng(file: string): Promise<PngCheck> {
  const walker = new PngWalker()
  try {
    for await (const block of fs.createReadStream(file, { highWaterMark: 256 * 1024 })) walker.push(block as Buffer)
    return { ok: true, ...walker.end() }
  } catch (e) {
    if (e instanceof NotPng) return { ok: false, reason: e.message }
    throw e
  }
}
