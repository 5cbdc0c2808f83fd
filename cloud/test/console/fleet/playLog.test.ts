// A screen's play log on its page, in a real Chromium against a real cloud: newest first, a
// page of 20 at a time through the API's cursor (Older plays, Newer plays), the table and its
// caption one page throughout while the next loads; axe-core on the page.
import t from 'tap'
import { servicesOf } from '../../../src/app.js'
import { PlayLogRepository } from '../../../src/domains/playlog/PlayLogRepository.js'
import { clickButton, holdRequest, missingChromium, noSerious, PAGE_WAIT_MS, signedIn, startConsoleCloud, textShown } from '../console.js'

const skip = missingChromium(t) ?? false

t.test("a screen's play log: newest first, a page at a time, one page's rows and caption while the next loads", { skip }, async (t) => {
  const c = await startConsoleCloud(t)
  const { screenId } = await c.pair('Lobby')
  const now = c.clock.now().getTime()
  const iso = (ms: number) => new Date(ms).toISOString()
  // 25 plays in the last hour, item med_1 the oldest and med_25 the newest.
  const plays = Array.from({ length: 25 }, (_, k) => ({
    source: 'assignment',
    contentKind: 'playlist',
    contentId: 'pl_lobby',
    castId: null,
    emergencyId: null,
    itemKind: 'media',
    itemId: `med_${k + 1}`,
    zone: null,
    startedAt: iso(now - 3_600_000 + k * 60_000),
    endedAt: iso(now - 3_600_000 + k * 60_000 + 10_000),
    durationMs: 10_000,
    panelPower: 'on' as const,
  }))
  await new PlayLogRepository(servicesOf(c.running.app).db.kysely).insert(c.workspaceId, screenId, plays, iso(now))

  const page = await signedIn(t, c, 'pat@example.com', 'viewer')
  await page.goto(`${c.base}/console/screens/${screenId}`)
  await textShown(page, 'media med_25')
  const table = () => page.$eval('section[aria-labelledby=h-plays] table', (e) => e.textContent ?? '')
  const first = await table()
  t.match(first, /^Newest first(?!, page)/, 'the first page: no page number')
  t.match(first, /media med_25[\s\S]*media med_6(?!\d)/, 'newest first, 20 of them')
  t.notMatch(first, /media med_5(?!\d)/, 'the 21st is on the next page')
  await noSerious(t, page, "a screen's play log")

  // The older page's answer held back: meanwhile the table is the first page, caption and rows.
  const held = await holdRequest(page, (url) => url.includes('/play-log?') && url.includes('cursor='))
  await clickButton(page, 'Older plays')
  await held.asked
  t.match(await table(), /^Newest first(?!, page)[\s\S]*media med_25/, 'while the older page loads: the first page, its caption without a page number')
  await held.release()
  await textShown(page, 'Newest first, page 2')
  const older = await table()
  t.match(older, /media med_5(?!\d)[\s\S]*media med_1(?!\d)/, 'the older page: the five oldest')
  t.notMatch(older, /media med_25/, 'and not the newest')
  t.equal(await page.$eval('section[aria-labelledby=h-plays] table', (e) => e.querySelectorAll('tbody tr').length), 5)

  await clickButton(page, 'Newer plays')
  await page.waitForFunction("(document.querySelector('section[aria-labelledby=h-plays] table')?.textContent ?? '').startsWith('Newest firstStarted')", {
    timeout: PAGE_WAIT_MS,
  })
  t.match(await table(), /media med_25/, 'Newer plays goes back to the first page')
})
