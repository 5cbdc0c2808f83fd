// The alerts page in a real Chromium against a real cloud: alert events newest first (open and
// closed) with screen, code, message and next action; a rule created, edited and deleted with
// a 422 next to the field it names; a webhook endpoint created with its signing secret shown
// once, a test sent to a real HTTPS receiver and seen in the delivery log, then replayed; a
// viewer is offered none of the controls; keyboard and axe-core.
import t from 'tap'
import type { Page } from 'puppeteer-core'
import { servicesOf } from '../../../src/app.js'
import { CA_FILE, startReceiver } from '../../fixtures/receiver.js'
import {
  clickButton,
  docShot,
  missingChromium,
  noSerious,
  seriousViolations,
  startConsoleCloud,
  textShown,
  type ConsoleCloud,
  signedIn,
  retype,
} from '../console.js'

const skip = missingChromium(t) ?? false

async function alerts(page: Page, c: ConsoleCloud): Promise<void> {
  await page.goto(`${c.base}/console/alerts`)
  await page.waitForFunction("document.querySelector('h1#page-title')?.textContent === 'Alerts'")
}

t.test('alert events newest first; rules created, edited (a 422 next to its field) and deleted', { skip }, async (t) => {
  const c = await startConsoleCloud(t)
  const screen = await c.pair('Lobby')
  const rule = await c.call('POST', '/v1/alert-rules', { name: 'Offline', config: { codes: ['connection-lost'] } })
  t.equal(rule.status, 201)
  const k = servicesOf(c.running.app).db.kysely
  const base = { workspace_id: c.workspaceId, rule_id: rule.body.data.id, screen_id: screen.screenId, screen_name: 'Lobby', node_id: null, detail: null }
  await k
    .insertInto('alert_events')
    .values([
      {
        ...base,
        id: 'ale_old',
        code: 'display-off',
        severity: 'warning',
        message: 'The panel of Lobby was off',
        next_action: 'Check the power of the panel',
        opened_at: new Date(Date.now() - 3 * 3_600_000).toISOString(),
        closed_at: new Date(Date.now() - 2 * 3_600_000).toISOString(),
      },
      {
        ...base,
        id: 'ale_new',
        code: 'connection-lost',
        severity: 'critical',
        message: 'Lobby lost its connection',
        next_action: 'Check the network at Lobby',
        opened_at: new Date(Date.now() - 60_000).toISOString(),
        closed_at: null,
      },
    ])
    .execute()

  const page = await signedIn(t, c, 'ada@example.com', 'admin')
  t.ok((await page.$$eval('nav[aria-label=Main] a', (as) => as.map((a) => a.textContent))).includes('Alerts'), 'Alerts is in the navigation')
  await alerts(page, c)
  await textShown(page, 'Lobby lost its connection')
  const rows = await page.$$eval('#events ~ table tbody tr', (rs) => rs.map((r) => r.textContent ?? ''))
  t.equal(rows.length, 2)
  t.match(rows[0], /connection-lost.*Lobby lost its connection.*Check the network at Lobby.*open/, 'the open one, newest, first, with its next action')
  t.match(rows[1], /display-off.*closed/, 'the closed one after it')
  t.same(await seriousViolations(page), [], 'alerts page: no serious axe-core violation')
  await docShot(page, 'alerts')

  // A new rule: an empty name answers 422 next to the name field.
  await clickButton(page, 'New rule')
  await page.waitForSelector('#f-rule-name')
  await clickButton(page, 'Save rule')
  await page.waitForSelector('#f-rule-name-error')
  t.match(await page.$eval('#f-rule-name-error', (e) => e.textContent), /name/, "the API's 422 next to the name field")
  await page.type('#f-rule-name', 'Panel off')
  await page.select('#f-rule-code', 'display-off')
  await page.select('#f-rule-severity', 'critical')
  await clickButton(page, 'Save rule')
  await page.waitForFunction("[...document.querySelectorAll('#rules ~ table td')].some((td) => td.textContent === 'Panel off')")
  const created = (await c.call('GET', '/v1/alert-rules')).body.data.find((r: { name: string }) => r.name === 'Panel off')
  t.same(created.config.codes, ['display-off'])
  t.equal(created.config.severity, 'critical')
  await clickButton(page, 'Edit Panel off')
  await page.waitForSelector('#f-rule-name')
  await page.type('#f-rule-name', ' at night')
  await clickButton(page, 'Save rule')
  await page.waitForFunction("!document.querySelector('#f-rule-name') && document.body.innerText.includes('Panel off at night')")
  await clickButton(page, 'Delete Panel off at night')
  await page.waitForFunction("document.activeElement?.textContent === 'Yes, Delete'")
  t.pass('asked again, the answer focused')
  await clickButton(page, 'Yes, Delete Panel off at night')
  await page.waitForFunction("!document.body.innerText.includes('Panel off at night')")
  t.notOk(
    (await c.call('GET', '/v1/alert-rules')).body.data.some((r: { name: string }) => r.name.startsWith('Panel off')),
    'deleted',
  )
})

t.test('webhooks: an endpoint with its secret shown once; a test to a real HTTPS receiver in the delivery log; replay', { skip }, async (t) => {
  const receiver = await startReceiver()
  t.after(() => receiver.close())
  const c = await startConsoleCloud(t, { config: { webhookAllowHosts: ['localhost'], webhookCaFile: CA_FILE } })
  const page = await signedIn(t, c, 'ada@example.com', 'admin')
  await alerts(page, c)
  await page.waitForSelector('#f-hook-url')
  await page.type('#f-hook-url', 'not a url')
  await clickButton(page, 'Add endpoint')
  await page.waitForSelector('#f-hook-url-error')
  t.pass("the API's 422 next to the URL field")
  await retype(page, '#f-hook-url', receiver.url)
  await page.type('#f-hook-description', 'Ops bridge')
  await page.waitForSelector('input[name=hook-event]')
  await page.click('input[name=hook-event]')
  await clickButton(page, 'Add endpoint')
  await page.waitForSelector('.secret')
  const secret = ((await page.$eval('.secret-value', (e) => e.textContent)) ?? '').trim()
  t.ok(secret.length > 16, 'the signing secret is shown')
  await textShown(page, 'it will not be shown again')
  await page.$eval('.secret', (e) => e.scrollIntoView())
  await docShot(page, 'alerts-webhook-secret')
  await alerts(page, c)
  await textShown(page, 'Ops bridge')
  t.notOk(await page.evaluate(`document.body.innerText.includes(${JSON.stringify(secret)})`), 'not shown after a reload')

  await clickButton(page, `Delivery log of ${receiver.url}`)
  await textShown(page, 'No deliveries yet.')
  await clickButton(page, 'Send test')
  await textShown(page, 'Test: delivered (HTTP 200)')
  await page.waitForSelector('tr.delivery')
  t.ok(receiver.received.length >= 1, 'the receiver got it')
  t.match(await page.$eval('tr.delivery', (r) => r.textContent), /delivered.*200/, 'the delivery in the log with its status')
  await clickButton(page, (await page.$eval('tr.delivery button', (b) => b.getAttribute('aria-label'))) ?? '')
  await textShown(page, 'Replay: delivered (HTTP 200)')
  await page.waitForFunction("document.querySelectorAll('tr.delivery').length === 2")
  t.equal(receiver.received.length, 2, 'the replay reached the receiver')
  t.same(await seriousViolations(page), [], 'alerts page with a delivery log: no serious axe-core violation')
  await page.$eval('#deliveries', (e) => e.scrollIntoView())
  await docShot(page, 'alerts-webhooks')

  // Edit (PATCH /v1/webhooks/{id}): the form holds what it is; a URL the API refuses is shown
  // next to the URL field; then a new description, one more event, and switched off.
  const hook = (await c.call('GET', '/v1/webhooks')).body.data[0] as { id: string; events: string[] }
  await page.click(`button[aria-label="Edit ${receiver.url}"]`)
  await page.waitForSelector('#edit-hook-url')
  t.equal(await page.$eval('#edit-hook-url', (e) => (e as unknown as { value: string }).value), receiver.url, 'the form holds the URL')
  t.equal(await page.$eval('#edit-hook-description', (e) => (e as unknown as { value: string }).value), 'Ops bridge')
  t.equal(await page.$eval('#edit-hook-enabled', (e) => (e as unknown as { checked: boolean }).checked), true)
  await retype(page, '#edit-hook-url', 'ftp://example.com/hook')
  await clickButton(page, 'Save endpoint')
  await page.waitForSelector('#edit-hook-url-error')
  t.match(await page.$eval('#edit-hook-url-error', (e) => e.textContent), /url/i, "the API's answer next to the URL field")
  t.equal(await page.$eval('#edit-hook-url', (e) => e.getAttribute('aria-invalid')), 'true')
  await noSerious(t, page, 'webhook edit form with an error')
  await retype(page, '#edit-hook-url', receiver.url)
  await retype(page, '#edit-hook-description', 'Ops bridge, night shift')
  await page.evaluate("[...document.querySelectorAll('input[name=edit-hook-event]')].find((b) => !b.checked).click()")
  await page.click('#edit-hook-enabled')
  await docShot(page, 'alerts-webhook-edit')
  await clickButton(page, 'Save endpoint')
  await textShown(page, `Saved ${receiver.url}.`)
  const after = (await c.call('GET', `/v1/webhooks/${hook.id}`)).body.data as { description: string; events: string[]; enabled: boolean; url: string }
  t.match(after, { url: receiver.url, description: 'Ops bridge, night shift', enabled: false }, 'saved through the API')
  t.equal(after.events.length, hook.events.length + 1, 'one more event')
  await textShown(page, 'Ops bridge, night shift')
  t.match(
    await page.$eval('#webhooks ~ table tbody tr, section[aria-labelledby=webhooks] table tbody tr', (r) => r.textContent),
    /disabled/,
    'the list says it is off',
  )
})

t.test('a viewer sees events and rules but no controls; keyboard reaches the controls', { skip }, async (t) => {
  const c = await startConsoleCloud(t, { config: { webhookAllowHosts: ['localhost'] } })
  await c.call('POST', '/v1/alert-rules', { name: 'Offline', config: { codes: ['connection-lost'] } })
  t.equal((await c.call('POST', '/v1/webhooks', { url: 'https://localhost/in', events: [] })).status, 201)
  const viewer = await signedIn(t, c, 'vera@example.com', 'viewer')
  await alerts(viewer, c)
  await textShown(viewer, 'Offline')
  t.notOk(
    await viewer.evaluate(
      "[...document.querySelectorAll('button')].some((b) => ['New rule', 'Edit Offline', 'Delete Offline', 'Add endpoint', 'Send test'].includes(b.textContent.trim()) || ['Edit Offline', 'Delete Offline'].includes(b.getAttribute('aria-label')))",
    ),
    'no rule or webhook controls',
  )
  t.equal(await viewer.$('#f-hook-url'), null, 'no endpoint form')
  await textShown(viewer, 'https://localhost/in')
  t.equal(await viewer.$('button[aria-label="Edit https://localhost/in"]'), null, 'no endpoint edit')
  t.same(await seriousViolations(viewer), [], 'alerts page as a viewer: no serious axe-core violation')

  const admin = await signedIn(t, c, 'ada@example.com', 'admin')
  await alerts(admin, c)
  await admin.waitForSelector('#f-hook-url')
  const reached = new Set<string>()
  for (let i = 0; i < 60; i++) {
    await admin.keyboard.press('Tab')
    reached.add(
      String(
        await admin.evaluate(
          "document.activeElement?.id || document.activeElement?.getAttribute('aria-label') || document.activeElement?.textContent?.trim() || ''",
        ),
      ),
    )
  }
  for (const want of ['f-event-state', 'New rule', 'Edit Offline', 'f-hook-url', 'Add endpoint']) t.ok(reached.has(want), `Tab reaches ${want}`)
})
