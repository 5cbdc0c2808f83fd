// The audit log page in a real Chromium against a real cloud: the workspace's entries newest
// first, a page at a time (Older / Newer), filtered by action, actor and time range; an
// entry's field-level changes; Verify chain said in words, intact and then broken by a direct
// database edit; the filtered entries as CSV; a role without audit.view sees no navigation
// entry and the page's address says what it needs. axe-core in both themes.
import t from 'tap'
import { servicesOf } from '../../../src/app.js'
import { clickButton, holdRequest, missingChromium, noSerious, signedIn, startConsoleCloud, textShown } from '../console.js'
import { GUARD_MS } from '../sso.js'

const skip = missingChromium(t) ?? false

t.test('the audit log: newest first, paging, filters, details, verify, CSV; hidden without audit.view', { skip }, async (t) => {
  const c = await startConsoleCloud(t)
  const page = await signedIn(t, c, 'ada@example.com', 'admin')
  // More entries than a page holds (50): 55 locations made through the API.
  for (let i = 1; i <= 55; i++) {
    const r = await c.call('POST', '/v1/nodes', { name: `Store ${i}`, kind: 'location', parentId: null })
    if (r.status !== 201) throw new Error(`node ${i}: ${r.status}`)
  }
  t.ok((await page.$$eval('nav[aria-label=Main] a', (as) => as.map((a) => a.textContent))).includes('Audit log'), 'an admin sees Audit log in the navigation')
  await page.goto(`${c.base}/console/audit-log`)
  await page.waitForSelector('table.audit tbody tr', { timeout: GUARD_MS })
  const firstRow = () => page.$eval('table.audit tbody tr', (r) => (r as unknown as { innerText: string }).innerText)
  t.match(await firstRow(), /node\.create[\s\S]*Store 55/, 'newest first: the last location made')
  t.match(await page.$eval('table.audit caption', (e) => e.textContent), /^50 entries on this page/)
  await noSerious(t, page, 'the audit log (light)')

  // The older page's answer held back: meanwhile the table is the first page's, caption and
  // rows alike (the caption once said "page 2" over the first page's rows).
  const older = await holdRequest(page, (url) => url.includes('/v1/audit-log?') && url.includes('cursor='))
  await clickButton(page, 'Older')
  await older.asked
  t.match(
    await page.$eval('table.audit', (e) => e.textContent),
    /^50 entries on this page(?! \(page)[\s\S]*Store 55/,
    'while the older page loads: the first page, its caption without a page number',
  )
  await older.release()
  await page.waitForFunction("document.querySelector('table.audit caption')?.textContent.includes('page 2')", { timeout: GUARD_MS })
  const olderRows = await page.$eval('table.audit tbody', (b) => (b as unknown as { innerText: string }).innerText)
  t.match(olderRows, /Store 1\b/, 'the older page holds the first locations')
  t.notMatch(olderRows, /Store 55/, 'and not the newest')
  await clickButton(page, 'Newer')
  await page.waitForFunction("!document.querySelector('table.audit caption')?.textContent.includes('page 2')", { timeout: GUARD_MS })
  // The caption can change before the rows do: wait for the first row itself.
  await page.waitForFunction("document.querySelector('table.audit tbody tr')?.innerText.includes('Store 55')", { timeout: GUARD_MS })
  t.match(await firstRow(), /Store 55/, 'Newer goes back to the first page')

  // An entry's details: its field-level changes.
  await page.$eval('table.audit tbody tr button', (b) => (b as unknown as { click(): void }).click())
  await page.waitForSelector('.audit-details', { timeout: GUARD_MS })
  const details = await page.$eval('.audit-details', (d) => (d as unknown as { innerText: string }).innerText)
  t.match(details, /name\s+—\s+Store 55/, 'the change of `name` from nothing to Store 55')
  t.match(details, /Previous hash/)

  // Filters: the admin's own entries (the invite accepted), then a time range with nothing in it.
  const ada = ((await c.call('GET', '/v1/users')).body.data as { id: string; email: string }[]).find((u) => u.email === 'ada@example.com')!
  await page.select('#f-audit-actor', ada.id)
  await clickButton(page, 'Apply')
  await page.waitForFunction("[...document.querySelectorAll('table.audit tbody tr')].every((r) => r.innerText.includes('ada'))", { timeout: GUARD_MS })
  t.match(await firstRow(), /invite\.accept/, "filtered by actor: the admin's own sign-in")
  await page.type('#f-audit-action', 'node.create')
  await clickButton(page, 'Apply')
  await textShown(page, 'No entries match.')
  t.pass('actor and action together: the admin made no location')
  await clickButton(page, 'Clear')
  await page.waitForSelector('table.audit tbody tr', { timeout: GUARD_MS })
  await page.type('#f-audit-action', 'node.create')
  await page.$eval('#f-audit-from', (e) => {
    const i = e as unknown as { value: string; dispatchEvent(e: Event): void }
    i.value = '2999-01-01T00:00'
    i.dispatchEvent(new Event('input', { bubbles: true }))
  })
  await clickButton(page, 'Apply')
  await textShown(page, 'No entries match.')
  t.pass('a time range in the future matches nothing')
  await page.$eval('#f-audit-from', (e) => {
    const i = e as unknown as { value: string; dispatchEvent(e: Event): void }
    i.value = ''
    i.dispatchEvent(new Event('input', { bubbles: true }))
  })
  await clickButton(page, 'Apply')
  await page.waitForSelector('table.audit tbody tr', { timeout: GUARD_MS })

  // CSV of what the filter shows.
  const href = await page.$eval('a[download]', (a) => a.getAttribute('href') ?? '')
  t.match(href, /format=csv/)
  t.match(href, /action=node\.create/, 'the download carries the filter')
  const csv = (await page.evaluate(`fetch(${JSON.stringify(href)}).then((r) => r.text())`)) as string
  const lines = csv.trim().split('\r\n')
  t.match(lines[0], /^id,seq,at,actorKind/, 'a CSV header')
  t.equal(lines.length, 56, 'one line per location made, and the header')

  // Verify: intact, then broken by an edit made straight in the database.
  await clickButton(page, 'Verify chain')
  await textShown(page, 'The chain is intact:')
  await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }])
  await noSerious(t, page, 'the audit log with details and the verify result (dark)')
  await servicesOf(c.running.app).db.run("UPDATE audit_entries SET resource_name = 'Store 0' WHERE chain = ? AND resource_name = 'Store 7'", [c.workspaceId])
  await clickButton(page, 'Verify chain')
  await page.waitForFunction("document.querySelector('p[role=alert]')?.textContent.includes('The chain is broken at entry #')", { timeout: GUARD_MS })
  t.match(await page.$eval('p[role=alert]', (p) => p.textContent), /the entry was changed after it was recorded/, 'the break said in words')

  // A viewer: no navigation entry, and the address says what is needed.
  const viewer = await signedIn(t, c, 'vera@example.com', 'viewer')
  t.notOk((await viewer.$$eval('nav[aria-label=Main] a', (as) => as.map((a) => a.textContent))).includes('Audit log'), 'a viewer sees no Audit log entry')
  await viewer.goto(`${c.base}/console/audit-log`)
  await textShown(viewer, 'Your role may not see audit log (it needs audit.view)')
  t.pass('the direct address says what is needed')
})
