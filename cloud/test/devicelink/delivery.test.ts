// Casts and emergencies answer once stored and carry `delivery: {targeted, published,
// applied}`: published once a desired state carrying them went to a screen, applied once the
// screen's reported state shows them playing. On both engines (inject; reports published on
// the broker as a device's would be), through a real MQTT device, and across a restart.
// Also: the builder's batch reads (a few queries per batch, one content lookup per item)
// and the publisher never sending a screen an older version after a newer one.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { topics } from '@svc/shared/mqtt/index'
import { forEngines } from '../db/engines.js'
import { pairScreen } from '../screenHelpers.js'
import type { Harness } from '../helpers.js'
import { InMemoryContentResolver } from '../../src/domains/content/testing/InMemoryContentResolver.js'
import { connectDevice, startCloud, tempDir } from './link.js'

const AT = '2026-06-01T12:00:00.000Z'

function report(playing: Record<string, unknown>, version = 1): Buffer {
  return Buffer.from(JSON.stringify({ version, playing, at: AT }))
}

/** What a device publishes on `reported`, handed to the broker as the device's publish would be. */
async function reportPlaying(h: Harness, screenId: string, playing: Record<string, unknown>): Promise<void> {
  const s = servicesOf(h.app)
  await s.broker.publish(topics.reported(screenId), report(playing), false)
  await s.presence.idle()
  await s.takeoverDelivery.idle()
}

forEngines(t, async (t, build) => {
  t.test('POST answers before publishing; GET carries delivery counts that follow publish and reported state', async (t) => {
    const content = new InMemoryContentResolver()
    const h = await build(t, {}, { content })
    const { workspaceId, apiKey } = await h.workspace()
    content.add(workspaceId, { kind: 'media', id: 'med_a' }).add(workspaceId, { kind: 'media', id: 'med_fire' })
    const screens = [await pairScreen(h, apiKey, 'A'), await pairScreen(h, apiKey, 'B'), await pairScreen(h, apiKey, 'C')]
    const s = servicesOf(h.app)
    await s.desiredPublisher.idle()

    // Hold the broker's publishes: the POST must answer while its fan-out cannot finish.
    let open!: () => void
    const gate = new Promise<void>((r) => (open = r))
    const publish = s.broker.publish.bind(s.broker)
    s.broker.publish = async (...a) => (await gate, publish(...a))
    const res = await h.req('POST', '/v1/casts', apiKey, { contentKind: 'media', contentId: 'med_a' })
    t.equal(res.statusCode, 201, 'answered with the fan-out held')
    const cast = res.json().data
    t.same(cast.delivery, { targeted: 3, published: 0, applied: 0 })
    open()
    await s.desiredPublisher.idle()
    s.broker.publish = publish
    t.same((await h.req('GET', `/v1/casts/${cast.id}`, apiKey)).json().data.delivery, { targeted: 3, published: 3, applied: 0 })
    // list answers carry no delivery
    t.notOk('delivery' in (await h.req('GET', '/v1/casts', apiKey)).json().data[0])

    await reportPlaying(h, screens[0]!.screenId, { source: 'cast', contentKind: 'media', contentId: 'med_a', castId: cast.id })
    await reportPlaying(h, screens[1]!.screenId, { source: 'assignment', contentKind: 'media', contentId: 'med_x' })
    t.same((await h.req('GET', `/v1/casts/${cast.id}`, apiKey)).json().data.delivery, { targeted: 3, published: 3, applied: 1 }, 'only a report showing it')
    // the same report again counts once
    await reportPlaying(h, screens[0]!.screenId, { source: 'cast', contentKind: 'media', contentId: 'med_a', castId: cast.id })
    t.equal((await h.req('GET', `/v1/casts/${cast.id}`, apiKey)).json().data.delivery.applied, 1)

    // an emergency on two of them
    const e = await h.req('POST', '/v1/emergencies', apiKey, {
      contentKind: 'media',
      contentId: 'med_fire',
      scopeKind: 'screens',
      screenIds: [screens[0]!.screenId, screens[2]!.screenId],
    })
    t.equal(e.statusCode, 201)
    const emg = e.json().data
    t.match(emg.delivery, { targeted: 2, applied: 0 })
    await s.desiredPublisher.idle()
    t.same((await h.req('GET', `/v1/emergencies/${emg.id}`, apiKey)).json().data.delivery, { targeted: 2, published: 2, applied: 0 })
    await reportPlaying(h, screens[2]!.screenId, { source: 'emergency', contentKind: 'media', contentId: 'med_fire', emergencyId: emg.id })
    // a report for a screen the emergency does not hold counts nothing
    await reportPlaying(h, screens[1]!.screenId, { source: 'emergency', contentKind: 'media', contentId: 'med_fire', emergencyId: emg.id })
    t.same((await h.req('GET', `/v1/emergencies/${emg.id}`, apiKey)).json().data.delivery, { targeted: 2, published: 2, applied: 1 })
    // the paused cast was still carried (paused) by the emergency's states: published stays 3
    t.same((await h.req('GET', `/v1/casts/${cast.id}`, apiKey)).json().data.delivery, { targeted: 3, published: 3, applied: 1 })

    const cleared = await h.req('POST', `/v1/emergencies/${emg.id}/clear`, apiKey)
    t.equal(cleared.statusCode, 200)
    t.same(cleared.json().data.delivery, { targeted: 2, published: 2, applied: 1 }, 'counts stay after it ends')
    const clearedCast = await h.req('POST', `/v1/casts/${cast.id}/clear`, apiKey)
    t.same(clearedCast.json().data.delivery, { targeted: 3, published: 3, applied: 1 })
    await s.desiredPublisher.idle()
  })

  t.test('takeovers are set-based: the same statements for 3 or 1,200 screens, none binding a screen list; screens read behind the answer', async (t) => {
    // The statements counted are the takeover's: the audit log's entry for each write (its chain
    // made by the first, 21 columns bound) is left out, its cost is bench/api-latency.ts's.
    const h = await build(t, { auditEnabled: false }, { content: InMemoryContentResolver.permissive() })
    // What one row binds at most (an emergency's row: 21 columns); a screen list would bind N.
    const MAX_ROW_PARAMS = 40
    const { workspaceId, apiKey } = await h.workspace()
    const s = servicesOf(h.app)
    const N = 1200
    const at = new Date().toISOString()
    const ids = Array.from({ length: N }, (_, i) => `scr_set${String(i).padStart(5, '0')}`)
    for (let i = 0; i < N; i += 400) {
      const rows = ids.slice(i, i + 400).map((id) => ({ id, workspace_id: workspaceId, name: id, created_at: at, updated_at: at }))
      await s.db.kysely.insertInto('screens').values(rows).execute()
    }
    // Hold the screen readers the takeovers hand the publisher; they must not have run by the answer.
    const readers: (() => Promise<readonly string[]>)[] = []
    const markDirty = s.desiredPublisher.markDirty.bind(s.desiredPublisher)
    s.desiredPublisher.markDirty = (ws, screens) => (typeof screens === 'function' ? (readers.push(screens), Promise.resolve()) : markDirty(ws, screens))
    t.teardown(() => void (s.desiredPublisher.markDirty = markDirty))
    const release = async (n: number) => {
      t.equal(readers.length, n, 'the answer handed the publisher a reader, not a list')
      for (const r of readers.splice(0)) await markDirty(workspaceId, r)
      await s.desiredPublisher.idle()
    }
    // Every statement, in transactions too (their executors share the prototype).
    type Exec = { executeQuery(this: Exec, q: { parameters: readonly unknown[] }, ...a: unknown[]): unknown }
    const proto = Object.getPrototypeOf((s.db.kysely as unknown as { getExecutor(): Exec }).getExecutor()) as Exec
    const run = proto.executeQuery
    t.teardown(() => void (proto.executeQuery = run))
    const post = async (url: string, body: object) => {
      let queries = 0
      let params = 0
      proto.executeQuery = function (q, ...a) {
        queries++
        params = Math.max(params, q.parameters.length)
        return run.call(this, q, ...a)
      }
      const res = await h.req('POST', url, apiKey, body)
      proto.executeQuery = run
      t.equal(res.statusCode, 201, res.body)
      return { data: res.json().data, queries, params }
    }
    const get = async (url: string) => (await h.req('GET', url, apiKey)).json().data
    await get('/v1/casts') // the credential is looked up once, before counting

    const few = await post('/v1/casts', { contentKind: 'media', contentId: 'med_a', scopeKind: 'screens', screenIds: ids.slice(0, 3) })
    await release(1)
    t.equal((await h.req('POST', `/v1/casts/${few.data.id}/clear`, apiKey)).statusCode, 200)
    await s.desiredPublisher.idle()
    const all = await post('/v1/casts', { contentKind: 'media', contentId: 'med_b' })
    t.same(all.data.delivery, { targeted: N, published: 0, applied: 0 })
    t.equal(all.data.screenCount, N)
    t.equal(all.queries, few.queries, `as many statements for ${N} screens as for 3 (${all.queries})`)
    t.ok(all.params < MAX_ROW_PARAMS && few.params < MAX_ROW_PARAMS, `no statement binds a screen list (at most ${all.params} parameters)`)
    t.same((await get(`/v1/casts/${all.data.id}`)).delivery, { targeted: N, published: 0, applied: 0 }, 'nothing published before the reader runs')
    await release(1)
    t.same((await get(`/v1/casts/${all.data.id}`)).delivery, { targeted: N, published: N, applied: 0 }, 'every screen published behind the answer')

    // A newer cast on three screens takes them; the older one keeps the rest.
    const part = await post('/v1/casts', { contentKind: 'media', contentId: 'med_c', scopeKind: 'screens', screenIds: [...ids.slice(0, 3), 'scr_unknown'] })
    t.equal(part.data.screenCount, 3)
    await release(1)
    t.match(await get(`/v1/casts/${all.data.id}`), { status: 'active', screenCount: N })
    const held = (await s.desiredState.build(workspaceId, ids[0]!))!
    t.same(
      held.casts.map((c) => c.id),
      [part.data.id],
      'a taken screen carries only the newer cast',
    )
    t.same(
      (await s.desiredState.build(workspaceId, ids[5]!))!.casts.map((c) => c.id),
      [all.data.id],
    )
    // One on every screen replaces both.
    const last = await post('/v1/casts', { contentKind: 'media', contentId: 'med_d' })
    await release(1)
    t.match(await get(`/v1/casts/${all.data.id}`), { status: 'replaced', replacedBy: last.data.id })
    t.match(await get(`/v1/casts/${part.data.id}`), { status: 'replaced', replacedBy: last.data.id })

    // Emergencies: on three screens the cast plays on, then on all of them (the cast pauses), with the same statements.
    const e3 = await post('/v1/emergencies', { contentKind: 'media', contentId: 'med_f', scopeKind: 'screens', screenIds: ids.slice(0, 3) })
    await release(1)
    t.equal((await get(`/v1/casts/${last.data.id}`)).status, 'active', 'still plays on the other screens')
    t.equal((await h.req('POST', `/v1/emergencies/${e3.data.id}/clear`, apiKey)).statusCode, 200)
    await s.desiredPublisher.idle()
    const eAll = await post('/v1/emergencies', { contentKind: 'media', contentId: 'med_g' })
    t.same(eAll.data.delivery, { targeted: N, published: 0, applied: 0 })
    t.equal(eAll.queries, e3.queries, `as many statements for ${N} screens as for 3 (${eAll.queries})`)
    t.ok(eAll.params < MAX_ROW_PARAMS && e3.params < MAX_ROW_PARAMS, `no statement binds a screen list (at most ${eAll.params} parameters)`)
    t.equal((await get(`/v1/casts/${last.data.id}`)).status, 'paused', 'every screen of the cast is under the emergency')
    await release(1)
    t.same((await get(`/v1/emergencies/${eAll.data.id}`)).delivery, { targeted: N, published: N, applied: 0 })
    t.equal((await h.req('POST', `/v1/emergencies/${eAll.data.id}/clear`, apiKey)).statusCode, 200)
    await s.desiredPublisher.idle()
    t.equal((await get(`/v1/casts/${last.data.id}`)).status, 'active', 'back once it is cleared')
  })

  t.test('batch build: the same few queries for 3 or 24 screens; each content item described once per batch', async (t) => {
    const content = new InMemoryContentResolver()
    let describes = 0
    const describe = content.describeForDevice.bind(content)
    content.describeForDevice = (ws, ref) => (describes++, describe(ws, ref))
    const h = await build(t, {}, { content })
    const { workspaceId, apiKey } = await h.workspace()
    content
      .add(workspaceId, { kind: 'media', id: 'med_a' })
      .add(workspaceId, { kind: 'media', id: 'med_b' })
      .add(workspaceId, { kind: 'media', id: 'med_fire' })
    const ids: string[] = []
    for (let i = 0; i < 24; i++) ids.push((await pairScreen(h, apiKey, `S${i}`)).screenId)
    const s = servicesOf(h.app)
    t.equal((await h.req('POST', '/v1/screens/bulk-assign', apiKey, { screenIds: ids, contentKind: 'media', contentId: 'med_b' })).statusCode, 200)
    t.equal((await h.req('POST', '/v1/casts', apiKey, { contentKind: 'media', contentId: 'med_a' })).statusCode, 201)
    t.equal(
      (await h.req('POST', '/v1/emergencies', apiKey, { contentKind: 'media', contentId: 'med_fire', scopeKind: 'screens', screenIds: ids.slice(0, 12) }))
        .statusCode,
      201,
    )
    await s.desiredPublisher.idle()

    const queries = { n: 0 }
    const k = s.db.kysely as unknown as { getExecutor(): { executeQuery(...a: unknown[]): unknown } }
    const executor = k.getExecutor()
    const run = executor.executeQuery.bind(executor)
    executor.executeQuery = (...a: unknown[]) => (queries.n++, run(...a))
    const count = async (n: number) => {
      queries.n = 0
      describes = 0
      const states = await s.desiredState.buildMany(workspaceId, ids.slice(0, n))
      return { queries: queries.n, describes, states }
    }
    const few = await count(3)
    const many = await count(24)
    executor.executeQuery = run
    t.equal(many.states.size, 24)
    t.equal(many.queries, few.queries, `as many queries for 24 screens as for 3 (${many.queries})`)
    t.ok(many.queries <= 4, 'screens, casts, emergencies, operating hours')
    t.equal(many.describes, 3, 'one description per content item (assignment, cast, emergency)')
    const st = many.states.get(ids[0]!)!
    t.match(st, { assignment: { contentId: 'med_b' }, casts: [{ contentId: 'med_a', paused: true }], emergency: { contentId: 'med_fire' } })
    t.match(many.states.get(ids[20]!)!, { casts: [{ contentId: 'med_a' }], emergency: null })
    t.same(await s.desiredState.build(workspaceId, ids[20]!), many.states.get(ids[20]!), 'build(one) is buildMany of one')
  })

  t.test('marks made while a batch is published go out together in the next batch', async (t) => {
    const h = await build(t, {}, { content: InMemoryContentResolver.permissive() })
    const { workspaceId, apiKey } = await h.workspace()
    const ids: string[] = []
    for (let i = 0; i < 6; i++) ids.push((await pairScreen(h, apiKey, `S${i}`)).screenId)
    const s = servicesOf(h.app)
    await s.desiredPublisher.idle()
    // Hold the broker, so the first batch stays in flight while screens are marked one tick at a time.
    let open!: () => void
    const gate = new Promise<void>((r) => (open = r))
    const publish = s.broker.publish.bind(s.broker)
    s.broker.publish = async (...a) => (await gate, publish(...a))
    t.teardown(() => void (s.broker.publish = publish))
    const batches: string[][] = []
    const bump = s.screenRecords.bumpDesiredVersions.bind(s.screenRecords)
    s.screenRecords.bumpDesiredVersions = (ws, screenIds, ...rest) => (batches.push([...screenIds]), bump(ws, screenIds, ...rest))
    const first = s.desiredPublisher.markDirty(workspaceId, [ids[0]!])
    const later: Promise<void>[] = []
    for (const id of ids.slice(1)) {
      await new Promise((r) => setImmediate(r))
      later.push(s.desiredPublisher.markDirty(workspaceId, [id]))
    }
    open()
    await Promise.all([first, ...later])
    t.same(batches, [[ids[0]], ids.slice(1)], 'the first batch, then one batch with the five marked while it was out')
  })

  t.test('reports from many screens at once are stored together, each one kept', async (t) => {
    const h = await build(t, {}, { content: InMemoryContentResolver.permissive() })
    const { apiKey } = await h.workspace()
    const ids: string[] = []
    for (let i = 0; i < 12; i++) ids.push((await pairScreen(h, apiKey, `S${i}`)).screenId)
    const s = servicesOf(h.app)
    await s.desiredPublisher.idle()
    await s.presence.idle()
    // Statements outside a transaction (a transaction's own go through its connection).
    const queries = { n: 0 }
    const executor = (s.db.kysely as unknown as { getExecutor(): { executeQuery(...a: unknown[]): unknown } }).getExecutor()
    const run = executor.executeQuery.bind(executor)
    executor.executeQuery = (...a: unknown[]) => (queries.n++, run(...a))
    t.teardown(() => void (executor.executeQuery = run))
    await Promise.all(ids.map((id, i) => s.broker.publish(topics.reported(id), report({ source: 'none', contentKind: null, contentId: null }, 100 + i), false)))
    await s.presence.idle()
    await s.drift.idle()
    // Per batch: one read of their rows, one of their previous facts, one UPDATE, one insert
    // of their screen.reported events with the outbox's dispatch, one read of their panels'
    // open stretches (the new ones are written in a transaction); on a loaded machine the 12
    // may arrive over two ticks. Drift judges the burst behind them: one read of the screens
    // and the reads that build their desired states (its writes go in transactions). One
    // statement per screen would be 36 or more.
    await servicesOf(h.app).panelHistory.idle()
    t.ok(queries.n <= 2 * 10, `12 reports: ${queries.n} statements (at most two batches of storing and of judging, not one per screen)`)
    executor.executeQuery = run
    for (const [i, id] of ids.entries())
      t.equal((await h.req('GET', `/v1/screens/${id}`, apiKey)).json().data.reported?.version, 100 + i, `${id} stored its own`)
  })

  t.test(
    'screen.reported: a burst of reports that change what plays is recorded as one group commit, dispatched, a delivery each; the same facts again record nothing',
    async (t) => {
      const h = await build(t, { webhookAllowHosts: ['localhost'] }, { content: InMemoryContentResolver.permissive() })
      const { workspaceId, apiKey } = await h.workspace()
      const ids: string[] = []
      for (let i = 0; i < 4; i++) ids.push((await pairScreen(h, apiKey, `S${i}`)).screenId)
      const hook = await h.req('POST', '/v1/webhooks', apiKey, { url: 'https://localhost:9/hook', events: ['screen.reported'] })
      t.equal(hook.statusCode, 201, hook.body)
      const s = servicesOf(h.app)
      await s.desiredPublisher.idle()
      await s.presence.idle()
      const rows = () =>
        s.db.kysely.selectFrom('events_outbox').select(['data', 'workspace_id', 'dispatched_at']).where('event', '=', 'screen.reported').execute()
      const burst = () =>
        Promise.all(
          ids.map((id, i) => s.broker.publish(topics.reported(id), report({ source: 'cast', contentKind: 'media', contentId: `med_${i}` }, 5), false)),
        )
      await burst()
      await s.presence.idle()
      const recorded = await rows()
      t.same(
        recorded.map((r) => [JSON.parse(r.data).screenId, JSON.parse(r.data).playing.contentId, r.workspace_id]).sort(),
        ids.map((id, i) => [id, `med_${i}`, workspaceId]).sort(),
        'one event per screen, with its own facts',
      )
      t.ok(
        recorded.every((r) => r.dispatched_at),
        'dispatched by the time presence is idle',
      )
      const deliveries = await s.db.kysely.selectFrom('webhook_deliveries').select(['data']).where('event', '=', 'screen.reported').execute()
      t.same(deliveries.map((d) => JSON.parse(d.data).screenId).sort(), [...ids].sort(), 'a delivery each')
      await burst()
      await s.presence.idle()
      t.equal((await rows()).length, ids.length, 'the same facts again: nothing recorded')
    },
  )

  t.test('while a fan-out is out, reports and applied marks wait for it (at most the window), then are written', async (t) => {
    const content = new InMemoryContentResolver()
    const h = await build(t, {}, { content })
    const { workspaceId, apiKey } = await h.workspace()
    content.add(workspaceId, { kind: 'media', id: 'med_a' })
    const [a, b] = [await pairScreen(h, apiKey, 'A'), await pairScreen(h, apiKey, 'B')]
    const s = servicesOf(h.app)
    await s.desiredPublisher.idle()
    await s.presence.idle()

    // The first cast's fan-out is published; the second one's is held at the broker.
    const first = (await h.req('POST', '/v1/casts', apiKey, { contentKind: 'media', contentId: 'med_a' })).json().data
    await s.desiredPublisher.idle()
    let open!: () => void
    const gate = new Promise<void>((r) => (open = r))
    const publish = s.broker.publish.bind(s.broker)
    s.broker.publish = async (...args) => (await gate, publish(...args))
    t.teardown(() => void (s.broker.publish = publish))
    const republished = s.desiredPublisher.markDirty(workspaceId, [b.screenId])
    while (!s.desiredPublisher.window.busy) await new Promise((r) => setImmediate(r))

    // A's device reports the first cast playing (the device's publish, not held).
    await publish(topics.reported(a.screenId), report({ source: 'cast', contentKind: 'media', contentId: 'med_a', castId: first.id }, 7), false)
    await new Promise((r) => setTimeout(r, 150))
    t.equal((await h.req('GET', `/v1/screens/${a.screenId}`, apiKey)).json().data.reported, null, 'the report is not written while the batch is out')
    t.equal((await h.req('GET', `/v1/casts/${first.id}`, apiKey)).json().data.delivery.applied, 0)

    open()
    await republished
    await s.presence.idle()
    await s.takeoverDelivery.idle()
    t.equal((await h.req('GET', `/v1/screens/${a.screenId}`, apiKey)).json().data.reported?.version, 7, 'written once the batch is done')
    t.equal((await h.req('GET', `/v1/casts/${first.id}`, apiKey)).json().data.delivery.applied, 1)

    // A batch that never ends holds them for at most the window's maxHoldMs.
    const end = s.desiredPublisher.window.begin()
    t.teardown(end)
    await publish(topics.reported(b.screenId), report({ source: 'assignment', contentKind: 'media', contentId: 'med_a' }, 8), false)
    await s.presence.idle()
    t.ok(s.desiredPublisher.window.busy, 'the batch is still out')
    t.equal((await h.req('GET', `/v1/screens/${b.screenId}`, apiKey)).json().data.reported?.version, 8, 'then written although the batch is still out')
    end()
  })

  t.test('no screen is ever published an older version after a newer one', async (t) => {
    const content = InMemoryContentResolver.permissive()
    const h = await build(t, {}, { content })
    const { workspaceId, apiKey } = await h.workspace()
    const ids: string[] = []
    for (let i = 0; i < 12; i++) ids.push((await pairScreen(h, apiKey, `S${i}`)).screenId)
    const s = servicesOf(h.app)
    await s.desiredPublisher.idle()
    const seen = new Map<string, number[]>()
    s.desiredPublisher.onPublished((id, v) => seen.set(id, [...(seen.get(id) ?? []), v]))
    // overlapping bursts from every side at once: casts, clears and direct marks
    const work: Promise<unknown>[] = []
    for (let i = 0; i < 15; i++) {
      const some = ids.filter((_, j) => (i + j) % 3 !== 0)
      work.push(h.req('POST', '/v1/casts', apiKey, { contentKind: 'media', contentId: `med_${i}`, scopeKind: 'screens', screenIds: some }))
      work.push(s.desiredPublisher.markDirty(workspaceId, ids.slice(i % 5)))
      if (i % 4 === 0) await new Promise((r) => setImmediate(r))
    }
    await Promise.all(work)
    await s.desiredPublisher.idle()
    for (const id of ids) {
      const vs = seen.get(id) ?? []
      t.ok(vs.length > 1, `${id} was published ${vs.length} times`)
      t.ok(
        vs.every((v, i) => i === 0 || v > vs[i - 1]!),
        `${id}: versions strictly increase (${vs.join(',')})`,
      )
      const stored = (await h.req('GET', `/v1/screens/${id}`, apiKey)).json().data.desiredVersion
      t.equal(stored, vs[vs.length - 1], 'the last one published is the stored one')
    }
  })
})

t.test('a real device: the cast reaches it, its reported state counts it applied, and the counts survive a restart', async (t) => {
  const dir = tempDir(t)
  const content = new InMemoryContentResolver()
  const c = await startCloud(t, { dataDir: dir, fileDb: true, content })
  content.add(c.workspaceId, { kind: 'media', id: 'med_promo' })
  const d = await c.pair('Lobby')
  const url = `mqtt://127.0.0.1:${c.running.mqttPort}`
  const dev = await connectDevice(t, url, d)
  await dev.next(() => true)

  const cast = (await c.call('POST', '/v1/casts', { contentKind: 'media', contentId: 'med_promo' })).body.data
  t.equal(cast.delivery.targeted, 1)
  const got = await dev.next((s) => s.casts.some((x) => x.id === cast.id))
  await servicesOf(c.running.app).desiredPublisher.idle()
  t.same((await c.call('GET', `/v1/casts/${cast.id}`)).body.data.delivery, { targeted: 1, published: 1, applied: 0 })

  // the device applies it and says so, as the agent does
  await dev.client.publishAsync(
    topics.reported(d.screenId),
    report({ source: 'cast', contentKind: 'media', contentId: 'med_promo', castId: cast.id }, got.version).toString(),
    { qos: 1 },
  )
  for (let i = 0; ; i++) {
    await servicesOf(c.running.app).presence.idle()
    await servicesOf(c.running.app).takeoverDelivery.idle()
    const delivery = (await c.call('GET', `/v1/casts/${cast.id}`)).body.data.delivery
    if (delivery.applied === 1 || i > 50) {
      t.same(delivery, { targeted: 1, published: 1, applied: 1 })
      break
    }
    await new Promise((r) => setTimeout(r, 20))
  }
  await dev.client.endAsync(true)
  await c.running.close()

  const again = await startCloud(t, { dataDir: dir, fileDb: true, content, workspace: { id: c.workspaceId, apiKey: c.apiKey } })
  t.same((await again.call('GET', `/v1/casts/${cast.id}`)).body.data.delivery, { targeted: 1, published: 1, applied: 1 }, 'stored, not counted in memory')
})
