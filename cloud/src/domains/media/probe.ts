// The background step after an upload: image dimensions read from the format's own
// header; a video's width, height and duration through ffprobe where it is installed,
// else its duration from the MP4/QuickTime `mvhd` box. Only headers are read, never the
// whole file; a file whose headers cannot be read is marked failed.
import fsp from 'node:fs/promises'
import type { MediaKind } from './sniff.js'
import { ffprobe } from './thumbnail.js'

export interface ProbeResult {
  width: number | null
  height: number | null
  durationMs: number | null
}

export class ProbeError extends Error {}

/** Width and height of a PNG, GIF, JPEG or WebP from its first bytes. */
export function imageSize(buf: Buffer): { width: number; height: number } | null {
  if (buf.length >= 24 && buf.readUInt32BE(0) === 0x89504e47 && buf.toString('latin1', 12, 16) === 'IHDR') {
    return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) }
  }
  if (buf.length >= 10 && buf.toString('latin1', 0, 3) === 'GIF') {
    return { width: buf.readUInt16LE(6), height: buf.readUInt16LE(8) }
  }
  if (buf.length >= 30 && buf.toString('latin1', 0, 4) === 'RIFF' && buf.toString('latin1', 8, 12) === 'WEBP') {
    const chunk = buf.toString('latin1', 12, 16)
    if (chunk === 'VP8 ' && buf.length >= 30) return { width: buf.readUInt16LE(26) & 0x3fff, height: buf.readUInt16LE(28) & 0x3fff }
    if (chunk === 'VP8L' && buf.length >= 25) {
      const b = buf.readUInt32LE(21)
      return { width: (b & 0x3fff) + 1, height: ((b >> 14) & 0x3fff) + 1 }
    }
    if (chunk === 'VP8X' && buf.length >= 30) return { width: buf.readUIntLE(24, 3) + 1, height: buf.readUIntLE(27, 3) + 1 }
    return null
  }
  if (buf.length >= 4 && buf[0] === 0xff && buf[1] === 0xd8) {
    let p = 2
    while (p + 9 < buf.length) {
      if (buf[p] !== 0xff) return null
      const marker = buf[p + 1]!
      if (marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
        p += 2
        continue
      }
      const len = buf.readUInt16BE(p + 2)
      // SOF0..SOF15 except DHT (c4), JPG (c8) and DAC (cc) carry the frame size.
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
        return { height: buf.readUInt16BE(p + 5), width: buf.readUInt16BE(p + 7) }
      }
      p += 2 + len
    }
  }
  return null
}

/** Duration in ms from the `moov/mvhd` box of an ISO-BMFF (MP4, QuickTime) file. */
export async function mp4DurationMs(file: string): Promise<number | null> {
  const fh = await fsp.open(file, 'r')
  try {
    const { size } = await fh.stat()
    const header = Buffer.alloc(16)
    const readBox = async (at: number): Promise<{ type: string; start: number; end: number } | null> => {
      if (at + 8 > size) return null
      await fh.read(header, 0, 16, at)
      let len = header.readUInt32BE(0)
      const type = header.toString('latin1', 4, 8)
      let start = at + 8
      if (len === 1) {
        len = Number(header.readBigUInt64BE(8))
        start = at + 16
      } else if (len === 0) len = size - at
      if (len < 8 || at + len > size) return null
      return { type, start, end: at + len }
    }
    const find = async (from: number, to: number, type: string) => {
      for (let at = from; at < to; ) {
        const box = await readBox(at)
        if (!box) return null
        if (box.type === type) return box
        at = box.end
      }
      return null
    }
    const moov = await find(0, size, 'moov')
    if (!moov) return null
    const mvhd = await find(moov.start, moov.end, 'mvhd')
    if (!mvhd) return null
    const body = Buffer.alloc(Math.min(32, mvhd.end - mvhd.start))
    await fh.read(body, 0, body.length, mvhd.start)
    const version = body[0]
    let timescale: number
    let duration: number
    if (version === 1 && body.length >= 32) {
      timescale = body.readUInt32BE(20)
      duration = Number(body.readBigUInt64BE(24))
    } else if (body.length >= 20) {
      timescale = body.readUInt32BE(12)
      duration = body.readUInt32BE(16)
    } else return null
    if (!timescale) return null
    return Math.round((duration * 1000) / timescale)
  } finally {
    await fh.close()
  }
}

export async function probe(file: string, kind: MediaKind, mimeType: string): Promise<ProbeResult> {
  const out: ProbeResult = { width: null, height: null, durationMs: null }
  if (kind === 'image') {
    const fh = await fsp.open(file, 'r')
    try {
      const buf = Buffer.alloc(256 * 1024)
      const { bytesRead } = await fh.read(buf, 0, buf.length, 0)
      const dims = imageSize(buf.subarray(0, bytesRead))
      if (!dims || dims.width <= 0 || dims.height <= 0) throw new ProbeError('The image header could not be read.')
      out.width = dims.width
      out.height = dims.height
    } finally {
      await fh.close()
    }
  } else if (kind === 'video') {
    const facts = await ffprobe(file)
    if (facts && facts.durationMs !== null) return facts
  }
  if (kind === 'video' && (mimeType === 'video/mp4' || mimeType === 'video/quicktime')) {
    const d = await mp4DurationMs(file)
    if (d === null) throw new ProbeError('The video has no readable moov/mvhd box.')
    out.durationMs = d
  }
  return out
}
