// SVC_MEDIA_DIR: two instances of one cloud, each with its own data folder, share the media
// folder: a file uploaded through A is stored there (not under A's data folder) and
// downloaded through B.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t, { type Test } from 'tap'
import { buildApp, servicesOf } from '../../src/app.js'
import { loadConfig, testConfig } from '../../src/config.js'
import { ManualClock } from '../../src/platform/clock.js'
import { freshSqlite } from '../db/sqliteTemplate.js'
import { form, PNG_1x1 } from '../content/fixtures.js'

const temp = (t: Test, prefix: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

t.test('SVC_MEDIA_DIR is read as an absolute folder; unset, media stay under the data folder', async (t) => {
  t.equal(loadConfig({ SVC_MEDIA_DIR: 'shared/media' }).mediaDir, path.resolve('shared/media'))
  t.equal(loadConfig({}).mediaDir, null)
})

t.test('a file uploaded on A lands in the shared media folder and downloads on B', async (t) => {
  const mediaDir = temp(t, 'svc-shared-media-')
  const [dataA, dataB] = [temp(t, 'svc-a-'), temp(t, 'svc-b-')]
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const db = await freshSqlite(testConfig().dbBusyTimeoutMs)
  const a = await buildApp(testConfig({ dataDir: dataA, mediaDir }), { clock, db })
  const b = await buildApp(testConfig({ dataDir: dataB, mediaDir }), { clock, db })
  t.after(async () => {
    await a.close()
    await b.close()
    await db.close()
  })
  const ws = await servicesOf(a).workspaces.create('Shared', 'us')
  const { secret } = await servicesOf(a).apiKeys.createRoot(ws.id, ws.region, 'Owner key', 'all')
  const bytes = PNG_1x1
  const f = form({ name: 'Poster', file: { filename: 'poster.png', data: bytes } })
  const up = await a.inject({ method: 'POST', url: '/v1/media/upload', headers: { authorization: `Bearer ${secret}`, ...f.headers }, payload: f.payload })
  t.equal(up.statusCode, 201, up.body)
  const id = up.json().data.id as string

  const stored = fs.readdirSync(mediaDir, { recursive: true }).map(String)
  t.ok(
    stored.some((p) => p.length > 64 && /[0-9a-f]{64}$/.test(p)),
    `stored by hash in the shared folder (${stored.join(', ')})`,
  )
  t.notOk(fs.existsSync(path.join(dataA, 'media')), "nothing under A's own data folder")

  const down = await b.inject({ method: 'GET', url: `/v1/media/${id}/content`, headers: { authorization: `Bearer ${secret}` } })
  t.equal(down.statusCode, 200)
  t.ok(down.rawPayload.equals(bytes), 'B serves the bytes A stored')
})
