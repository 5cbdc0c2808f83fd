// Content-addressed file storage for media: `<root>/<first 2 hex of sha256>/<sha256>`, the
// root being SVC_MEDIA_DIR (shared by the instances of one cloud) or `<dataDir>/media`.
// Bytes are streamed to a temp file in the same folder tree while hashed and counted, then
// renamed into place, so a failed or refused upload leaves nothing half-written and
// identical bytes are stored once whatever their name or workspace.
import { createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'
import { Transform, type Readable } from 'node:stream'
import { ApiError } from '../errors.js'

export interface StagedFile {
  /** Temp path holding the bytes until commit() or discard(). */
  tmpPath: string
  sha256: string
  sizeBytes: number
}

const SHA = /^[0-9a-f]{64}$/

export class MediaStore {
  readonly root: string
  private readonly tmpDir: string

  constructor(dataDir: string, root: string | null = null) {
    this.root = root ?? path.join(dataDir, 'media')
    this.tmpDir = path.join(this.root, 'tmp')
  }

  pathOf(sha256: string): string {
    if (!SHA.test(sha256)) throw new Error('not a sha256')
    return path.join(this.root, sha256.slice(0, 2), sha256)
  }

  /** Folder for the parts of one multipart upload. */
  uploadDir(uploadId: string): string {
    return path.join(this.root, 'uploads', uploadId.replace(/[^a-z0-9_]/gi, ''))
  }

  async tempPath(): Promise<string> {
    await fsp.mkdir(this.tmpDir, { recursive: true })
    return path.join(this.tmpDir, `${Date.now().toString(36)}-${randomBytes(8).toString('hex')}.part`)
  }

  /**
   * Streams `source` into `dest` (a temp path by default) while hashing; over `maxBytes`
   * it stops with 413 too_large and removes what was written.
   */
  async stage(source: Readable | AsyncIterable<Buffer>, maxBytes: number, dest?: string): Promise<StagedFile> {
    const tmpPath = dest ?? (await this.tempPath())
    await fsp.mkdir(path.dirname(tmpPath), { recursive: true })
    const hash = createHash('sha256')
    let size = 0
    const meter = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        size += chunk.length
        if (size > maxBytes) return cb(new ApiError('too_large', `The file is over the limit of ${maxBytes} bytes.`))
        hash.update(chunk)
        cb(null, chunk)
      },
    })
    try {
      await pipeline(source, meter, fs.createWriteStream(tmpPath))
    } catch (e) {
      await fsp.rm(tmpPath, { force: true })
      throw e
    }
    return { tmpPath, sha256: hash.digest('hex'), sizeBytes: size }
  }

  /** Moves a staged file into its content address (a no-op copy when the bytes are already stored). */
  async commit(f: StagedFile): Promise<string> {
    const final = this.pathOf(f.sha256)
    await fsp.mkdir(path.dirname(final), { recursive: true })
    if (fs.existsSync(final)) {
      await fsp.rm(f.tmpPath, { force: true })
    } else {
      await fsp.rename(f.tmpPath, final)
    }
    return final
  }

  async discard(f: { tmpPath: string }): Promise<void> {
    await fsp.rm(f.tmpPath, { force: true })
  }

  async remove(sha256: string): Promise<void> {
    await fsp.rm(this.pathOf(sha256), { force: true })
  }

  async removeUpload(uploadId: string): Promise<void> {
    await fsp.rm(this.uploadDir(uploadId), { recursive: true, force: true })
  }

  /** The first `n` bytes of a file (for sniffing and header probes). */
  async head(file: string, n: number): Promise<Buffer> {
    const fh = await fsp.open(file, 'r')
    try {
      const buf = Buffer.alloc(n)
      const { bytesRead } = await fh.read(buf, 0, n, 0)
      return buf.subarray(0, bytesRead)
    } finally {
      await fh.close()
    }
  }
}
