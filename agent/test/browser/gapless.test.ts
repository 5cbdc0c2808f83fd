// Video without black frames, in a real browser: a playlist of two short videos made here by
// ffmpeg (a red and a green second; VP9 in WebM, then H.264 in MP4 where this Chromium plays
// it), served from the page's origin as cached media is, plays in the kiosk page, which advances on `ended`. On every animation frame the page
// is sampled: the top visible video element that has a frame, drawn to a canvas (what the
// slot shows; with none the slot shows its black background). Around each switch (red to
// green, and green back to red as the playlist loops) every sample is a video's colour,
// never black or empty; the switches are awaited by the page's own play events. The page
// also tells its decoded and dropped frame counts.
import t, { type Test } from 'tap'
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { ffmpegChromium, HANG_GUARD_MS, toolTest } from '@svc/shared/testing'
import { PlayerServer, type FramesEvent, type PageEvent } from '../../src/player/PlayerServer.js'
import type { PlayerView } from '../../src/player/PlayerView.js'
import { captureLog, eventually, tempDir } from '../helpers.js'
import { launch, near, type Rgb } from './chromium.js'

const run = promisify(execFile)
const RED: Rgb = [230, 20, 20]
const GREEN: Rgb = [20, 200, 40]

/** A one-second clip of one colour (160×90, 30 fps), made by ffmpeg. */
async function clip(dir: string, name: string, rgb: Rgb, codec: 'vp9' | 'h264'): Promise<void> {
  const hex = rgb.map((c) => c.toString(16).padStart(2, '0')).join('')
  const file = path.join(dir, name)
  const encode =
    codec === 'vp9'
      ? ['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-b:v', '200k']
      : ['-c:v', 'libx264', '-preset', 'ultrafast', '-profile:v', 'baseline', '-movflags', '+faststart']
  await run(
    'ffmpeg',
    ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', `color=c=0x${hex}:s=160x90:r=30:d=1`, ...encode, '-pix_fmt', 'yuv420p', file],
    {
      timeout: HANG_GUARD_MS,
    },
  )
}

/** Samples the stage on every animation frame: the top visible video with a frame, as its colour, or 'none'. */
const SAMPLER = `{
  window.__samples = [];
  const c = document.createElement('canvas');
  c.width = 4; c.height = 4;
  const g = c.getContext('2d', { willReadFrequently: true });
  const tick = () => {
    const stage = document.getElementById('stage');
    if (stage && window.__sampling) {
      const shown = [...stage.querySelectorAll('video')].filter((v) => v.style.visibility !== 'hidden' && v.readyState >= 2);
      const top = shown[shown.length - 1];
      if (!top) window.__samples.push('none');
      else {
        try {
          g.drawImage(top, 0, 0, 4, 4);
          const d = g.getImageData(2, 2, 1, 1).data;
          window.__samples.push([d[0], d[1], d[2]]);
        } catch (err) {
          window.__samples.push('error ' + err.message);
        }
      }
    }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}`

function playlist(version: number, items: Array<{ id: string; url: string; mimeType: string }>): PlayerView {
  return {
    type: 'playing',
    screenId: 'scr_glass',
    connected: true,
    version,
    source: 'assignment',
    contentKind: 'playlist',
    contentId: 'pl_clips',
    content: { name: 'Clips', items: items.map((i) => ({ contentKind: 'media' as const, contentId: i.id, url: i.url, mimeType: i.mimeType })) },
    castId: null,
    emergencyId: null,
    message: null,
  } as PlayerView
}

toolTest(t, ffmpegChromium, 'a playlist of videos switches without a black frame, and the page counts its frames', async (t: Test) => {
  const dir = tempDir(t)
  const { page } = await launch(t)
  await page.evaluateOnNewDocument(SAMPLER)
  // The clips come from the page's own origin (the agent's media cache route), as cached media
  // does: a video of another origin could not be drawn to the sampler's canvas.
  /** Cache keys (sha256, as the agent's cache names files) → file names in `dir`. */
  const cached = new Map<string, string>()
  const server = new PlayerServer({
    port: 0,
    log: captureLog().log,
    media: (key) => {
      const name = cached.get(key)
      if (!name) return null
      const file = path.join(dir, name)
      return { file, mimeType: name.endsWith('.mp4') ? 'video/mp4' : 'video/webm', bytes: fs.statSync(file).size }
    },
  })
  await server.start()
  t.after(() => server.stop())
  const events: PageEvent[] = []
  const frames: FramesEvent[] = []
  server.on('page', (e) => events.push(e))
  server.on('frames', (e) => frames.push(e))
  await page.goto(`http://127.0.0.1:${server.port}/`)
  // In front, so its animation frames run at the display's rate (a background page's are throttled).
  await page.bringToFront()
  await eventually('the kiosk page connecting', () => (server.health.pages === 1 ? true : undefined))
  const js = <T>(expr: string): Promise<T> => page.evaluate(expr) as Promise<T>

  const codecs: Array<{ codec: 'vp9' | 'h264'; ext: string; mimeType: string; probe: string }> = [
    { codec: 'vp9', ext: 'webm', mimeType: 'video/webm', probe: 'video/webm; codecs="vp9"' },
    { codec: 'h264', ext: 'mp4', mimeType: 'video/mp4', probe: 'video/mp4; codecs="avc1.42E01E"' },
  ]
  let version = 1
  for (const c of codecs) {
    const plays = await js<string>(`document.createElement('video').canPlayType(${JSON.stringify(c.probe)})`)
    if (!plays) {
      t.comment(`this Chromium does not play ${c.probe}: not tried`)
      continue
    }
    // Nothing plays while the clips are made and the samples reset.
    server.show({ ...playlist(++version, []), source: 'none', contentKind: null, contentId: null, content: null } as PlayerView)
    await clip(dir, `red.${c.ext}`, RED, c.codec)
    await clip(dir, `green.${c.ext}`, GREEN, c.codec)
    const url = (name: string) => {
      const key = createHash('sha256').update(name).digest('hex')
      cached.set(key, name)
      return `http://127.0.0.1:${server.port}/media/${key}`
    }
    events.length = 0
    await js('window.__samples = []; window.__sampling = true')
    server.show(
      playlist(++version, [
        { id: `med_red_${c.codec}`, url: url(`red.${c.ext}`), mimeType: c.mimeType },
        { id: `med_green_${c.codec}`, url: url(`green.${c.ext}`), mimeType: c.mimeType },
      ]),
    )
    // Two switches: red → green, then green → red (the playlist loops): a third start.
    const starts = () => events.filter((e) => e.type === 'play' && e.event === 'start' && e.itemId?.endsWith(`_${c.codec}`)).map((e) => e.itemId)
    await eventually(`${c.codec}: three starts (red, green, red again)`, () => (starts().length >= 3 ? true : undefined))
    // A start is told when the item is put up; its first frame is presented after: sampling
    // goes on until a red frame follows a green one.
    await eventually(`${c.codec}: a red frame after a green one`, async () => {
      const s = await js<Array<[number, number, number] | string>>('window.__samples')
      const g = s.findIndex((x) => typeof x !== 'string' && near(x, GREEN))
      return g >= 0 && s.slice(g).some((x) => typeof x !== 'string' && near(x, RED)) ? true : undefined
    })
    await js('window.__sampling = false')
    t.same(starts().slice(0, 3), [`med_red_${c.codec}`, `med_green_${c.codec}`, `med_red_${c.codec}`], `${c.codec}: red, green, red`)
    t.notOk(
      events.some((e) => e.event === 'error'),
      `${c.codec}: no item failed`,
    )

    const samples = await js<Array<[number, number, number] | string>>('window.__samples')
    // From the first red frame (before it: the view change from the last codec's playlist).
    const first = samples.findIndex((s) => typeof s !== 'string' && near(s, RED))
    t.ok(first >= 0, `${c.codec}: the red video was on screen (${samples.length} frames sampled)`)
    const named = samples.slice(first).map((s) => (typeof s === 'string' ? s : near(s, RED) ? 'red' : near(s, GREEN) ? 'green' : `other ${s.join(',')}`))
    const runs: string[] = []
    for (const n of named) if (runs[runs.length - 1] !== n) runs.push(n)
    t.same(runs.slice(0, 3), ['red', 'green', 'red'], `${c.codec}: the frames go red, green, red with nothing between (${runs.join(' → ')})`)
    t.same(
      named.filter((n) => n !== 'red' && n !== 'green'),
      [],
      `${c.codec}: no sampled frame is black, empty or another colour`,
    )
  }

  const told = await eventually('frame counts from the page (sent when a video ends)', () => frames.at(-1))
  t.ok(told.decoded > 0, `the page counts decoded frames (${told.decoded} decoded, ${told.dropped} dropped)`)
  t.ok(Number.isInteger(told.dropped) && told.dropped >= 0, 'and dropped ones')
})
