// A small real PNG made in code (no image library): an RGB gradient with a colour band,
// 8-bit truecolour, one IDAT chunk compressed with zlib, CRCs from node:zlib.
import { crc32, deflateSync } from 'node:zlib'

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4)
  len.writeUInt32BE(data.length)
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(body) >>> 0)
  return Buffer.concat([len, body, crc])
}

/** A `width`×`height` PNG: a diagonal gradient with a lighter band across the middle. */
export function demoPng(width = 320, height = 180): Buffer {
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header[8] = 8 // bit depth
  header[9] = 2 // colour type: truecolour
  header[10] = 0 // deflate
  header[11] = 0 // adaptive filtering
  header[12] = 0 // no interlace
  const row = 1 + width * 3
  const raw = Buffer.alloc(row * height)
  for (let y = 0; y < height; y++) {
    raw[y * row] = 0 // filter: none
    const band = Math.abs(y - height / 2) < height / 8
    for (let x = 0; x < width; x++) {
      const o = y * row + 1 + x * 3
      raw[o] = Math.round((x / width) * 200) + (band ? 55 : 0)
      raw[o + 1] = Math.round((y / height) * 160) + (band ? 80 : 20)
      raw[o + 2] = 200 - Math.round((x / width) * 120) + (band ? 40 : 0)
    }
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ])
}
