// At least once across a crash: a real cloud process is killed with SIGKILL while the
// receiver holds its delivery open; a new process on the same data dir sends it again
// (same deliveryId) once the claim's lease has run out.
import t from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { once } from 'node:events'
import Stripe from 'stripe'
import { SqliteDatabase } from '../../src/platform/db/SqliteDatabase.js'
import { startReceiver } from '../fixtures/receiver.js'
import { fixtureCloud } from '../fixtures/processes.js'
import { ENDPOINT_CONCURRENCY } from '../../src/domains/webhooks/model.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

t.test('a delivery in flight when the process is killed -9 is delivered after restart', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-crash-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  let hold = true
  const receiver = await startReceiver(() => (hold ? 'hold' : { status: 200 }))
  t.after(() => receiver.close())

  const first = await fixtureCloud('crashCloud.ts', [dir, 'publish', receiver.url])
  t.after(() => first.child.kill('SIGKILL'))
  const published = JSON.parse((await first.lines.next()).value as string)
  t.equal(published.step, 'published')
  const [held] = await receiver.waitFor(1)
  const deliveryId = String(held!.body.deliveryId)
  t.match(deliveryId, /^whd_/)
  first.child.kill('SIGKILL')
  await once(first.child, 'exit')
  t.equal(first.child.signalCode, 'SIGKILL', 'killed mid-delivery')

  hold = false
  const second = await fixtureCloud('crashCloud.ts', [dir, 'resume'])
  t.after(() => second.child.kill('SIGKILL'))
  t.equal(JSON.parse((await second.lines.next()).value as string).step, 'ready')
  const got = await receiver.waitFor(2)
  t.equal(got[1]!.body.deliveryId, deliveryId, 'the same delivery, sent again')
  t.ok(Stripe.webhooks.signature!.verifyHeader(got[1]!.raw, got[1]!.headers['svc-signature'] as string, published.secret, 300))

  const db = await SqliteDatabase.open(path.join(dir, 'svc.sqlite'), 2000)
  t.after(() => db.close())
  let row: { status: string } | undefined
  for (const guardEnd = Date.now() + HANG_GUARD_MS; Date.now() < guardEnd; ) {
    row = await db.get<{ status: string }>('SELECT status FROM webhook_deliveries WHERE id = ?', [deliveryId])
    if (row?.status === 'delivered') break
    await new Promise((r) => setTimeout(r, 100))
  }
  t.equal(row?.status, 'delivered')
  const n = await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM webhook_deliveries')
  t.equal(n?.n, 1, 'nothing lost, nothing duplicated in the queue')
  second.child.kill('SIGTERM')
  await once(second.child, 'exit')
})

t.test('a whole batch in flight when the process is killed -9: every delivery arrives after restart, none lost', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-crash-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const n = 40
  let hold = true
  const receiver = await startReceiver(() => (hold ? 'hold' : { status: 200 }))
  t.after(() => receiver.close())

  const first = await fixtureCloud('crashCloud.ts', [dir, 'publish', receiver.url, String(n)])
  t.after(() => first.child.kill('SIGKILL'))
  t.equal(JSON.parse((await first.lines.next()).value as string).step, 'published')
  // The first batch's requests are open at the receiver (as many as one endpoint may have at once).
  const held = await receiver.waitFor(ENDPOINT_CONCURRENCY)
  const inFlight = new Set(held.map((r) => String(r.body.deliveryId)))
  first.child.kill('SIGKILL')
  await once(first.child, 'exit')

  hold = false
  receiver.release(500) // the held ones' answers go nowhere: their process is gone
  const second = await fixtureCloud('crashCloud.ts', [dir, 'resume'])
  t.after(() => second.child.kill('SIGKILL'))
  t.equal(JSON.parse((await second.lines.next()).value as string).step, 'ready')
  const db = await SqliteDatabase.open(path.join(dir, 'svc.sqlite'), 2000)
  t.after(() => db.close())
  // The batch goes out as soon as the dead process's lease (1.5 s) has run out: within a few
  // seconds of the restart even on a loaded machine. (It used to take ~45 s: the first run had
  // claimed the first few events alone and waited for them, held, until the 10 s time limit;
  // they were recorded as failed with a 30 s backoff before the rest were even sent.)
  let delivered = 0
  const readyAt = Date.now()
  for (const guardEnd = Date.now() + HANG_GUARD_MS; delivered < n && Date.now() < guardEnd; ) {
    delivered = (await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status = 'delivered'"))?.n ?? 0
    if (delivered < n) await new Promise((r) => setTimeout(r, 100))
  }
  t.equal(delivered, n, `every delivery delivered (${Date.now() - readyAt} ms after the restart was ready)`)
  const attempts = await db.all<{ attempts: number }>('SELECT attempts FROM webhook_deliveries')
  t.ok(
    attempts.every((r) => r.attempts === 1),
    'each delivered at its first recorded attempt: no attempt failed and none waited for a backoff',
  )
  t.equal((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM webhook_deliveries'))?.n, n, 'nothing duplicated in the queue')
  const ids = new Set(receiver.received.map((r) => String(r.body.deliveryId)))
  t.equal(ids.size, n, 'the receiver saw every delivery')
  for (const id of inFlight) t.ok(receiver.received.filter((r) => r.body.deliveryId === id).length >= 2, `${id} sent again after the crash`)
  second.child.kill('SIGTERM')
  await once(second.child, 'exit')
})
