// EventOutbox.publish: an event that is no change's is recorded with the others published in
// the same turn (one transaction), answered once recorded, and dispatched once each, in
// order, to the bus and as webhook deliveries; an event the database refuses is refused
// alone. The events and webhooks modules are wired without the HTTP edge (wireDomains): the
// subject is the outbox's rules.
import t from 'tap'
import type { DomainEvent } from '../../src/domains/events/EventBus.js'
import { eachEngine } from '../db/engines.js'
import { owner, wireDomains, workspace } from '../domains.js'

eachEngine(t, 'the outbox', async (t, db) => {
  // One wiring per engine; each test has its own workspace. No worker sends here: the
  // subject is what is recorded and queued.
  const d = await wireDomains(t, ['outbox', 'events', 'webhookEndpoints', 'webhookWorker'], { webhookAllowHosts: ['localhost'] }, { db })
  const s = { ...d.provided, db }
  await s.webhookWorker.stop()

  t.test('events published in one turn are recorded together, each dispatched once, in order', async (t) => {
    const ws = { id: await workspace(d, 'ws_pub') }
    const heard: DomainEvent[] = []
    s.events.subscribeBatch((batch) => void heard.push(...batch.filter((e) => e.workspaceId === ws.id)))
    await s.webhookEndpoints.create(owner(ws.id), { url: 'https://localhost:1/hook', events: ['content.recalled'] })
    const events = Array.from(
      { length: 30 },
      (_, i) =>
        ({
          event: 'content.recalled',
          workspaceId: ws.id,
          occurredAt: new Date(Date.UTC(2026, 5, 1, 12, 0, i)).toISOString(),
          data: { kind: 'media', id: `med_${i}`, name: `File ${i}`, contentName: `f${i}.png`, reason: null, recalledBy: 'test' },
        }) as DomainEvent,
    )
    await Promise.all(events.map((e) => s.outbox.publish(e)))
    const stored = await s.db.kysely.selectFrom('events_outbox').select(['id', 'data']).where('workspace_id', '=', ws.id).orderBy('id').execute()
    t.same(
      stored.map((r) => JSON.parse(r.data).id),
      events.map((e) => (e.data as { id: string }).id),
      'every event recorded, in the order published',
    )
    await s.outbox.dispatch()
    t.same(
      heard.map((e) => (e.data as { id: string }).id),
      events.map((e) => (e.data as { id: string }).id),
      'each heard on the bus once, in order',
    )
    const deliveries = await s.db.kysely.selectFrom('webhook_deliveries').select(['data', 'payload']).where('workspace_id', '=', ws.id).orderBy('id').execute()
    t.equal(deliveries.length, 30, 'one delivery per event')
    for (const [i, d] of deliveries.entries()) {
      t.same(JSON.parse(d.data), events[i]!.data)
      const body = JSON.parse(d.payload!)
      t.same(body.data, events[i]!.data, 'the body carries the data as recorded')
      t.equal(body.attempt, 1)
      t.equal(body.occurredAt, events[i]!.occurredAt)
    }
    t.equal((await s.outbox.backlog()).pending, 0, 'nothing left to dispatch')
  })

  t.test('an event the database refuses is refused alone; the others of its batch are recorded', async (t) => {
    const ws = { id: await workspace(d, 'ws_refused') }
    const ok = (i: number) =>
      ({
        event: 'content.recalled',
        workspaceId: ws.id,
        occurredAt: '2026-06-01T12:00:00.000Z',
        data: { kind: 'media', id: `med_${i}`, name: 'F', contentName: 'f.png', reason: null, recalledBy: 'test' },
      }) as DomainEvent
    // No workspace: the column is NOT NULL.
    const bad = { ...ok(99), workspaceId: null } as unknown as DomainEvent
    const results = await Promise.allSettled([s.outbox.publish(ok(1)), s.outbox.publish(bad), s.outbox.publish(ok(2))])
    t.same(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    )
    const stored = await s.db.kysely.selectFrom('events_outbox').select('data').where('workspace_id', '=', ws.id).orderBy('id').execute()
    t.same(
      stored.map((r) => JSON.parse(r.data).id),
      ['med_1', 'med_2'],
    )
  })
})
