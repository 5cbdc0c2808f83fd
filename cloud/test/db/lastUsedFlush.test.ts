// A key's lastUsedAt while its batched write is under way: on PostgreSQL the API reads on
// another pool connection than the flush writes on, so a read can run before the write
// commits. The use must show all the same (the write is held here with a row lock taken
// on a third connection); on SQLite the same steps run without the lock.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { sql } from 'kysely'
import { eachEngine } from './engines.js'
import { build, makeKey } from '../helpers.js'
import { LAST_USED_FLUSH_MS } from '../../src/domains/access/ApiKeyService.js'

eachEngine(t, 'a use being written still shows in lastUsedAt', async (t, db, engine) => {
  const h = await build(t, {}, { db })
  const { apiKey } = await h.workspace()
  const key = await makeKey(h, apiKey, ['node.view'])
  const lastUsed = async () => (await h.req('GET', `/v1/api-keys/${key.id}`, apiKey)).json().data.lastUsedAt
  t.equal((await h.req('GET', '/v1/me', key.secret)).statusCode, 200)
  await servicesOf(h.app).apiKeys.flushLastUsed()
  t.equal(await lastUsed(), '2026-06-01T12:00:00.000Z', 'the first use, written')

  let release = () => {}
  const held = new Promise<void>((resolve) => (release = resolve))
  let locked: Promise<void> = Promise.resolve()
  if (engine === 'postgres') {
    let isLocked = () => {}
    const lockTaken = new Promise<void>((resolve) => (isLocked = resolve))
    locked = db.kysely.transaction().execute(async (trx) => {
      await sql`SELECT id FROM api_keys WHERE id = ${key.id} FOR UPDATE`.execute(trx)
      isLocked()
      await held
    })
    await lockTaken
  }
  h.clock.advance(LAST_USED_FLUSH_MS)
  // This use is past the flush interval: it starts a flush at once (held by the lock on PostgreSQL).
  t.equal((await h.req('GET', '/v1/me', key.secret)).statusCode, 200)
  const at = h.clock.now().toISOString()
  t.equal(await lastUsed(), at, 'the use shows while its write is under way')
  release()
  await locked
  await servicesOf(h.app).apiKeys.idle()
  t.equal(await lastUsed(), at, 'and once written')
  // The next flush drops what the previous one confirmed; the row still answers it.
  h.clock.advance(LAST_USED_FLUSH_MS)
  await servicesOf(h.app).apiKeys.flushLastUsed()
  t.equal(await lastUsed(), at, 'read back from the row')
})
