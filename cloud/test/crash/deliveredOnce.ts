// What the kill -9 tests of an outbox event check once the restarted cloud has sent its
// webhook: the delivery is marked delivered (polled every 100 ms, with a hang guard, HANG_GUARD_MS), a
// few more worker runs make no second delivery, the receiver got it once, and the event is
// marked dispatched.
import type { Test } from 'tap'
import type { Database } from '../../src/platform/db/Database.js'
import type { Receiver } from '../fixtures/receiver.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

export async function deliveredOnce(t: Test, db: Database, receiver: Receiver): Promise<void> {
  let status: string | undefined
  for (const guardEnd = Date.now() + HANG_GUARD_MS; status !== 'delivered' && Date.now() < guardEnd; ) {
    status = (await db.kysely.selectFrom('webhook_deliveries').select('status').executeTakeFirst())?.status
    if (status !== 'delivered') await new Promise((r) => setTimeout(r, 100))
  }
  t.equal(status, 'delivered')
  // A few more worker runs must not make a second delivery from the same event.
  await new Promise((r) => setTimeout(r, 500))
  t.equal((await db.kysely.selectFrom('webhook_deliveries').select('id').execute()).length, 1, 'one delivery for one event')
  t.equal(receiver.received.length, 1, 'received once')
  t.ok((await db.kysely.selectFrom('events_outbox').select('dispatched_at').executeTakeFirstOrThrow()).dispatched_at, 'the event is marked dispatched')
}
