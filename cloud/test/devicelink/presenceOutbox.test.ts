// Screen presence through the event outbox, on both engines. A status change and its
// `screen.online` / `screen.offline` row commit in one transaction: when the outbox write
// fails the status does not move either, and when it succeeds the dispatch turns a run of
// connects into one webhook delivery per event and endpoint of the event's workspace, and
// the status listeners hear each change. Across a real kill -9: cloud/test/crash/presenceWebhook.test.ts.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { sql } from 'kysely'
import { ScreenPresence, type ScreenStatusChange } from '../../src/domains/devicelink/ScreenPresence.js'
import type { Connection, ConnectionListener } from '../../src/platform/broker/LiveConnections.js'
import { forEngines } from '../db/engines.js'
import type { Harness } from '../helpers.js'

class FakeLink {
  private listeners: ConnectionListener[] = []
  async subscribe(): Promise<void> {}
  onConnections(l: ConnectionListener): () => void {
    this.listeners.push(l)
    return () => undefined
  }
  isConnected(): boolean {
    return false
  }
  open(c: Connection): void {
    for (const l of this.listeners) l.open(c)
  }
  close(c: Connection): void {
    for (const l of this.listeners) l.close(c)
  }
}

async function pair(h: Harness, apiKey: string, name: string): Promise<string> {
  const reg = (await h.req('POST', '/v1/devices/register', null, { model: 'QM55B' })).json().data
  const res = await h.req('POST', '/v1/screens/pair', apiKey, { code: reg.pairingCode, name })
  if (res.statusCode !== 201) throw new Error(`pair: ${res.statusCode} ${res.body}`)
  return res.json().data.id
}

async function endpoint(h: Harness, apiKey: string): Promise<string> {
  const res = await h.req('POST', '/v1/webhooks', apiKey, { url: 'https://localhost:9/hook', events: ['screen.online', 'screen.offline'] })
  if (res.statusCode !== 201) throw new Error(`webhook: ${res.statusCode} ${res.body}`)
  return res.json().data.id
}

forEngines(t, (t, build) => {
  t.test('a presence change and its outbox row commit together; a run of connects dispatches as one batch', async (t) => {
    const h = await build(t, { webhookAllowHosts: ['localhost'] })
    const { db, outbox } = servicesOf(h.app)
    const a = await h.workspace('A')
    const b = await h.workspace('B')
    const [a1, a2, b1] = [await pair(h, a.apiKey, 'A1'), await pair(h, a.apiKey, 'A2'), await pair(h, b.apiKey, 'B1')]
    const epA = await endpoint(h, a.apiKey)
    const epB = await endpoint(h, b.apiKey)
    const link = new FakeLink()
    const log = { warn: () => undefined, error: () => undefined }
    const presence = new ScreenPresence(db, h.clock, link, outbox, log, 2000)
    await presence.start({ timers: false })
    const heard: ScreenStatusChange[] = []
    presence.onScreenStatus((c) => void heard.push(c))
    const status = async (id: string) => (await db.kysely.selectFrom('screens').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status
    const outboxRows = () => db.kysely.selectFrom('events_outbox').select(['event', 'workspace_id', 'data', 'dispatched_at']).orderBy('id').execute()

    // The outbox write fails (its table is gone): the status change is rolled back with it.
    await sql`ALTER TABLE events_outbox RENAME TO events_outbox_away`.execute(db.kysely)
    link.open({ clientId: a1, generation: 1 })
    await presence.idle()
    t.equal(await status(a1), 'offline', 'no status change without its event')
    await sql`ALTER TABLE events_outbox_away RENAME TO events_outbox`.execute(db.kysely)
    t.same(await outboxRows(), [])
    t.same(heard, [])
    link.close({ clientId: a1, generation: 1 })
    await presence.idle()

    // A run of connects across two workspaces: one transaction, three rows, one dispatch.
    h.clock.advance(1000)
    const at = h.clock.now().toISOString()
    link.open({ clientId: a1, generation: 2 })
    link.open({ clientId: a2, generation: 3 })
    link.open({ clientId: b1, generation: 4 })
    await presence.idle()
    for (const id of [a1, a2, b1]) t.equal(await status(id), 'online')
    const rows = await outboxRows()
    t.same(
      rows.map((r) => [r.event, r.workspace_id, JSON.parse(r.data)]),
      [
        ['screen.online', a.workspaceId, { screenId: a1, screenName: 'A1', nodeId: null, at }],
        ['screen.online', a.workspaceId, { screenId: a2, screenName: 'A2', nodeId: null, at }],
        ['screen.online', b.workspaceId, { screenId: b1, screenName: 'B1', nodeId: null, at }],
      ],
      'one row per change, in connect order',
    )
    t.ok(
      rows.every((r) => r.dispatched_at),
      'dispatched',
    )
    const deliveries = await db.kysely.selectFrom('webhook_deliveries').select(['endpoint_id', 'event', 'data']).orderBy('id').execute()
    t.same(
      deliveries.map((d) => [d.endpoint_id, d.event, JSON.parse(d.data).screenId]),
      [
        [epA, 'screen.online', a1],
        [epA, 'screen.online', a2],
        [epB, 'screen.online', b1],
      ],
      "each event delivered to its own workspace's endpoint, once",
    )
    t.same(
      heard.map((c) => [c.screenId, c.status, c.workspaceId]),
      [
        [a1, 'online', a.workspaceId],
        [a2, 'online', a.workspaceId],
        [b1, 'online', b.workspaceId],
      ],
      'the status listeners hear the dispatched changes, in order',
    )

    // Offline: the same, through the sweep.
    link.close({ clientId: a2, generation: 3 })
    await presence.idle()
    const dropped = h.clock.now().toISOString()
    h.clock.advance(2001)
    await presence.sweep()
    t.equal(await status(a2), 'offline')
    const last = (await outboxRows()).at(-1)!
    t.same(
      [last.event, JSON.parse(last.data)],
      ['screen.offline', { screenId: a2, screenName: 'A2', nodeId: null, at: h.clock.now().toISOString(), since: dropped }],
    )
    t.ok(last.dispatched_at, 'dispatched by the time the sweep resolves')
    t.match(heard.at(-1), { screenId: a2, status: 'offline', since: dropped })
    t.equal((await db.kysely.selectFrom('webhook_deliveries').select('id').execute()).length, 4)
    presence.stop()
  })

  t.test('a network cut: one sweep announces every due screen with its own since; a failed sweep is retried by the next', async (t) => {
    const h = await build(t, { webhookAllowHosts: ['localhost'] })
    const { db, outbox } = servicesOf(h.app)
    const a = await h.workspace('A')
    const b = await h.workspace('B')
    const [a1, a2, a3, b1] = [await pair(h, a.apiKey, 'A1'), await pair(h, a.apiKey, 'A2'), await pair(h, a.apiKey, 'A3'), await pair(h, b.apiKey, 'B1')]
    const epA = await endpoint(h, a.apiKey)
    const epB = await endpoint(h, b.apiKey)
    const link = new FakeLink()
    const errors: string[] = []
    const log = { warn: () => undefined, error: (_o: unknown, msg: string) => void errors.push(msg) }
    const presence = new ScreenPresence(db, h.clock, link, outbox, log, 2000)
    await presence.start({ timers: false })
    t.teardown(() => presence.stop())
    const heard: ScreenStatusChange[] = []
    presence.onScreenStatus((c) => void heard.push(c))
    const status = async (id: string) => (await db.kysely.selectFrom('screens').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status
    const offlineRows = async () =>
      (
        await db.kysely.selectFrom('events_outbox').select(['event', 'data', 'dispatched_at']).where('event', '=', 'screen.offline').orderBy('id').execute()
      ).map((r) => ({ ...JSON.parse(r.data), dispatched: r.dispatched_at !== null }))
    ;[a1, a2, a3, b1].forEach((id, i) => link.open({ clientId: id, generation: i + 1 }))
    await presence.idle()

    // a1 and b1 drop together, a2 a second later; a3 drops and comes back within the grace.
    const cut = h.clock.now().toISOString()
    link.close({ clientId: a1, generation: 1 })
    link.close({ clientId: b1, generation: 4 })
    link.close({ clientId: a3, generation: 3 })
    await presence.idle()
    h.clock.advance(1000)
    const later = h.clock.now().toISOString()
    link.close({ clientId: a2, generation: 2 })
    link.open({ clientId: a3, generation: 5 })
    await presence.idle()
    h.clock.advance(2001)

    // The outbox write fails: nobody goes offline without the event, and nothing is lost.
    await sql`ALTER TABLE events_outbox RENAME TO events_outbox_away`.execute(db.kysely)
    await presence.sweep()
    await sql`ALTER TABLE events_outbox_away RENAME TO events_outbox`.execute(db.kysely)
    for (const id of [a1, a2, b1]) t.equal(await status(id), 'online', 'rolled back with its event')
    t.ok(errors.includes('announcing screens offline failed; retried on the next sweep'), errors.join('; '))
    t.same(await offlineRows(), [])

    // The next sweep announces all three, each since its own drop; a3 stays online.
    h.clock.advance(1000)
    const at = h.clock.now().toISOString()
    await presence.sweep()
    for (const id of [a1, a2, b1]) t.equal(await status(id), 'offline')
    t.equal(await status(a3), 'online', 'back within the grace: no offline')
    const rows = await offlineRows()
    t.same(
      [...rows].sort((x, y) => x.screenName.localeCompare(y.screenName)),
      [
        { screenId: a1, screenName: 'A1', nodeId: null, at, since: cut, dispatched: true },
        { screenId: a2, screenName: 'A2', nodeId: null, at, since: later, dispatched: true },
        { screenId: b1, screenName: 'B1', nodeId: null, at, since: cut, dispatched: true },
      ],
      'one event per screen, dispatched by the time the sweep resolves',
    )
    const deliveries = await db.kysely.selectFrom('webhook_deliveries').select(['endpoint_id', 'data']).where('event', '=', 'screen.offline').execute()
    t.same(
      deliveries.map((d) => [d.endpoint_id, JSON.parse(d.data).screenId]).sort(),
      [
        [epA, a1],
        [epA, a2],
        [epB, b1],
      ].sort(),
      "each offline delivered to its own workspace's endpoint, once",
    )
    t.same(
      heard
        .filter((c) => c.status === 'offline')
        .map((c) => c.screenId)
        .sort(),
      [a1, a2, b1].sort(),
    )
    await presence.sweep()
    t.equal((await offlineRows()).length, 3, 'a later sweep announces nothing again')
  })
})
