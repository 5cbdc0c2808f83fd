// Thumbnails of 4K images at upload (not a test): the cloud as `pnpm start` runs it (its CLI,
// its own process, a SQLite file, media processed in the background as in production), one
// workspace. R times each, a 3840×2160 JPEG (a photo-like picture, about 2 MiB) and PNG
// (about 12 MiB) are uploaded through POST /v1/media/upload, each with bytes of its own;
// timed from the upload's answer (201, the item `processing`) until GET
// /v1/media/<id>/thumbnail answers 200 (polled every 10 ms): the background step's probe,
// thumbnail and row update as a client sees them. Beside it, the thumbnail's making alone
// (imageThumbnail, the function the cloud runs) on the same files in this process.
//   pnpm exec tsx bench/thumbnail.ts [--rounds=5]
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { imageThumbnail, THUMB_SIZE } from '../cloud/src/domains/media/thumbnail.js'
import { call, cli, cloudEnv, expect, f1, freePort, killAll, loadAvg, now, pct, sleep, startCloud, tempDir } from './lib/harness.js'
import { sharp } from './lib/sharp.js'

const arg = (name: string, fallback: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback)

/** A 3840×2160 photo-like picture (smoothed noise) of its own for `seed`. */
async function picture(seed: number, format: 'jpeg' | 'png'): Promise<Buffer> {
  const noise = await sharp({ create: { width: 480, height: 270, channels: 3, noise: { type: 'gaussian', mean: 40 + ((seed * 37) % 170), sigma: 60 } } })
    .png()
    .toBuffer()
  const img = sharp(noise).resize(3840, 2160, { kernel: 'cubic' }).blur(1.2)
  return format === 'jpeg' ? img.jpeg({ quality: 85 }).toBuffer() : img.png().toBuffer()
}

async function upload(base: string, apiKey: string, name: string, type: string, bytes: Buffer): Promise<string> {
  const boundary = `----bench${Date.now()}`
  const raw = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: ${type}\r\n\r\n`),
    bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ])
  const a = await call(`${base}/v1/media/upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    raw,
  })
  return expect(a, 201, 'upload').body.data.id as string
}

async function main(): Promise<void> {
  const R = arg('rounds', 5)
  const dir = tempDir('svc-bench-thumb-')
  const env = cloudEnv(dir, await freePort(), await freePort(), { SVC_RATE_LIMIT: '100000000' })
  const ws = JSON.parse(await cli(env, ['bootstrap', '--workspace', 'Bench', '--email', 'ops@example.com'])) as { apiKey: string }
  const cloud = await startCloud(env, join(dir, 'cloud.log'))
  try {
    console.log(`load average ${await loadAvg()}`)
    const rows: string[] = []
    for (const [format, type] of [
      ['jpeg', 'image/jpeg'],
      ['png', 'image/png'],
    ] as const) {
      const toServed: number[] = []
      const making: number[] = []
      let size = 0
      let thumbSize = 0
      for (let i = 0; i <= R; i++) {
        const bytes = await picture(i + (format === 'png' ? 100 : 0), format)
        size = bytes.length
        const id = await upload(cloud.base, ws.apiKey, `4k-${i}.${format}`, type, bytes)
        const t0 = now()
        for (;;) {
          const got = await call(`${cloud.base}/v1/media/${id}/thumbnail`, { headers: { authorization: `Bearer ${ws.apiKey}` } })
          if (got.status === 200) break
          if (got.status !== 404) throw new Error(`thumbnail: ${got.status} ${got.text}`)
          if (now() - t0 > 60_000) throw new Error('no thumbnail within 60 s')
          await sleep(10)
        }
        const served = now() - t0
        // The making alone, in this process, from the same bytes written to a file (as the cloud reads them).
        const file = join(dir, `alone-${i}.${format}`)
        writeFileSync(file, bytes)
        const m0 = now()
        const thumb = await imageThumbnail(file)
        const made = now() - m0
        if (i > 0) {
          toServed.push(served)
          making.push(made)
        }
        thumbSize = thumb.length
      }
      toServed.sort((a, b) => a - b)
      making.sort((a, b) => a - b)
      rows.push(
        `| 3840×2160 ${format.toUpperCase()} (${f1(size / 1048576)} MiB → ${f1(thumbSize / 1024)} KiB WebP, ≤ ${THUMB_SIZE} px) | ${f1(pct(toServed, 50))} ms | ${f1(pct(toServed, 90))} ms | ${f1(pct(making, 50))} ms | ${f1(pct(making, 90))} ms |`,
      )
    }
    console.log(`| ${R} rounds (load average ${await loadAvg()}) | upload answered → thumbnail served, median | p90 | making alone, median | p90 |`)
    console.log('| --- | --- | --- | --- | --- |')
    for (const r of rows) console.log(r)
  } finally {
    killAll()
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e)
    killAll()
    process.exit(1)
  },
)
