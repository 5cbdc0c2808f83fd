// Screen presence through the event outbox across a real kill -9, on both engines: a cloud
// process that committed a screen's `online` and died before dispatching it; the next
// process sends the webhook, exactly once.
import t from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { once } from 'node:events'
import Stripe from 'stripe'
import type { Database } from '../../src/platform/db/Database.js'
import { SqliteDatabase } from '../../src/platform/db/SqliteDatabase.js'
import { PostgresDatabase } from '../../src/platform/db/PostgresDatabase.js'
import { freshPostgresSchema, postgresUrl, requirePostgres, ENGINES } from '../db/engines.js'
import { startReceiver } from '../fixtures/receiver.js'
import { fixtureCloud } from '../fixtures/processes.js'
import { deliveredOnce } from './deliveredOnce.js'

for (const engine of ENGINES) {
  t.test(`kill -9 between a screen going online and its webhook: sent after restart, once [${engine}]`, async (t) => {
    let extra: string[] = []
    let open: () => Promise<Database>
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-presence-outbox-'))
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
    if (engine === 'postgres') {
      if (!requirePostgres(t, t.name)) return
      const url = postgresUrl()!
      const schema = await freshPostgresSchema(t, url)
      extra = [url, schema]
      open = () => PostgresDatabase.open(url, { busyTimeoutMs: 2000, schema, max: 2 })
    } else open = () => SqliteDatabase.open(path.join(dir, 'svc.sqlite'), 2000)
    const receiver = await startReceiver(() => ({ status: 200 }))
    t.after(() => receiver.close())

    const first = await fixtureCloud('presenceCloud.ts', [dir, 'change', receiver.url, ...extra])
    t.after(() => first.child.kill('SIGKILL'))
    const committed = JSON.parse((await first.lines.next()).value as string)
    t.equal(committed.step, 'committed')
    first.child.kill('SIGKILL')
    await once(first.child, 'exit')
    t.equal(first.child.signalCode, 'SIGKILL', 'killed after the commit')

    const db = await open()
    t.after(() => db.close())
    t.same(await db.kysely.selectFrom('webhook_deliveries').select('id').execute(), [], 'no delivery existed when the process died')
    t.same(
      await db.kysely.selectFrom('events_outbox').select(['event', 'dispatched_at']).execute(),
      [{ event: 'screen.online', dispatched_at: null }],
      'the event was committed with the status change',
    )

    const second = await fixtureCloud('presenceCloud.ts', [dir, 'resume', '-', ...extra])
    t.after(() => second.child.kill('SIGKILL'))
    t.equal(JSON.parse((await second.lines.next()).value as string).step, 'ready')
    const [got] = await receiver.waitFor(1)
    t.equal(got!.body.event, 'screen.online')
    t.match(got!.body.data, { screenId: committed.screenId, screenName: 'Lobby' })
    t.ok(Stripe.webhooks.signature!.verifyHeader(got!.raw, got!.headers['svc-signature'] as string, committed.secret, 300))

    await deliveredOnce(t, db, receiver)
    second.child.kill('SIGTERM')
    await once(second.child, 'exit')
  })
}
