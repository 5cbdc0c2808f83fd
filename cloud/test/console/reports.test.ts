// The Reports page in a real Chromium against a real cloud: availability by location over
// time, the screens online the least, plays per day of a chosen content; each chart (uPlot's
// canvas) has its figures as a table (under a disclosure: read by textContent) and a CSV download (parsed by a CSV library); the
// period changes what is counted. axe-core in both themes. A viewer sees the page.
import t from 'tap'
import { parse } from 'csv-parse/sync'
import { servicesOf } from '../../src/app.js'
import { PlayLogRepository } from '../../src/domains/playlog/PlayLogRepository.js'
import { screenRow } from '../fixtures/screenRows.js'
import { missingChromium, noSerious, pageHolds, signedIn, startConsoleCloud, textShown } from './console.js'

const skip = missingChromium(t) ?? false
const DAY = 86_400_000

t.test('reports: charts with their tables and CSV, by period; accessible in both themes', { skip }, async (t) => {
  const c = await startConsoleCloud(t)
  const now = c.clock.now().getTime()
  const today = Math.floor(now / DAY) * DAY
  const iso = (ms: number) => new Date(ms).toISOString()
  const day = (ms: number) => iso(ms).slice(0, 10)
  const node = async (name: string) => (await c.call('POST', '/v1/nodes', { name, kind: 'location', parentId: null })).body.data.id as string
  const [north, south] = [await node('North'), await node('South')]
  const db = servicesOf(c.running.app).db.kysely
  const created = iso(today - 40 * DAY)
  await db
    .insertInto('screens')
    .values([
      screenRow('scr_n1', c.workspaceId, created, { name: 'North one', node_id: north }),
      screenRow('scr_n2', c.workspaceId, created, { name: 'North two', node_id: north }),
      screenRow('scr_s1', c.workspaceId, created, { name: 'South one', node_id: south }),
    ])
    .execute()
  // North one online throughout, North two the last 10 days only, South one never.
  await db
    .insertInto('presence_intervals')
    .values([
      { workspace_id: c.workspaceId, screen_id: 'scr_n1', started_at: created, ended_at: null },
      { workspace_id: c.workspaceId, screen_id: 'scr_n2', started_at: iso(today - 10 * DAY), ended_at: null },
    ])
    .execute()
  const play = (i: number, at: number) => ({
    source: 'assignment',
    contentKind: 'playlist',
    contentId: 'pl_spring',
    castId: null,
    emergencyId: null,
    itemKind: 'media',
    itemId: `med_${i}`,
    zone: null,
    startedAt: iso(at + i * 10_000),
    endedAt: iso(at + i * 10_000 + 10_000),
    durationMs: 10_000,
    panelPower: 'on' as const,
  })
  const twoDaysAgo = today - 2 * DAY + 3_600_000
  const fiveDaysAgo = today - 5 * DAY + 3_600_000
  await new PlayLogRepository(db).insert(c.workspaceId, 'scr_n1', [play(0, twoDaysAgo), play(1, twoDaysAgo), play(2, fiveDaysAgo)], iso(now))

  const page = await signedIn(t, c, 'vic@example.com', 'viewer')
  t.ok((await page.$$eval('nav[aria-label=Main] a', (as) => as.map((a) => a.textContent))).includes('Reports'), 'a viewer sees Reports in the navigation')
  // The requests the chart by location makes: one per chart, not one per day.
  const byLocation: string[] = []
  page.on('request', (r) => {
    if (r.url().includes('/v1/reports/availability') && r.url().includes('groupBy=node') && !r.url().includes('format=csv')) byLocation.push(r.url())
  })
  await page.goto(`${c.base}/console/reports`)
  await textShown(page, 'Screens online the least')
  await page.waitForSelector('section[aria-labelledby=r-worst] table tbody tr')
  const tableRows = (section: string) =>
    page.$$eval(`section[aria-labelledby=${section}] table tbody tr`, (rs) =>
      rs.map((r) => [...r.querySelectorAll('th, td')].map((c) => (c.textContent ?? '').trim())),
    )
  const worst = await tableRows('r-worst')
  t.same(
    worst.map((r) => [r[0], r[1]]),
    [
      ['South one', '0.0 %'],
      ['North two', `${(((now - (today - 10 * DAY)) / (now - (today - 29 * DAY))) * 100).toFixed(1)} %`],
      ['North one', '100.0 %'],
    ],
    'the screens online the least first, over 30 days (up to now)',
  )
  // A chart's canvas is made after its figures are shown (an effect after the render): wait for it.
  await pageHolds(
    page,
    "!!document.querySelector('section[aria-labelledby=r-worst] canvas') && !!document.querySelector('section[aria-labelledby=r-locations] canvas')",
    'the charts drawn',
  )
  t.ok((await page.$$('section canvas')).length >= 2, 'the charts are drawn')
  t.match(
    await page.$eval('section[aria-labelledby=r-worst] [role=img]', (e) => e.getAttribute('aria-label')),
    /South one 0\.0 %/,
    'the chart is one labelled image',
  )
  await page.waitForSelector('section[aria-labelledby=r-locations] table tbody tr')
  const heads = await page.$$eval('section[aria-labelledby=r-locations] table thead th', (hs) => hs.map((h) => h.textContent))
  t.same(heads, ['Day', 'North', 'South'], 'a column per location')
  t.equal((await tableRows('r-locations')).length, 30, 'a row per day')
  t.equal(byLocation.length, 1, `one request for the chart by location over 30 days (${byLocation.join(' ')})`)
  t.match(byLocation[0], /per=day/, 'cut into days by the API')
  const firstDay = (await tableRows('r-locations'))[0]!
  t.equal(firstDay[0], day(today - 29 * DAY), 'the first row is the first day of the window')

  await page.waitForSelector('#f-report-content option')
  t.match(
    await page.$eval('#f-report-content', (s) => (s as unknown as { selectedOptions: { textContent: string }[] }).selectedOptions[0]!.textContent),
    /pl_spring \(3 plays\)/,
  )
  await page.waitForSelector('section[aria-labelledby=r-plays] table tbody tr')
  const plays = await tableRows('r-plays')
  t.same(
    plays.filter((r) => r[1] !== '0').map((r) => [r[0], r[1]]),
    [
      [day(fiveDaysAgo), '1'],
      [day(twoDaysAgo), '2'],
    ],
    'plays per day of the chosen content',
  )

  // The table view opens; axe-core finds nothing serious with it open.
  await page.$$eval('details.chart-table', (ds) => ds.forEach((d) => ((d as unknown as { open: boolean }).open = true)))
  await noSerious(t, page, 'reports (light)')

  // The CSV downloads carry the period and parse.
  const href = await page.$eval('section[aria-labelledby=r-worst] a[download]', (a) => a.getAttribute('href') ?? '')
  t.match(href, /format=csv/)
  const csv = parse((await page.evaluate(`fetch(${JSON.stringify(href)}).then((r) => r.text())`)) as string, { columns: true }) as Record<string, string>[]
  t.same(
    csv.map((r) => r.screenId),
    ['scr_n1', 'scr_n2', 'scr_s1', ''],
    'every screen, then the total',
  )
  const playsHref = await page.$eval('section[aria-labelledby=r-plays] a[download]', (a) => a.getAttribute('href') ?? '')
  const playsCsv = parse((await page.evaluate(`fetch(${JSON.stringify(playsHref)}).then((r) => r.text())`)) as string, { columns: true }) as Record<
    string,
    string
  >[]
  t.same(
    playsCsv.map((r) => [r.day, r.plays]),
    [
      [day(fiveDaysAgo), '1'],
      [day(twoDaysAgo), '2'],
    ],
  )

  // The last 7 days: North two has been online throughout.
  await page.select('#f-report-period', '7')
  await page.waitForFunction(
    `[...document.querySelectorAll('section[aria-labelledby=r-worst] table tbody tr')].some((r) => r.textContent.includes('North two') && r.textContent.includes('100.0 %'))`,
  )
  await page.waitForFunction(`document.querySelectorAll('section[aria-labelledby=r-locations] table tbody tr').length === 7`)
  t.pass('the locations table has a row per day of the week')
  t.equal(byLocation.length, 2, 'one more request for the new period, not seven')
  await page.select('#f-report-period', '90')
  await page.waitForFunction(`document.querySelectorAll('section[aria-labelledby=r-locations] table tbody tr').length === 13`)
  t.equal(byLocation.length, 3, 'over 90 days: one request, cut into weeks')
  t.match(byLocation[2], /per=week/)

  const dark = await signedIn(t, c, 'dan@example.com', 'viewer', true)
  await dark.goto(`${c.base}/console/reports`)
  await dark.waitForSelector('section[aria-labelledby=r-plays] table tbody tr')
  await noSerious(t, dark, 'reports (dark)')
})
