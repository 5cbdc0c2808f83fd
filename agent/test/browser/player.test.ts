// The kiosk page in a real browser (system Chromium, 1280×720), driven by a real agent
// paired with a real cloud; desired state goes through the cloud's broker. Media files
// come from a small HTTP server standing in for media storage. Screenshot pixels prove:
// a cast image is full-bleed (no label bar), `contain`/`cover` fit, a playlist of two
// colours alternates on its durations, an item's own fit and a fade between items carried
// from the content description, a video advances on `ended`, a broken item is
// skipped, a web/app page shows in a frame, an emergency message is on screen in a large
// band; and the play log on disk holds exactly the sequence the screenshots saw.
import t from 'tap'
import fs from 'node:fs'
import { once } from 'node:events'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { topics } from '@svc/shared/mqtt/index'
import { Agent } from '../../src/Agent.js'
import type { PlayRecord } from '../../src/playback/PlayLog.js'
import { captureLog, tempDir, until } from '../helpers.js'
import { startCloud } from '../cloud.js'
import { HEIGHT, WIDTH, fileServer, grid, launch, makeWebm, missingChromium, near, screenshot, solid, solidPng, type Rgb } from './chromium.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

const PALETTE: Record<string, Rgb> = {
  red: [230, 20, 20],
  green: [20, 200, 40],
  blue: [30, 40, 220],
  yellow: [240, 220, 10],
  magenta: [220, 20, 220],
  cyan: [20, 210, 220],
}
const skip = missingChromium(t)

t.test('the page plays full-bleed content, playlists, video and emergencies, and logs what it showed', { skip: skip ?? false }, async (t) => {
  const { browser, page } = await launch(t)
  const webm = await makeWebm(browser, PALETTE.magenta!, 1200)
  const media = await fileServer(t, {
    'red.png': { body: solidPng(64, 36, PALETTE.red!), type: 'image/png' },
    'green.png': { body: solidPng(64, 36, PALETTE.green!), type: 'image/png' },
    'blue.png': { body: solidPng(64, 36, PALETTE.blue!), type: 'image/png' },
    'yellow.png': { body: solidPng(64, 36, PALETTE.yellow!), type: 'image/png' },
    'cyan43.png': { body: solidPng(40, 30, PALETTE.cyan!), type: 'image/png' },
    'clip.webm': { body: webm, type: 'video/webm' },
    'app.html': { body: Buffer.from('<!doctype html><body style="margin:0;background:rgb(240,220,10)"></body>'), type: 'text/html' },
  })

  const cloud = await startCloud(t)
  const dataDir = tempDir(t)
  const { log, lines } = captureLog()
  const agent = new Agent({
    cloudUrl: cloud.base,
    dataDir,
    playerPort: 0,
    log,
    pairing: { pollIntervalMs: 50, pollIntervalCapMs: 200 },
    backoff: { baseMs: 200, capMs: 1000 },
  })
  t.after(() => agent.stop())
  const code = once(agent, 'code')
  await agent.start()
  const [registration] = await code
  /** Evaluates an expression in the page (as text: this package has no DOM typings). */
  const js = <T>(expr: string): Promise<T> => page.evaluate(expr) as Promise<T>
  // The page's own record of what it showed: each play message it sends the agent, with the
  // page's time of sending (the moment it put the item on screen or took it off), before the
  // hop to the agent that timestamps the play log.
  await page.evaluateOnNewDocument(`(() => {
    const plays = (window.__svcPlays = []);
    const send = WebSocket.prototype.send;
    WebSocket.prototype.send = function (data) {
      if (typeof data === 'string' && data.includes('"type":"play"')) plays.push({ at: Date.now(), m: JSON.parse(data) });
      return send.call(this, data);
    };
  })()`)
  await page.goto(`http://127.0.0.1:${agent.player.port}/`)
  await until(5 * 60_000, async () => ((await js<string>('document.body.innerText')).includes(registration.pairingCode) ? true : undefined))
  t.match(await js<string>('document.body.innerText'), registration.pairingCode, 'while unpaired the page shows the pairing code')
  const connected = once(agent, 'connected')
  const screenId = await cloud.pair(registration.pairingCode)
  await connected

  let version = 1000
  const publish = async (over: Record<string, unknown>): Promise<number> => {
    version++
    const now = Date.now()
    await cloud.publish(topics.desired(screenId), {
      version,
      screenId,
      timezone: 'UTC',
      assignment: null,
      schedule: null,
      casts: [],
      emergency: null,
      panel: null,
      generatedAt: new Date(now).toISOString(),
      ...over,
    })
    return version
  }
  const cast = (id: string, contentKind: string, contentId: string, content: Record<string, unknown>) => ({
    id,
    contentKind,
    contentId,
    content,
    triggeredAt: new Date(Date.now() - 1000).toISOString(),
    expiresAt: null,
  })
  const image = (name: string) => ({ url: media.url(name), mimeType: 'image/png' })

  // Every screenshot from here on, named by palette, so the play log can be compared with
  // what was actually on screen.
  // `from`..`at`: the capture happened somewhere in this window. Sampled at a quarter size,
  // so a loaded machine still samples several times a second.
  const seen: Array<{ from: number; at: number; colour: string | null; top: string | null }> = []
  let sampling = true
  const sampler = (async () => {
    while (sampling) {
      const from = Date.now()
      const bm = await screenshot(page, 0.25).catch(() => null)
      // `top`: the upper half only, which an emergency band leaves clear.
      if (bm) seen.push({ from, at: Date.now(), colour: solid(bm, PALETTE), top: solid(bm, PALETTE, 40, 0.5) })
      await sleep(40)
    }
  })()
  t.after(async () => {
    sampling = false
    await sampler
  })
  const waitColour = async (colour: string, ms = HANG_GUARD_MS): Promise<void> => {
    const from = seen.length
    const hit = await until(ms, () => (seen.slice(from).some((s) => s.colour === colour) ? true : undefined))
    if (!hit)
      throw new Error(
        `the frame never turned all ${colour}; last: ${JSON.stringify(seen.slice(-3))}; page: ${await page.content()}; agent: ${lines
          .slice(-8)
          .map((l) => JSON.stringify(l))
          .join('\n')}`,
      )
  }

  // 1. A cast of a 16:9 image fills the whole frame: every sample across it is the image.
  await publish({ casts: [cast('cast_red', 'media', 'med_red', { name: 'Red', ...image('red.png') })] })
  await waitColour('red')
  const full = await screenshot(page)
  t.equal(full.width, WIDTH)
  t.equal(full.height, HEIGHT)
  const off = grid(full, 17, 9).filter((p) => !near(p.rgb, PALETTE.red!))
  t.same(off, [], 'full-bleed: all 153 samples over the 1280×720 frame are the image, no label bar')
  t.match(await js<string>(`document.querySelector('img')?.getAttribute('src')`), /^\/media\/[0-9a-f]{64}$/, 'played from the local cache')
  t.equal(await js<string>('document.body.innerText.trim()'), '', 'no text anywhere on screen')

  // 2. Fit: a 4:3 picture letterboxes with the default `contain`, fills with `cover`.
  await publish({ casts: [cast('cast_43', 'media', 'med_43', { name: '4:3', ...image('cyan43.png') })] })
  await until(5 * 60_000, async () => (near((await screenshot(page)).at(640, 360), PALETTE.cyan!) ? true : undefined))
  const contain = await screenshot(page)
  t.ok(near(contain.at(10, 360), [0, 0, 0], 10) && near(contain.at(1270, 360), [0, 0, 0], 10), 'contain: black bars left and right')
  t.ok(near(contain.at(170, 10), PALETTE.cyan!) && near(contain.at(1109, 710), PALETTE.cyan!), 'contain: the whole picture, 960 px wide, centred')
  t.ok(near(contain.at(150, 360), [0, 0, 0], 10) && near(contain.at(1130, 360), [0, 0, 0], 10), 'contain: nothing beyond 160…1120 px')
  await publish({ casts: [cast('cast_43c', 'media', 'med_43', { name: '4:3', fit: 'cover', ...image('cyan43.png') })] })
  await waitColour('cyan')
  t.pass('cover: the 4:3 picture fills the whole 16:9 frame')

  // 3. A playlist of two colours alternates on its 1 s durations.
  const startPl = seen.length
  await publish({
    casts: [
      cast('cast_pl', 'playlist', 'pl_gb', {
        name: 'Green/Blue',
        items: [
          { contentKind: 'media', contentId: 'med_green', durationMs: 1000, ...image('green.png') },
          { contentKind: 'media', contentId: 'med_blue', durationMs: 1000, ...image('blue.png') },
        ],
      }),
    ],
  })
  await waitColour('green')
  const playlistRuns = () => runsOf(seen.slice(startPl)).filter((r) => r.colour === 'green' || r.colour === 'blue')
  // The fifth run has begun: the four before it are whole (about 4 s).
  await until(5 * 60_000, () => (playlistRuns().length >= 5 ? true : undefined))
  const runs = playlistRuns()
  t.ok(runs.length >= 5, `at least 4 alternations within 10 s (${runs.map((r) => r.colour).join(' ')})`)
  for (let i = 1; i < runs.length; i++) t.not(runs[i]!.colour, runs[i - 1]!.colour, 'colours alternate')
  // How long each stays is the player's timeline, tested on the injected clock
  // (shared/test/playback); here: the page shows the items in their order, green first.
  t.same(
    runs.map((r) => r.colour),
    runs.map((_, i) => (i % 2 === 0 ? 'green' : 'blue')),
    `green, blue, green, … on screen (${runs.map((r) => `${r.colour} ${r.ms} ms`).join(', ')})`,
  )

  // 3b. Presentation from the content description: an item's own fit (`cover` over the
  // playlist's `contain`), and a fade between items: frames in the middle of a change are
  // a blend of both colours, never black.
  const startFade = seen.length
  await publish({
    casts: [
      cast('cast_fade', 'playlist', 'pl_fade', {
        name: 'Cyan/Blue, fading',
        fit: 'contain',
        transition: 'fade',
        transitionMs: 800,
        items: [
          { contentKind: 'media', contentId: 'med_43', durationMs: 1500, fit: 'cover', ...image('cyan43.png') },
          { contentKind: 'media', contentId: 'med_blue', durationMs: 1500, ...image('blue.png') },
        ],
      }),
    ],
  })
  await waitColour('cyan')
  await waitColour('blue')
  await waitColour('cyan')
  // Half of each item's time is a fade: the samples land in fades as often as the sampler
  // runs, which on a busy machine is seldom, so the loop goes on until two have.
  const blendsOf = (frames: typeof seen) => frames.filter((f) => f.colour === null && f.top === null)
  await until(5 * 60_000, () => (blendsOf(seen.slice(startFade)).length >= 2 ? true : undefined))
  const fadeFrames = seen.slice(startFade)
  const blends = blendsOf(fadeFrames)
  t.ok(blends.length >= 2, `frames between cyan and blue are a blend (${blends.length} of ${fadeFrames.length} samples)`)
  t.pass('cover on the item: the 4:3 picture fills the whole frame inside a `contain` playlist')
  const mid = await js<string>(
    `(() => { const i = document.querySelectorAll('#stage img'); return i.length + ' ' + getComputedStyle(i[i.length - 1]).transitionDuration })()`,
  )
  t.match(mid, /^[12] 0\.8s$/, `the incoming picture fades in over 0.8 s (${mid})`)

  // 4. Video in a playlist: muted autoplay, `ended` advances to the next item.
  await publish({
    casts: [
      cast('cast_vid', 'playlist', 'pl_vid', {
        name: 'Clip then yellow',
        items: [
          { contentKind: 'media', contentId: 'med_clip', url: media.url('clip.webm'), mimeType: 'video/webm' },
          { contentKind: 'media', contentId: 'med_yellow', durationMs: 800, ...image('yellow.png') },
        ],
      }),
    ],
  })
  await waitColour('magenta')
  await waitColour('yellow')
  await waitColour('magenta')
  t.pass('the video played, ended, the next item showed, and the playlist came back to the video')
  t.equal(await js<boolean>(`document.querySelector('video')?.muted`), true, 'the video is muted')

  // 5. A broken item is skipped and reported; the playlist goes on.
  await publish({
    casts: [
      cast('cast_broken', 'playlist', 'pl_broken', {
        name: 'Broken then green',
        items: [
          { contentKind: 'media', contentId: 'med_gone', ...image('gone.png') },
          { contentKind: 'media', contentId: 'med_green', durationMs: 60_000, ...image('green.png') },
        ],
      }),
    ],
  })
  await waitColour('green')
  await until(5 * 60_000, () => lines.find((l) => l.msg === 'an item failed to load on the page and was skipped' && l.itemId === 'med_gone'))
  t.ok(
    lines.some((l) => l.msg === 'an item failed to load on the page and was skipped' && l.itemId === 'med_gone'),
    'the failure is reported',
  )

  // 6. A web/app item plays full-screen in a frame.
  await publish({ casts: [cast('cast_app', 'app', 'app_menu', { name: 'Menu board', url: media.url('app.html'), config: { appKey: 'web' } })] })
  await waitColour('yellow')
  t.equal(await js<string>(`document.querySelector('iframe')?.getAttribute('src')`), media.url('app.html'), 'the app page loads live in a frame')

  // 7. An emergency: its content full-screen with the message in a large band above it.
  const message = 'EVACUATE NOW - USE THE STAIRS'
  await publish({
    casts: [cast('cast_green', 'media', 'med_green', { name: 'Green', ...image('green.png') })],
    emergency: {
      id: 'emg_1',
      contentKind: 'media',
      contentId: 'med_red',
      content: { name: 'Alarm', ...image('red.png') },
      message,
      startedAt: new Date().toISOString(),
    },
  })
  t.ok(
    await until(5 * 60_000, async () => (near((await screenshot(page)).at(640, 100), PALETTE.red!) ? true : undefined)),
    'the emergency content is on screen',
  )
  const band = await js<{ text: string; top: number; height: number; width: number; font: number }>(`(() => {
    const b = document.getElementById('band');
    const r = b.getBoundingClientRect();
    return { text: b.innerText, top: r.top, height: r.height, width: r.width, font: parseFloat(getComputedStyle(b).fontSize) };
  })()`)
  t.equal(band.text, message, 'the message is the band text')
  t.ok(band.width >= WIDTH - 1 && band.height >= HEIGHT * 0.12 && band.font >= 60, `a large band: ${band.width}×${band.height}, ${band.font}px text`)
  const em = await screenshot(page)
  let white = 0
  let bandRed = 0
  for (let y = Math.ceil(band.top); y < HEIGHT; y += 2)
    for (let x = 0; x < WIDTH; x += 2) {
      const p = em.at(x, y)
      if (p[0] > 230 && p[1] > 230 && p[2] > 230) white++
      if (near(p, [204, 0, 0], 30)) bandRed++
    }
  t.ok(white > 2000, `the message's white letters are on screen (${white} sampled pixels)`)
  t.ok(bandRed > 10_000, `on the band's solid red (${bandRed} sampled pixels)`)
  t.ok(near(em.at(640, 50), PALETTE.red!) && near(em.at(5, 5), PALETTE.red!), 'the emergency content fills the frame above the band')

  // Cleared: the band goes and the cast shows again.
  await publish({ casts: [cast('cast_green2', 'media', 'med_green', { name: 'Green', ...image('green.png') })], emergency: null })
  await waitColour('green')
  t.equal(await js<string>(`document.getElementById('band').innerText`), '', 'band gone once cleared')

  // The play log holds exactly what the screenshots saw, in order.
  sampling = false
  await sampler
  const pageEvents = await js<Array<{ at: number; m: { event: string; slot: string; itemId?: string } }>>('window.__svcPlays')
  await agent.stop()
  const records = fs
    .readFileSync(path.join(dataDir, 'play-log.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as PlayRecord)
  const colourOf: Record<string, string> = {
    med_red: 'red',
    med_green: 'green',
    med_blue: 'blue',
    med_clip: 'magenta',
    med_yellow: 'yellow',
    med_43: 'cyan',
    app_menu: 'yellow',
  }
  // Both ways, in order: every colour run the screenshots saw is a play in the log, and
  // every play long enough that a capture surely fell inside it (longer than the longest
  // gap between two captures around it, plus 100 ms for the paint) was seen. Shorter plays
  // (an item cut short by the next cast, on a loaded machine) may fall between two captures.
  // How long a play was on screen is the page's own account (its play messages, timed as it
  // sent them), which the log holds play for play: the log's times are when the agent got
  // them, after a hop that takes seconds on a loaded machine.
  const colourOfRecord = (r: { itemId: string }) => colourOf[r.itemId] ?? r.itemId
  const pagePlays: Array<{ itemId: string; start: number; end: number }> = []
  const openOnPage = new Map<string, { itemId: string; start: number }>()
  for (const { at, m } of pageEvents) {
    const open = openOnPage.get(m.slot)
    if (open) pagePlays.push({ ...open, end: at })
    openOnPage.delete(m.slot)
    if (m.event === 'start') openOnPage.set(m.slot, { itemId: m.itemId!, start: at })
  }
  for (const open of openOnPage.values()) pagePlays.push({ ...open, end: seen.at(-1)!.at })
  t.same(mergeRuns(records.map(colourOfRecord)), mergeRuns(pagePlays.map(colourOfRecord)), 'the play log holds the plays the page reported, in order')
  const observable = pagePlays.filter(({ start, end }) => {
    let gap = 0
    for (let i = 1; i < seen.length; i++) if (seen[i]!.at >= start && seen[i - 1]!.from <= end) gap = Math.max(gap, seen[i]!.at - seen[i - 1]!.from)
    return end - start > gap + 100
  })
  // Frames that are no single colour (a letterboxed picture, a change of view) are left out.
  const watched = mergeRuns(runsOf(seen.filter((s) => s.top !== null).map((s) => ({ at: s.at, colour: s.top }))).map((r) => r.colour!))
  const logged = mergeRuns(records.map(colourOfRecord))
  const sure = mergeRuns(observable.map(colourOfRecord))
  t.ok(isSubsequence(watched, logged), `every run on screen is a play in the log, in order: screen ${watched.join(' ')}; log ${logged.join(' ')}`)
  t.ok(isSubsequence(sure, watched), `every play long enough to be captured was on screen, in order (${observable.length} of ${pagePlays.length} plays)`)
  t.ok(sure.length >= 6, `most plays are long enough to check: ${sure.join(' ')}`)
  t.ok(
    records.every((r) => r.screenId === screenId && Date.parse(r.endedAt) >= Date.parse(r.startedAt)),
    'every record names the screen and a start ≤ end',
  )
  const em1 = records.find((r) => r.emergencyId === 'emg_1')
  t.match(em1, { source: 'emergency', contentKind: 'media', contentId: 'med_red', itemId: 'med_red' }, 'the emergency play is recorded as one')
  const pl = records.filter((r) => r.castId === 'cast_pl')
  t.ok(
    pl.every((r) => r.durationMs === Date.parse(r.endedAt) - Date.parse(r.startedAt)),
    `each playlist record's duration is its end minus its start: ${pl.map((r) => r.durationMs).join(', ')}`,
  )
  t.ok(
    pl.slice(1).every((r, i) => r.itemId !== pl[i]!.itemId),
    `the playlist's plays alternate its two items: ${pl.map((r) => r.itemId).join(' ')}`,
  )
  // The cloud holds what the agent sent while connected; the plays closed by stop() wait on
  // disk for the next connect. Together: the local log, each play once.
  const res = await cloud.request('GET', `/v1/screens/${screenId}/play-log?limit=1000`)
  t.equal(res.status, 200)
  const stored = ((await res.json()) as { data: PlayRecord[] }).data
  const unsent = (await agent.playLog.batch(screenId, 1000)).records
  const key = (r: PlayRecord) => `${r.startedAt} ${r.endedAt} ${r.itemId} ${r.source} ${r.castId ?? ''} ${r.emergencyId ?? ''}`
  t.ok(stored.length > 0, `${stored.length} plays reached the cloud, ${unsent.length} wait for the next connect`)
  t.same([...stored, ...unsent].map(key).sort(), records.map(key).sort(), 'cloud + unsent = the local play log')
})

function runsOf(samples: Array<{ at: number; colour: string | null }>): Array<{ colour: string | null; ms: number }> {
  const out: Array<{ colour: string | null; from: number; to: number }> = []
  for (const s of samples) {
    const last = out.at(-1)
    if (last && last.colour === s.colour) last.to = s.at
    else out.push({ colour: s.colour, from: s.at, to: s.at })
  }
  // A run lasts from its first sample to the next run's first sample.
  return out.map((r, i) => ({ colour: r.colour, ms: (out[i + 1]?.from ?? r.to) - r.from }))
}

/** Whether `part` appears in `whole` in order (not necessarily adjacent). */
function isSubsequence(part: string[], whole: string[]): boolean {
  let j = 0
  for (const x of whole) if (j < part.length && part[j] === x) j++
  return j === part.length
}

function mergeRuns(list: string[]): string[] {
  return list.filter((c, i) => i === 0 || list[i - 1] !== c)
}
