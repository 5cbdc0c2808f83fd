// The approvals inbox in a real Chromium against a real cloud: a location whose policy
// holds changes, a key without approval.decide creating and renaming playlists there; the
// inbox shows what would change (current beside held), an approver approves one with a note
// and it leaves the inbox while watching, another is rejected; the decided filter finds
// them; a viewer sees no approve or reject; no serious or critical axe-core violation; the
// keyboard reaches Approve.
import t from 'tap'
import type { Page } from 'puppeteer-core'
import { docShot, invitedIn, missingChromium, seriousViolations, startConsoleCloud, textShown, type ConsoleCloud } from '../console.js'

const skip = missingChromium(t) ?? false

async function setup(c: ConsoleCloud) {
  const store = (await c.call('POST', '/v1/nodes', { name: 'Store 12', kind: 'location' })).body.data.id as string
  const ada = (await c.call('POST', '/v1/users', { email: 'ada@example.com', role: 'admin', name: 'Ada' })).body.data
  const put = await c.call('PUT', `/v1/nodes/${store}/approval-policy`, { required: true, approvers: [ada.id] })
  if (put.status !== 200) throw new Error(`policy ${put.status} ${JSON.stringify(put.body)}`)
  const editor = (
    await c.call('POST', '/v1/api-keys', { name: 'Store editor', permissions: ['playlist.view', 'playlist.edit', 'approval.view', 'approval.request'] })
  ).body.data.secret as string
  // Approved content (the owner's key decides approvals, so its change is not held), then a held rename.
  const lobby = (await c.call('POST', '/v1/playlists', { name: 'Lobby loop', nodeId: store })).body.data.id as string
  const rename = (await c.call('PATCH', `/v1/playlists/${lobby}`, { name: 'Lobby loop (June)' }, editor)).body.data
  if (rename.approval?.state !== 'pending') throw new Error(`not held: ${JSON.stringify(rename)}`)
  const created = (await c.call('POST', '/v1/playlists', { name: 'Store specials', nodeId: store }, editor)).body.data
  if (created.approval?.state !== 'pending') throw new Error(`not held: ${JSON.stringify(created)}`)
  return { store, ada, editor, lobby, renameId: rename.approval.requestId as string, createdId: created.approval.requestId as string }
}

const requests = (page: Page) => page.$$eval('.request-title', (hs) => hs.map((h) => h.textContent ?? ''))

t.test('the inbox shows what would change; approve and reject with a note; decided ones behind the filter', { skip }, async (t) => {
  const c = await startConsoleCloud(t)
  const s = await setup(c)
  const page = await invitedIn(t, c, s.ada.inviteUrl)
  await page.goto(`${c.base}/console/approvals`)
  await textShown(page, '2 pending requests')
  t.match(await requests(page), [/Store specials/, /Lobby loop/], 'newest first')
  const rows = (await page.$$eval('.diff tbody tr', (rs) => rs.map((r) => [...r.children].map((x) => x.textContent)))) as string[][]
  t.same(
    rows,
    [
      ['New playlist', '(none: new)', 'Store specials'],
      ['Name', '"Lobby loop"', '"Lobby loop (June)"'],
    ],
    'the current version beside the held one',
  )
  t.same(await seriousViolations(page), [], 'approvals page: no serious or critical axe-core violation')
  await docShot(page, 'approvals')

  // Keyboard: Tab reaches an Approve button.
  await page.focus('#main')
  let reached = false
  for (let i = 0; i < 30 && !reached; i++) {
    await page.keyboard.press('Tab')
    reached = (await page.evaluate('document.activeElement?.textContent')) === 'Approve'
  }
  t.ok(reached, 'Tab reaches Approve')

  // Approve the rename with a note: it leaves the inbox.
  await page.type(`#note-${s.renameId}`, 'Prices checked')
  await page.click(`form[aria-label="Decide on Lobby loop"] button[type=submit]:not(.secondary)`)
  await textShown(page, '1 pending request')
  t.match(await requests(page), [/Store specials/])
  t.equal((await c.call('GET', `/v1/playlists/${s.lobby}`)).body.data.name, 'Lobby loop (June)', 'the change is live')
  t.match((await c.call('GET', `/v1/approvals/${s.renameId}`)).body.data, { state: 'approved', decisions: [{ note: 'Prices checked' }] })

  // A change made elsewhere shows up live; reject it from the page.
  await c.call('PATCH', `/v1/playlists/${s.lobby}`, { name: 'Lobby loop (July)' }, s.editor)
  await textShown(page, '2 pending requests')
  await page.click(`form[aria-label="Decide on Lobby loop (June)"] button.secondary`)
  await textShown(page, '1 pending request')
  t.equal((await c.call('GET', `/v1/playlists/${s.lobby}`)).body.data.name, 'Lobby loop (June)', 'the rejected change is discarded')

  await page.select('.filters select', 'approved')
  await textShown(page, '1 approved request')
  t.equal(await page.$('.decide'), null, 'decided requests offer no decision')
  t.match(await page.evaluate('document.body.innerText'), /Prices checked/)
  t.same(await seriousViolations(page), [], 'approved filter: no serious or critical axe-core violation')
})

t.test('a viewer sees the inbox and no approve or reject', { skip }, async (t) => {
  const c = await startConsoleCloud(t)
  await setup(c)
  const vera = (await c.call('POST', '/v1/users', { email: 'vera@example.com', role: 'viewer', name: 'Vera' })).body.data
  const page = await invitedIn(t, c, vera.inviteUrl)
  await page.goto(`${c.base}/console/approvals`)
  await textShown(page, '2 pending requests')
  t.equal(await page.$('.decide'), null, 'no decision forms')
  t.equal(await page.evaluate("[...document.querySelectorAll('button')].some((b) => b.textContent === 'Approve')"), false, 'no Approve button')
  t.same(await seriousViolations(page), [], 'approvals, viewer')
})
