// What a file is, judged from its bytes (never from its name or the client's
// Content-Type), against an allowlist: anything not listed — SVG, HTML, scripts,
// archives without an index.html — is refused with 415 unsupported_type. A PNG is checked
// whole (domains/media/png.ts): chunks, CRCs, IEND last and nothing after it.
import fsp from 'node:fs/promises'
import { fileTypeFromBuffer } from 'file-type'
import { checkPng } from './png.js'

export const MEDIA_KINDS = ['image', 'video', 'audio', 'pdf', 'html'] as const
export type MediaKind = (typeof MEDIA_KINDS)[number]

/** Sniffed MIME type → media kind. `application/zip` is a zip-packaged HTML app (checked below). */
export const ALLOWED_TYPES: Readonly<Record<string, MediaKind>> = {
  'image/png': 'image',
  'image/jpeg': 'image',
  'image/gif': 'image',
  'image/webp': 'image',
  'video/mp4': 'video',
  'video/webm': 'video',
  'video/quicktime': 'video',
  'audio/mpeg': 'audio',
  'audio/ogg': 'audio',
  'audio/wav': 'audio',
  'application/pdf': 'pdf',
  'application/zip': 'html',
}

export type Sniffed = { ok: true; mimeType: string; kind: MediaKind } | { ok: false; reason: string }

export async function sniffFile(file: string): Promise<Sniffed> {
  const fh = await fsp.open(file, 'r')
  try {
    const head = Buffer.alloc(4100)
    const { bytesRead } = await fh.read(head, 0, head.length, 0)
    const type = await fileTypeFromBuffer(head.subarray(0, bytesRead))
    if (!type) return { ok: false, reason: 'The file type could not be recognised from its content (SVG and other text formats are not accepted).' }
    const kind = ALLOWED_TYPES[type.mime]
    if (!kind) return { ok: false, reason: `Files of type ${type.mime} are not accepted.` }
    // A PNG is read through to its IEND: a PNG header with something else after it is refused.
    if (type.mime === 'image/png') {
      const png = await checkPng(file)
      if (!png.ok) return { ok: false, reason: png.reason }
    }
    if (kind === 'html') {
      const names = await zipEntryNames(fh)
      if (!names.some((n) => /^(?:[^/]+\/)?index\.html?$/i.test(n)))
        return { ok: false, reason: 'A zip is accepted only as an HTML package with an index.html.' }
    }
    return { ok: true, mimeType: type.mime, kind }
  } finally {
    await fh.close()
  }
}

/** Entry names from a zip's central directory (end-of-central-directory record in the last 64 KiB). */
async function zipEntryNames(fh: fsp.FileHandle): Promise<string[]> {
  const { size } = await fh.stat()
  const tailLen = Math.min(size, 65_557)
  const tail = Buffer.alloc(tailLen)
  await fh.read(tail, 0, tailLen, size - tailLen)
  let eocd = -1
  for (let i = tailLen - 22; i >= 0; i--) {
    if (tail.readUInt32LE(i) === 0x06054b50) {
      eocd = i
      break
    }
  }
  if (eocd < 0) return []
  const count = tail.readUInt16LE(eocd + 10)
  const cdSize = tail.readUInt32LE(eocd + 12)
  const cdOffset = tail.readUInt32LE(eocd + 16)
  if (cdOffset + cdSize > size || cdSize > 16 * 1024 * 1024) return []
  const cd = Buffer.alloc(cdSize)
  await fh.read(cd, 0, cdSize, cdOffset)
  const names: string[] = []
  let p = 0
  for (let i = 0; i < count && p + 46 <= cd.length; i++) {
    if (cd.readUInt32LE(p) !== 0x02014b50) break
    const nameLen = cd.readUInt16LE(p + 28)
    const extraLen = cd.readUInt16LE(p + 30)
    const commentLen = cd.readUInt16LE(p + 32)
    names.push(cd.subarray(p + 46, p + 46 + nameLen).toString('utf8'))
    p += 46 + nameLen + extraLen + commentLen
  }
  return names
}
