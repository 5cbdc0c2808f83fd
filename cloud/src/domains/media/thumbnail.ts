// Pictures and facts of a media file made in the background step after an upload (never on
// the request path): a thumbnail (WebP, at most THUMB_SIZE px on its longer side) of an
// image through sharp, of a video from one of its frames through ffmpeg; a video's
// width, height and duration through ffprobe. Where ffmpeg/ffprobe are not installed the
// video gets no thumbnail and its duration comes from the container's own header
// (probe.ts). A tool that runs longer than TOOL_TIMEOUT_MS is killed.
import { spawn } from 'node:child_process'
// sharp (and its native library) loads with the first thumbnail, not with the cloud.
let sharpLoaded: Promise<typeof import('sharp')> | null = null

export const THUMB_SIZE = 320
const TOOL_TIMEOUT_MS = 60_000
/** Bytes a tool may print: a frame as PNG, or ffprobe's JSON. */
const MAX_OUTPUT = 64 * 1024 * 1024

/** Runs `cmd`; its standard output, or null when the tool is not installed or failed. */
function run(cmd: string, args: string[]): Promise<Buffer | null> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'ignore'] })
    const chunks: Buffer[] = []
    let size = 0
    const timer = setTimeout(() => child.kill('SIGKILL'), TOOL_TIMEOUT_MS)
    child.stdout.on('data', (c: Buffer) => {
      size += c.length
      if (size > MAX_OUTPUT) child.kill('SIGKILL')
      else chunks.push(c)
    })
    child.on('error', () => {
      clearTimeout(timer)
      resolve(null)
    })
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve(code === 0 ? Buffer.concat(chunks) : null)
    })
  })
}

export interface VideoFacts {
  width: number | null
  height: number | null
  durationMs: number | null
}

/** A video's first video stream's size and the file's duration, or null without ffprobe (or when it cannot read the file). */
export async function ffprobe(file: string): Promise<VideoFacts | null> {
  const out = await run('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'stream=width,height:format=duration', '-of', 'json', file])
  if (!out) return null
  try {
    const j = JSON.parse(out.toString('utf8')) as { streams?: { width?: number; height?: number }[]; format?: { duration?: string } }
    const s = j.streams?.[0]
    const seconds = Number(j.format?.duration)
    const facts: VideoFacts = {
      width: Number.isInteger(s?.width) && s!.width! > 0 ? s!.width! : null,
      height: Number.isInteger(s?.height) && s!.height! > 0 ? s!.height! : null,
      durationMs: Number.isFinite(seconds) && seconds > 0 ? Math.round(seconds * 1000) : null,
    }
    return facts.width === null && facts.durationMs === null ? null : facts
  } catch {
    return null
  }
}

/** The thumbnail of an image file (orientation applied, never enlarged). */
export async function imageThumbnail(input: string | Buffer): Promise<Buffer> {
  const { default: sharp } = await (sharpLoaded ??= import('sharp'))
  return sharp(input, { animated: false }).rotate().resize(THUMB_SIZE, THUMB_SIZE, { fit: 'inside', withoutEnlargement: true }).webp({ quality: 70 }).toBuffer()
}

/** The thumbnail of a video: its frame at a second in (or halfway through a shorter one); null without ffmpeg or a frame. */
export async function videoThumbnail(file: string, durationMs: number | null): Promise<Buffer | null> {
  const at = durationMs !== null && durationMs < 2000 ? durationMs / 2000 : 1
  const frame = await run('ffmpeg', ['-v', 'error', '-ss', at.toFixed(3), '-i', file, '-frames:v', '1', '-f', 'image2pipe', '-vcodec', 'png', '-'])
  if (!frame?.length) return null
  return imageThumbnail(frame)
}
