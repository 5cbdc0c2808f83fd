// Real small files built from bytes, a multipart/form-data encoder, and a harness with its
// own data directory (so stored files never mix between test processes).
import { servicesOf } from '../../src/app.js'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import zlib from 'node:zlib'
import type { Test } from 'tap'
import { build, type Harness } from '../helpers.js'
import type { Config } from '../../src/config.js'

/** A valid 1×1 RGBA PNG. */
export const PNG_1x1 = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f000500020127efa3d50000000049454e44ae426082',
  'hex',
)

/** A `width`×`height` truecolour PNG, grey, with real CRCs. */
export function png(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer): Buffer => {
    const len = Buffer.alloc(4)
    len.writeUInt32BE(data.length)
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data])
    const crc = Buffer.alloc(4)
    crc.writeUInt32BE(zlib.crc32(body) >>> 0)
    return Buffer.concat([len, body, crc])
  }
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr[8] = 8
  ihdr[9] = 2
  const raw = Buffer.alloc(height * (1 + width * 3), 0x7f)
  // Each row starts with its filter type (0, none): an image decoder reads it (thumbnails).
  for (let y = 0; y < height; y++) raw[y * (1 + width * 3)] = 0
  return Buffer.concat([PNG_1x1.subarray(0, 8), chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(raw)), chunk('IEND', Buffer.alloc(0))])
}

/** A 3×2 GIF header (enough for sniffing and dimensions). */
export const GIF_3x2 = Buffer.from('474946383961030002008000000000000000ffffff2c00000000030002000002024401003b', 'hex')

export const SVG = Buffer.from(
  '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script><rect width="10" height="10"/></svg>\n',
)

function box(type: string, ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload)
  const head = Buffer.alloc(8)
  head.writeUInt32BE(body.length + 8, 0)
  head.write(type, 4, 'latin1')
  return Buffer.concat([head, body])
}

/** A minimal MP4: `ftyp` + `moov/mvhd` (version 0) saying `durationMs` at timescale 1000. */
export function mp4(durationMs: number): Buffer {
  const ftyp = box('ftyp', Buffer.from('isom'), Buffer.from([0, 0, 2, 0]), Buffer.from('isomiso2mp41'))
  const mvhd = Buffer.alloc(100)
  mvhd.writeUInt32BE(1000, 12) // timescale
  mvhd.writeUInt32BE(durationMs, 16) // duration
  mvhd.writeUInt32BE(0x00010000, 20) // rate 1.0
  mvhd.writeUInt16BE(0x0100, 24) // volume 1.0
  mvhd.writeUInt32BE(2, 96) // next track id
  return Buffer.concat([ftyp, box('moov', box('mvhd', mvhd)), box('mdat', Buffer.alloc(64, 7))])
}

/** A stored (uncompressed) zip holding the given files. */
export function zip(files: Record<string, string>): Buffer {
  const locals: Buffer[] = []
  const centrals: Buffer[] = []
  let offset = 0
  for (const [name, text] of Object.entries(files)) {
    const data = Buffer.from(text)
    const n = Buffer.from(name)
    const crc = zlib.crc32(data)
    const l = Buffer.alloc(30)
    l.writeUInt32LE(0x04034b50, 0)
    l.writeUInt16LE(20, 4)
    l.writeUInt32LE(crc, 14)
    l.writeUInt32LE(data.length, 18)
    l.writeUInt32LE(data.length, 22)
    l.writeUInt16LE(n.length, 26)
    const c = Buffer.alloc(46)
    c.writeUInt32LE(0x02014b50, 0)
    c.writeUInt16LE(20, 4)
    c.writeUInt16LE(20, 6)
    c.writeUInt32LE(crc, 16)
    c.writeUInt32LE(data.length, 20)
    c.writeUInt32LE(data.length, 24)
    c.writeUInt16LE(n.length, 28)
    c.writeUInt32LE(offset, 42)
    locals.push(l, n, data)
    centrals.push(c, n)
    offset += 30 + n.length + data.length
  }
  const cd = Buffer.concat(centrals)
  const e = Buffer.alloc(22)
  e.writeUInt32LE(0x06054b50, 0)
  e.writeUInt16LE(Object.keys(files).length, 8)
  e.writeUInt16LE(Object.keys(files).length, 10)
  e.writeUInt32LE(cd.length, 12)
  e.writeUInt32LE(offset, 16)
  return Buffer.concat([...locals, cd, e])
}

/** Encodes a multipart/form-data body; a Buffer value becomes a file part. */
export function form(fields: Record<string, string | { filename: string; data: Buffer; type?: string }>): { payload: Buffer; headers: Record<string, string> } {
  const boundary = '----svcTestBoundary7MA4YWxkTrZu0gW'
  const chunks: Buffer[] = []
  for (const [name, v] of Object.entries(fields)) {
    if (typeof v === 'string') {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${v}\r\n`))
    } else {
      chunks.push(
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${v.filename}"\r\nContent-Type: ${v.type ?? 'application/octet-stream'}\r\n\r\n`,
        ),
        v.data,
        Buffer.from('\r\n'),
      )
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`))
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }
}

export interface MediaHarness extends Harness {
  dataDir: string
  upload(token: string, fields: Parameters<typeof form>[0], headers?: Record<string, string>): ReturnType<Harness['req']>
  /** Uploads and runs the background probe; returns the ready item. */
  ready(token: string, filename: string, data: Buffer, extra?: Record<string, string>): Promise<Record<string, any>>
}

export async function buildMedia(t: Test, config: Partial<Config> = {}): Promise<MediaHarness> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-media-'))
  const h = await build(t, { dataDir, ...config })
  t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }))
  const upload: MediaHarness['upload'] = (token, fields, headers = {}) => {
    const f = form(fields)
    return h.app.inject({
      method: 'POST',
      url: '/v1/media/upload',
      headers: { authorization: `Bearer ${token}`, ...f.headers, ...headers },
      payload: f.payload,
    })
  }
  return {
    ...h,
    dataDir,
    upload,
    async ready(token, filename, data, extra = {}) {
      const res = await upload(token, { name: filename, ...extra, file: { filename, data } })
      if (res.statusCode !== 201) throw new Error(`upload ${filename}: ${res.statusCode} ${res.body}`)
      await servicesOf(h.app).media.processPending()
      return (await h.req('GET', `/v1/media/${res.json().data.id}`, token)).json().data
    },
  }
}
