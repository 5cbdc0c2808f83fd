// The event outbox across a crash: a real cloud process commits an emergency and is killed
// with SIGKILL before it hands the event on (before any webhook delivery exists); a new
// process on the same data dir delivers `emergency.started` for it, exactly once.
// Before the outbox, the event was published after the commit from memory, so this lost it.
import t from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { once } from 'node:events'
import Stripe from 'stripe'
import { SqliteDatabase } from '../../src/platform/db/SqliteDatabase.js'
import { startReceiver } from '../fixtures/receiver.js'
import { fixtureCloud } from '../fixtures/processes.js'
import { deliveredOnce } from './deliveredOnce.js'

t.test('kill -9 between an emergency and its webhook: the webhook is sent after restart, once', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-outbox-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const receiver = await startReceiver(() => ({ status: 200 }))
  t.after(() => receiver.close())

  const first = await fixtureCloud('outboxCloud.ts', [dir, 'change', receiver.url])
  t.after(() => first.child.kill('SIGKILL'))
  const committed = JSON.parse((await first.lines.next()).value as string)
  t.equal(committed.step, 'committed')
  first.child.kill('SIGKILL')
  await once(first.child, 'exit')
  t.equal(first.child.signalCode, 'SIGKILL', 'killed after the commit')

  const db = await SqliteDatabase.open(path.join(dir, 'svc.sqlite'), 2000)
  t.after(() => db.close())
  const before = await db.kysely.selectFrom('webhook_deliveries').select('id').execute()
  t.same(before, [], 'no delivery existed when the process died')
  const pending = await db.kysely.selectFrom('events_outbox').select(['event', 'dispatched_at']).execute()
  t.same(pending, [{ event: 'emergency.started', dispatched_at: null }], 'the event was committed with the emergency')

  const second = await fixtureCloud('outboxCloud.ts', [dir, 'resume'])
  t.after(() => second.child.kill('SIGKILL'))
  t.equal(JSON.parse((await second.lines.next()).value as string).step, 'ready')
  const [got] = await receiver.waitFor(1)
  t.equal(got!.body.event, 'emergency.started')
  t.match(got!.body.data, { id: committed.emergencyId, status: 'active', screenCount: 1, message: 'Evacuate' })
  t.ok(Stripe.webhooks.signature!.verifyHeader(got!.raw, got!.headers['svc-signature'] as string, committed.secret, 300))

  await deliveredOnce(t, db, receiver)
  second.child.kill('SIGTERM')
  await once(second.child, 'exit')
})
