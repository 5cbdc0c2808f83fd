// Content-addressed file storage for media and screenshots: `<root>/<first 2 hex of
// sha256>/<sha256>`, the root being SVC_MEDIA_DIR (shared by the instances of one cloud) or
// `<dataDir>/media`. Bytes are streamed to a temp file in the same folder tree while hashed
// and counted, then renamed into place, so a failed or refused upload leaves nothing
// half-written and identical bytes are stored once whatever their name, owner or
// workspace. So a file goes only through release(), which asks every owner first.
import { createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'
import { Transform, type Readable } from 'node:stream'
import { ApiError, notFound } from '../../platform/errors.js'

export interface StagedFile {
  /** Temp path holding the bytes until commit() or discard(). */
  tmpPath: string
  sha256: string
  sizeBytes: number
}

const SHA = /^[0-9a-f]{64}$/

/** Whether any owner (a media item of any workspace, a screenshot) still holds the stored bytes. */
export type BytesOwners = (sha256: string) => Promise<boolean>

export class MediaStore {
  readonly root: string
  private readonly tmpDir: string
  /** Per hash, the last of the commits and releases running on it (they run one after another). */
  private readonly turns = new Map<string, Promise<unknown>>()

  constructor(
    dataDir: string,
    root: string | null,
    private readonly owners: BytesOwners,
  ) {
    this.root = root ?? path.join(dataDir, 'media')
    this.tmpDir = path.join(this.root, 'tmp')
  }

  /** Runs `f` after the work already queued on the same hash, and before any queued after it. */
  private async inTurn<T>(sha256: string, f: () => Promise<T>): Promise<T> {
    const before = this.turns.get(sha256) ?? Promise.resolve()
    const run = before.then(f, f)
    const settled = run.then(
      () => undefined,
      () => undefined,
    )
    this.turns.set(sha256, settled)
    try {
      return await run
    } finally {
      if (this.turns.get(sha256) === settled) this.turns.delete(sha256)
    }
  }

  pathOf(sha256: string): string {
    if (!SHA.test(sha256)) throw new Error('not a sha256')
    return path.join(this.root, sha256.slice(0, 2), sha256)
  }

  /** Where the thumbnail of the stored bytes `sha256` is kept (made by the background probe). */
  thumbPath(sha256: string): string {
    if (!SHA.test(sha256)) throw new Error('not a sha256')
    return path.join(this.root, 'thumbs', sha256.slice(0, 2), `${sha256}.webp`)
  }

  /** Keeps the thumbnail of the bytes `sha256` (written beside, then renamed into place). */
  async putThumb(sha256: string, webp: Buffer): Promise<void> {
    const final = this.thumbPath(sha256)
    await fsp.mkdir(path.dirname(final), { recursive: true })
    const tmp = await this.tempPath()
    await fsp.writeFile(tmp, webp)
    await fsp.rename(tmp, final)
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

  /**
   * Moves a staged file into its content address (a no-op copy when the bytes are already
   * stored), then runs `record` (which writes the owner's row) before any release() of the
   * same bytes on this instance can look for owners: a delete of another owner of these
   * bytes never removes them between the two.
   */
  async commit<T>(f: StagedFile, record: () => Promise<T>): Promise<T> {
    return this.inTurn(f.sha256, async () => {
      const final = this.pathOf(f.sha256)
      await fsp.mkdir(path.dirname(final), { recursive: true })
      if (fs.existsSync(final)) {
        await fsp.rm(f.tmpPath, { force: true })
      } else {
        await fsp.rename(f.tmpPath, final)
      }
      return record()
    })
  }

  async discard(f: { tmpPath: string }): Promise<void> {
    await fsp.rm(f.tmpPath, { force: true })
  }

  /**
   * Removes the stored bytes unless an owner still holds them (media items of every
   * workspace, screenshots: BytesOwners). Every deleter of an owner calls this after its
   * row is gone; it is the only way a stored file is removed. True when the file went.
   */
  async release(sha256: string): Promise<boolean> {
    return this.inTurn(sha256, async () => {
      if (await this.owners(sha256)) return false
      await fsp.rm(this.pathOf(sha256), { force: true })
      await fsp.rm(this.thumbPath(sha256), { force: true })
      return true
    })
  }

  /**
   * Opens stored bytes for reading (a byte range when given, both ends included). A file
   * missing from the store (deleted by hand, a restore without the media folder) answers
   * 404 not_found, never a failed stream.
   */
  async read(sha256: string, range?: { start: number; end: number }): Promise<Readable> {
    let fh: fsp.FileHandle
    try {
      fh = await fsp.open(this.pathOf(sha256), 'r')
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw notFound('The stored file is missing; upload it again.')
      throw e
    }
    return fh.createReadStream(range ? { start: range.start, end: range.end } : {})
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
