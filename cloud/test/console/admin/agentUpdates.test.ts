// Settings, agent updates, in a real Chromium against a real cloud: a release uploaded through
// the form (the tarball and its .sig picked as files), a refused one's reason in words, a
// rollout started from the form and watched (its stage's counts), paused, resumed and
// aborted; a viewer sees the releases and rollouts but no control; axe-core.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import type { Page } from 'puppeteer-core'
import { fakeRelease } from '../../fixtures/agentRelease.js'
import { clickButton, docShot, missingChromium, noSerious, signedIn, startConsoleCloud, textShown, type ConsoleCloud, retype } from '../console.js'

const skip = missingChromium(t) ?? false

async function updates(page: Page, c: ConsoleCloud): Promise<void> {
  await page.goto(`${c.base}/console/settings#agent-updates`)
  await page.waitForFunction("document.querySelector('h1#page-title')?.textContent === 'Settings'")
  await textShown(page, 'Agent updates')
}

t.test('a release uploaded from the console, a rollout started, paused, resumed and aborted; a viewer sees no control', { skip }, async (t) => {
  const c = await startConsoleCloud(t)
  await c.pair('Lobby')
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-console-release-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const good = await fakeRelease(t, { version: '5.1.0' })
  const other = await fakeRelease(t, { version: '5.2.0' })
  const tarball = path.join(dir, 'svc-agent-5.1.0-linux-x64.tar.gz')
  fs.writeFileSync(tarball, good.bytes)
  fs.writeFileSync(`${tarball}.sig`, good.signature)
  fs.writeFileSync(path.join(dir, 'other.sig'), other.signature)

  const page = await signedIn(t, c, 'ada@example.com', 'admin')
  await updates(page, c)
  const pick = async (id: string, file: string) => ((await page.$(id)) as unknown as { uploadFile(...files: string[]): Promise<void> }).uploadFile(file)

  // Another file's signature: refused, the reason in words.
  await pick('#f-release-file', tarball)
  await pick('#f-release-signature', path.join(dir, 'other.sig'))
  await clickButton(page, 'Upload release')
  await textShown(page, 'it signs a file whose SHA-256 is')
  t.equal((await c.call('GET', '/v1/agent-releases')).body.data.length, 0, 'nothing kept')
  await noSerious(t, page, 'agent updates with a refused upload')

  await pick('#f-release-signature', `${tarball}.sig`)
  await clickButton(page, 'Upload release')
  await textShown(page, 'Uploaded 5.1.0 for x64.')
  await textShown(page, '1 agent releases')
  t.equal((await c.call('GET', '/v1/agent-releases')).body.data[0]?.sha256, good.sha256, 'the release is stored')

  // A rollout: the screen never reported its architecture, so it fails at once; 100 % keeps the rollout going.
  await retype(page, '#f-rollout-stages', '100')
  await retype(page, '#f-rollout-unhealthy', '100')
  await clickButton(page, 'Start rollout')
  await textShown(page, 'Rollouts, newest first')
  await textShown(page, '100%: 1 screens · 0 updated (0 healthy) · 0 updating · 1 failed · 0 rolled back')
  const id = (await c.call('GET', '/v1/agent-rollouts')).body.data[0].id as string
  await noSerious(t, page, 'agent updates with a rollout')
  await page.$eval('#agent-updates', (e) => e.scrollIntoView())
  await docShot(page, 'settings-agent-updates')

  await clickButton(page, 'Pause')
  await page.waitForFunction(`[...document.querySelectorAll('button')].some((b) => b.textContent.trim() === 'Resume')`)
  t.equal((await c.call('GET', `/v1/agent-rollouts/${id}`)).body.data.state, 'paused')
  await clickButton(page, 'Resume')
  await page.waitForFunction(`[...document.querySelectorAll('button')].some((b) => b.textContent.trim() === 'Pause')`)
  t.equal((await c.call('GET', `/v1/agent-rollouts/${id}`)).body.data.state, 'running')
  await clickButton(page, 'Abort')
  await clickButton(page, 'Yes, Abort the rollout to 5.1.0')
  await textShown(page, 'aborted by')
  t.match((await c.call('GET', `/v1/agent-rollouts/${id}`)).body.data, { state: 'aborted' })

  const viewer = await signedIn(t, c, 'vic@example.com', 'viewer')
  await updates(viewer, c)
  await textShown(viewer, '1 agent releases')
  await textShown(viewer, 'Rollouts, newest first')
  t.equal(await viewer.$('form[aria-label="Upload an agent release"]'), null, 'no upload form for a viewer')
  t.equal(await viewer.$('form[aria-label="Start a rollout"]'), null, 'no rollout form')
  t.notOk(
    await viewer.evaluate(`[...document.querySelectorAll('button')].some((b) => ['Pause', 'Resume', 'Abort'].includes(b.textContent.trim()))`),
    'no rollout actions',
  )
  await noSerious(t, viewer, 'agent updates as a viewer')
})
