// The emergency message's layout on the real player page, in Chromium, at 1920×1080 and
// 1080×1920: a CAP alert shown full screen (over its own content) and as a banner (a lower
// band over the running content, at most a third of the screen); its severity, headline,
// description, instruction and sender line all inside the band and the screen (nothing
// clipped), its text large enough to read across a room, on colours meeting WCAG AA
// contrast; a description too long for the band gives way, the headline and instruction
// stay; a hand-started emergency's one-line message still shows in the band; an emergency
// without content shows its message alone, filling the screen, in larger text.
import t from 'tap'
import type { EmergencyAlert } from '@svc/shared/mqtt/index'
import type { PlayerView } from '../../src/player/PlayerView.js'
import { PlayerServer } from '../../src/player/PlayerServer.js'
import { captureLog, until } from '../helpers.js'
import { launch, missingChromium } from './chromium.js'

const skip = missingChromium(t)

interface Box {
  x: number
  y: number
  w: number
  h: number
}
interface Layout {
  fit: string | undefined
  band: Box
  scroll: { h: number; ch: number; w: number; cw: number }
  parts: { cls: string; box: Box; fontPx: number; text: string; display: string }[]
  colors: { fg: string; bg: string }
}

const NWS: EmergencyAlert = {
  severity: 'Severe',
  headline: 'SEVERE THUNDERSTORM WARNING',
  description: 'AT 254 PM PDT...NATIONAL WEATHER SERVICE DOPPLER RADAR INDICATED A SEVERE THUNDERSTORM CAPABLE OF PRODUCING HAIL UP TO 3/4 INCH.',
  instruction: 'TAKE COVER IN A SUBSTANTIAL SHELTER UNTIL THE STORM PASSES.',
  senderName: 'NATIONAL WEATHER SERVICE SACRAMENTO CA',
  sent: '2026-06-01T04:55:01-07:00',
}

function view(over: Partial<Extract<PlayerView, { type: 'playing' }>>): PlayerView {
  return {
    type: 'playing',
    screenId: 'scr_1',
    connected: true,
    version: 1,
    source: 'emergency',
    contentKind: null,
    contentId: null,
    content: null,
    castId: null,
    emergencyId: 'emg_1',
    message: 'SEVERE THUNDERSTORM WARNING',
    ...over,
  }
}

/** WCAG 2 contrast ratio of two CSS rgb() colours. */
function contrast(a: string, b: string): number {
  const lum = (c: string) => {
    const [r, g, bl] = (c.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map((v) => {
      const s = Number(v) / 255
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4
    })
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!
  }
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x)
  return (hi! + 0.05) / (lo! + 0.05)
}

const inside = (b: Box, outer: Box) => b.x >= outer.x - 1 && b.y >= outer.y - 1 && b.x + b.w <= outer.x + outer.w + 1 && b.y + b.h <= outer.y + outer.h + 1

t.test('CAP alerts on the player page: full screen and banner, landscape and portrait', { skip: skip ?? false }, async (t) => {
  const { page } = await launch(t)
  const server = new PlayerServer({ port: 0, log: captureLog().log })
  await server.start()
  t.after(() => server.stop())
  await page.goto(`http://127.0.0.1:${server.port}/`)
  t.ok(await until(5 * 60_000, () => (server.health.pages === 1 ? true : undefined)), 'the kiosk page connected')

  const layout = (): Promise<Layout> =>
    page.evaluate(`(() => {
      const band = document.getElementById('band')
      const box = (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height } }
      const cs = getComputedStyle(band)
      return {
        fit: document.documentElement.dataset.alertFit,
        band: box(band),
        scroll: { h: band.scrollHeight, ch: band.clientHeight, w: band.scrollWidth, cw: band.clientWidth },
        parts: [...band.children].map((e) => ({ cls: e.className, box: box(e), fontPx: parseFloat(getComputedStyle(e).fontSize), text: e.textContent, display: getComputedStyle(e).display })),
        colors: { fg: cs.color, bg: cs.backgroundColor },
      }
    })()`) as Promise<Layout>

  /** Shows the view and answers the band's layout once the page has laid it out (fitted). */
  let n = 0
  const show = async (v: PlayerView, expectText: string): Promise<Layout> => {
    server.show({ ...v, version: ++n } as PlayerView)
    const got = await until(5 * 60_000, async () => {
      const l = await layout()
      return l.fit && l.parts.some((p) => p.text.includes(expectText)) ? l : undefined
    })
    if (!got) throw new Error(`the band never showed ${expectText}`)
    return got
  }

  for (const [width, height] of [
    [1920, 1080],
    [1080, 1920],
  ] as const) {
    await t.test(`${width}×${height}`, async (t) => {
      await page.setViewport({ width, height })
      const screen: Box = { x: 0, y: 0, w: width, h: height }
      const short = Math.min(width, height)
      for (const presentation of ['fullscreen', 'banner'] as const) {
        for (const severity of ['Extreme', 'Severe', 'Moderate', 'Minor', 'Unknown']) {
          const alert = { ...NWS, severity, headline: `${severity} ${presentation} ${width}` }
          const l = await show(view({ alert, ...(presentation === 'banner' ? { presentation, source: 'assignment' } : {}) }), alert.headline)
          const what = `${severity} ${presentation}`
          t.equal(l.fit, 'ok', `${what}: everything fits`)
          t.ok(inside(l.band, screen), `${what}: the band is on the screen`)
          t.ok(l.scroll.h <= l.scroll.ch + 1 && l.scroll.w <= l.scroll.cw + 1, `${what}: nothing overflows the band`)
          t.same(
            l.parts.map((p) => p.cls),
            ['sev', 'head', 'desc', 'instr', 'meta'],
            `${what}: severity, headline, description, instruction, sender`,
          )
          for (const p of l.parts) t.ok(inside(p.box, l.band), `${what}: ${p.cls} is not clipped`)
          t.equal(l.parts[0]!.text, severity)
          t.equal(l.parts[3]!.text, NWS.instruction, 'the instruction on its own line')
          t.equal(l.parts[4]!.text, 'NATIONAL WEATHER SERVICE SACRAMENTO CA · 2026-06-01 04:55 (UTC-07:00)')
          // Read from across a room: the headline at least 1/30 of the screen's shorter side
          // (36 px at 1080), the instruction at least 1/40, the smallest line at least 1/60.
          const px = (cls: string) => l.parts.find((p) => p.cls === cls)!.fontPx
          t.ok(px('head') >= short / 30, `${what}: headline ${px('head')} px`)
          t.ok(px('instr') >= short / 40, `${what}: instruction ${px('instr')} px`)
          t.ok(Math.min(...l.parts.map((p) => p.fontPx)) >= short / 60, `${what}: smallest text ${Math.min(...l.parts.map((p) => p.fontPx))} px`)
          t.ok(contrast(l.colors.fg, l.colors.bg) >= 4.5, `${what}: contrast ${contrast(l.colors.fg, l.colors.bg).toFixed(2)} meets WCAG AA`)
          if (presentation === 'banner') {
            t.ok(l.band.h <= height * 0.34 + 1, `${what}: a banner takes at most a third of the screen (${l.band.h} px)`)
            t.ok(l.band.y + l.band.h >= height - 1, `${what}: at the bottom, the running content above it`)
          }
        }
      }

      // An emergency without content: the message alone fills the screen, black beneath it.
      for (const severity of ['Extreme', 'Severe', 'Moderate', 'Minor', 'Unknown']) {
        const alert = { ...NWS, severity, headline: `${severity} message only ${width}` }
        const l = await show(view({ alert, presentation: 'message' }), alert.headline)
        const what = `${severity} message only`
        t.equal(l.fit, 'ok', `${what}: everything fits`)
        t.ok(l.band.y <= 1 && l.band.x <= 1 && l.band.h >= height - 1 && l.band.w >= width - 1, `${what}: the band fills the screen`)
        t.ok(l.scroll.h <= l.scroll.ch + 1 && l.scroll.w <= l.scroll.cw + 1, `${what}: nothing overflows`)
        t.same(
          l.parts.map((p) => p.cls),
          ['sev', 'head', 'desc', 'instr', 'meta'],
        )
        for (const p of l.parts) t.ok(inside(p.box, screen), `${what}: ${p.cls} is not clipped`)
        // Larger than over content: the headline at least 1/20 of the shorter side (54 px at 1080).
        const px = (cls: string) => l.parts.find((p) => p.cls === cls)!.fontPx
        t.ok(px('head') >= short / 20, `${what}: headline ${px('head')} px`)
        t.ok(px('instr') >= short / 30, `${what}: instruction ${px('instr')} px`)
        t.ok(Math.min(...l.parts.map((p) => p.fontPx)) >= short / 60, `${what}: smallest text`)
        t.ok(contrast(l.colors.fg, l.colors.bg) >= 4.5, `${what}: contrast ${contrast(l.colors.fg, l.colors.bg).toFixed(2)} meets WCAG AA`)
        t.equal(await page.evaluate(`document.querySelectorAll('#stage .diag').length`), 0, `${what}: nothing drawn beneath`)
      }

      // A description too long for a banner gives way; the headline and instruction stay whole.
      const long = { ...NWS, headline: `LONG ${width}`, description: 'THE STORM IS MOVING EAST AT 25 MPH. '.repeat(40) }
      let l = await show(view({ alert: long, presentation: 'banner', source: 'assignment' }), long.headline)
      t.equal(l.fit, 'short', 'the description was dropped to fit')
      t.same(
        l.parts.filter((p) => p.display !== 'none').map((p) => p.cls),
        ['sev', 'head', 'instr', 'meta'],
      )
      for (const p of l.parts.filter((p) => p.display !== 'none')) t.ok(inside(p.box, l.band), `${p.cls} is not clipped`)
      t.ok(l.scroll.h <= l.scroll.ch + 1, 'nothing overflows')

      // A test alert says so; a hand-started emergency keeps its one text, fitted.
      l = await show(view({ alert: { ...NWS, headline: `TESTED ${width}`, test: true, severity: 'Minor' } }), `TESTED ${width}`)
      t.equal(l.parts[0]!.text, 'TEST · Minor')
      server.show(view({ message: `Evacuate the building now ${width}`, version: ++n }))
      const plain = await until(5 * 60_000, async () => {
        const x = await layout()
        return x.parts.length === 0 && x.fit === 'ok' ? x : undefined
      })
      t.ok(plain, 'the plain message fits')
      if (!plain) return
      t.ok(inside(plain.band, screen))
      t.ok(contrast(plain.colors.fg, plain.colors.bg) >= 4.5, 'the plain band meets WCAG AA')
    })
  }

  // Cleared: the band goes.
  server.show({ ...view({ emergencyId: null, message: null, source: 'assignment' }), version: ++n } as PlayerView)
  t.ok(await until(5 * 60_000, async () => ((await layout()).band.h === 0 ? true : undefined)), 'the band is gone once cleared')
})
