// The content page in a real Chromium against a real cloud: a PNG uploaded through the page
// with its progress bar reaching 100% and then listed; a playlist made from it, edited and
// deleted; the API's 422 shown next to the field it names; a viewer offered no upload, create
// or delete; Tab reaching the upload and create controls; no serious or critical axe-core
// violation.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { servicesOf } from '../../src/app.js'
import { png } from '../content/fixtures.js'
import { clickButton, docShot, missingChromium, textShown, signedIn, noSerious, fileCloud, retype } from './console.js'

const skip = missingChromium(t) ?? false
/** One cloud for this file's tests. */
const cloud = fileCloud()

t.test('upload a PNG with progress, make a playlist of it, a 422 next to its field, edit and delete', { skip }, async (t) => {
  const c = await cloud(t)
  const page = await signedIn(t, c, 'ed@example.com', 'editor')
  const nav = await page.$$eval('nav[aria-label=Main] a', (as) => as.map((a) => a.textContent))
  t.ok(nav.indexOf('Content') > nav.indexOf('Screens') && nav.indexOf('Schedules') > nav.indexOf('Content'), `navigation order: ${nav.join(', ')}`)
  await page.goto(`${c.base}/console/content`)
  await page.waitForSelector('#f-file')
  await textShown(page, '0 files')
  await noSerious(t, page, 'content page, empty')

  // Upload through the page: the progress element reaches 100%, then the file is listed.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-console-upload-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'welcome.png')
  fs.writeFileSync(file, png(64, 48))
  const input = (await page.$('#f-file'))!
  await (input as unknown as { uploadFile(p: string): Promise<void> }).uploadFile(file)
  await page.type('#f-upload-name', 'Welcome board')
  await clickButton(page, 'Upload')
  await page.waitForFunction("document.querySelector('#upload-progress')?.value === 100")
  t.equal(await page.$eval('#upload-progress', (e) => e.getAttribute('value')), '100', 'the progress bar reaches 100%')
  await textShown(page, '1 file')
  const row = await page.$$eval('section[aria-labelledby=h-media] tbody tr td', (tds) => tds.map((td) => td.textContent))
  const bytes = png(64, 48).length
  t.same(row.slice(0, 3), ['Welcome board', 'image/png', bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KB`], 'listed with name, type, size')
  const media = (await c.call('GET', '/v1/media')).body.data as { id: string; name: string }[]
  t.equal(media[0]?.name, 'Welcome board', 'the API has it')

  // Probed (the background step after an upload): the library shows its thumbnail and size.
  await servicesOf(c.running.app).media.processPending()
  await page.reload()
  await textShown(page, '64×48')
  const thumb = await page.waitForFunction(
    "[...document.querySelectorAll('section[aria-labelledby=h-media] tbody img.thumb')].find((i) => i.complete && i.naturalWidth > 0)?.getAttribute('src')",
  )
  t.equal(await thumb.jsonValue(), `/v1/media/${media[0]!.id}/thumbnail`, "the file's thumbnail is shown in its row")
  await noSerious(t, page, 'content page with a thumbnail')

  // A playlist: an empty name is the API's 422, shown next to the name field.
  await clickButton(page, 'New playlist')
  await page.waitForSelector('#f-playlist-name')
  await clickButton(page, 'Add media')
  await page.waitForSelector('#dur-0')
  // An item without a file: named in words beside its picker, nothing sent.
  await clickButton(page, 'Create playlist')
  await textShown(page, 'Choose a file for item 1.')
  t.equal((await c.call('GET', '/v1/playlists')).body.data.length, 0, 'nothing was created')
  // Picked from the library (by name, Enter): a picture gets the default 10 s.
  await page.type('#item-0', 'Welcome')
  await page.waitForSelector('#item-0-opt-0')
  await page.keyboard.press('ArrowDown')
  await page.keyboard.press('Enter')
  await page.waitForFunction("document.querySelector('#dur-0')?.value === '10'")
  await textShown(page, 'The loop: 1 item, 0:10')
  await clickButton(page, 'Create playlist')
  await page.waitForSelector('#f-playlist-name-error')
  t.match(await page.$eval('#f-playlist-name-error', (e) => e.textContent), /name/, "the API's 422 next to the field it names")
  t.equal(await page.$eval('#f-playlist-name', (e) => e.getAttribute('aria-describedby')), 'f-playlist-name-error')
  t.equal(await page.$eval('#f-playlist-name', (e) => e.getAttribute('aria-invalid')), 'true')
  await noSerious(t, page, 'playlist form with an error')
  await docShot(page, 'playlist-form')
  await page.type('#f-playlist-name', 'Lobby loop')
  await retype(page, '#dur-0', '8')
  await clickButton(page, 'Create playlist')
  await textShown(page, '1 playlist')
  const lists = (await c.call('GET', '/v1/playlists')).body.data as { id: string; name: string; items: { kind: string; id: string; durationMs: number }[] }[]
  t.equal(lists[0]?.name, 'Lobby loop')
  t.same(
    lists[0]?.items.map((i) => [i.kind, i.id, i.durationMs]),
    [['media', media[0]!.id, 8000]],
    'the playlist holds the uploaded file for 8 s',
  )

  // Edit: the form shows what it holds; a new name is saved.
  await page.click('button[aria-label="Edit Lobby loop"]')
  await page.waitForSelector('#f-playlist-name')
  t.equal(await page.$eval('#f-playlist-name', (e) => (e as unknown as { value: string }).value), 'Lobby loop')
  t.equal(await page.$eval('#dur-0', (e) => (e as unknown as { value: string }).value), '8')
  await page.type('#f-playlist-name', ' 2')
  // A second item, moved to the front with the keyboard (Alt+Up in its row).
  await clickButton(page, 'Add media')
  await page.type('#item-1', 'Welcome')
  await page.waitForSelector('#item-1-opt-0')
  await page.keyboard.press('ArrowDown')
  await page.keyboard.press('Enter')
  await page.waitForFunction("document.querySelector('#dur-1')?.value === '10'")
  await retype(page, '#dur-1', '5')
  await textShown(page, 'The loop: 2 items, 0:13')
  await page.focus('#dur-1')
  await page.keyboard.down('Alt')
  await page.keyboard.press('ArrowUp')
  await page.keyboard.up('Alt')
  await page.waitForFunction("document.querySelector('#dur-0')?.value === '5'")
  await clickButton(page, 'Save playlist')
  await textShown(page, 'Lobby loop 2')
  const saved = (await c.call('GET', '/v1/playlists')).body.data as { items: { durationMs: number }[] }[]
  t.same(
    saved[0]?.items.map((i) => i.durationMs),
    [5000, 8000],
    'the item moved up by the keyboard plays first',
  )
  await noSerious(t, page, 'content page with a file and a playlist')
  await page.evaluate('window.scrollTo(0, 0)')
  await docShot(page, 'content')

  // Delete (confirmed).
  page.on('dialog', (d) => void d.accept())
  await page.click('button[aria-label="Delete Lobby loop 2"]')
  await textShown(page, '0 playlists')
  t.same((await c.call('GET', '/v1/playlists')).body.data, [], 'the playlist is gone')

  // A recall made elsewhere shows on the page without reloading (the live event stream).
  const recalled = await c.call('POST', `/v1/media/${media[0]!.id}/recall`, { reason: 'Wrong prices' })
  t.equal(recalled.status, 200, 'recalled through the API')
  await page.waitForSelector('.badge.recalled')
  t.equal(await page.$eval('.badge.recalled', (e) => e.textContent), 'Recalled', 'the file shows as recalled')
})

t.test('a viewer sees the library without upload, create or delete; Tab reaches the controls of an editor', { skip }, async (t) => {
  const c = await cloud(t)
  const made = await c.call('POST', '/v1/playlists', { name: 'Morning' })
  t.equal(made.status, 201)
  const viewer = await signedIn(t, c, 'vera@example.com', 'viewer', true)
  await viewer.goto(`${c.base}/console/content`)
  await textShown(viewer, '1 playlist')
  t.equal(await viewer.$('#f-file'), null, 'no upload for a viewer (needs media.create)')
  t.equal(await viewer.evaluate("[...document.querySelectorAll('button')].some((b) => b.textContent === 'New playlist')"), false, 'no New playlist')
  t.equal(await viewer.$('button[aria-label^=Delete]'), null, 'no delete')
  t.equal(await viewer.$('button[aria-label^=Edit]'), null, 'no edit')
  await noSerious(t, viewer, 'content page, viewer, dark')

  // Keyboard: from the content, Tab reaches the file input, the upload button and New playlist.
  const page = await signedIn(t, c, 'kim@example.com', 'editor')
  await page.goto(`${c.base}/console/content`)
  await page.waitForSelector('#f-file')
  await page.focus('#main')
  const reached = new Set<string>()
  for (let i = 0; i < 20; i++) {
    await page.keyboard.press('Tab')
    reached.add(String(await page.evaluate("document.activeElement?.id || document.activeElement?.textContent || ''")))
  }
  t.ok(reached.has('f-file'), 'Tab reaches the file input')
  t.ok(reached.has('Upload'), 'Tab reaches Upload')
  t.ok(reached.has('New playlist'), 'Tab reaches New playlist')
  await page.focus('#main')
  for (let i = 0; i < 20 && (await page.evaluate('document.activeElement?.textContent')) !== 'New playlist'; i++) await page.keyboard.press('Tab')
  await page.keyboard.press('Enter')
  await page.waitForSelector('#f-playlist-name')
  t.pass('Enter on New playlist opens the form')
})
