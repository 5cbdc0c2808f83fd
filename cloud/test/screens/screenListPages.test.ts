// Kept pages of GET /v1/screens (ScreenListCache): a page is answered from memory until a
// committed change makes it stale, and every write of a listed field shows in the very
// next answer with no time passing (pairing, rename, move, assignment, bulk assignment,
// online, reported state, offline, delete), for whole lists, limited and counted pages and
// a pinned key's scope, on both engines. A write made around the repositories (straight
// SQL) shows once the keep time has passed. Two instances on one database hear each
// other's changes through Redis.
import { servicesOf } from '../../src/app.js'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { HANG_GUARD_MS, redis, toolTest } from '@svc/shared/testing'
import { topics } from '@svc/shared/mqtt/index'
import { connectDevice, droppedAtBroker, startCloud, type Cloud } from '../devicelink/link.js'
import { ENGINES, openEngine, requirePostgres } from '../db/engines.js'
import { ManualClock } from '../../src/platform/clock.js'
import { migrate } from '../../src/platform/db/migrate.js'
import { SqliteDatabase } from '../../src/platform/db/SqliteDatabase.js'
import { ScreenListCache } from '../../src/domains/screens/ScreenListCache.js'
import type { ScreenListItem } from '../../src/domains/screens/ScreenService.js'
import { InMemoryContentResolver } from '../../src/domains/content/testing/InMemoryContentResolver.js'

const HOUR = 3_600_000

type Item = ScreenListItem

const list = async (c: Cloud, query = '', token?: string) => {
  const res = await c.call('GET', `/v1/screens${query}`, undefined, token)
  if (res.status !== 200) throw new Error(`list ${res.status} ${JSON.stringify(res.body)}`)
  return res.body as { data: Item[]; nextCursor?: string | null; total?: number }
}
const item = async (c: Cloud, id: string, query = '', token?: string) => (await list(c, query, token)).data.find((s) => s.id === id)

for (const engine of ENGINES) {
  t.test(`every write of a listed field shows in the next answer, with no time passing [${engine}]`, async (t) => {
    if (engine === 'postgres' && !requirePostgres(t, `kept screen list pages [${engine}]`)) return
    const db = await openEngine(t, engine)
    // Kept for an hour of a clock that stands still: only a change can drop a page.
    const c = await startCloud(t, { deps: { db }, config: { screenListKeepMs: HOUR } })
    const { presence } = servicesOf(c.running.app)
    const node = (await c.call('POST', '/v1/nodes', { name: 'Store' })).body.data.id as string
    const pinned = (await c.call('POST', '/v1/api-keys', { name: 'store', permissions: ['screen.view'], nodeId: node })).body.data.secret as string

    const a = await c.pair('A')
    t.same(
      (await list(c)).data.map((s) => s.name),
      ['A'],
    )
    t.same(await list(c, '?limit=1&count=1'), { data: [await item(c, a.screenId)], nextCursor: null, total: 1 })
    t.same((await list(c, '', pinned)).data, [], 'the pinned key reaches no screen yet')

    // Kept: a write around the repositories is not seen until the keep time has passed.
    await db.kysely.updateTable('screens').set({ name: 'Written around' }).where('id', '=', a.screenId).execute()
    t.equal((await item(c, a.screenId))!.name, 'A', 'answered from the kept page')
    c.clock.advance(HOUR)
    t.equal((await item(c, a.screenId))!.name, 'Written around', 'read again once the keep time is over')

    const b = await c.pair('B')
    t.same((await list(c)).data.map((s) => s.name).sort(), ['B', 'Written around'], 'pairing')
    const counted = await list(c, '?limit=1&count=1')
    t.equal(counted.total, 2, 'pairing: the total')
    t.type(counted.nextCursor, 'string', 'pairing: a next page')

    t.equal((await c.call('PATCH', `/v1/screens/${a.screenId}`, { name: 'Renamed' })).status, 200)
    t.equal((await item(c, a.screenId))!.name, 'Renamed', 'rename')
    t.equal((await c.call('PATCH', `/v1/screens/${a.screenId}`, { nodeId: node })).status, 200)
    t.same(
      (await list(c, '', pinned)).data.map((s) => s.id),
      [a.screenId],
      "move: the pinned key's scope",
    )
    t.equal((await item(c, a.screenId))!.nodeId, node, 'move')

    c.content.add(c.workspaceId, { kind: 'playlist', id: 'pl_loop' })
    t.equal((await c.call('POST', `/v1/screens/${b.screenId}/assign`, { contentKind: 'playlist', contentId: 'pl_loop' })).status, 200)
    t.match(await item(c, b.screenId), { contentKind: 'playlist', contentId: 'pl_loop' }, 'assignment')
    const bulk = await c.call('POST', '/v1/screens/bulk-assign', { nodeId: node, contentKind: 'playlist', contentId: 'pl_loop' })
    t.equal(bulk.status, 200, JSON.stringify(bulk.body))
    t.match(await item(c, a.screenId, '', pinned), { contentKind: 'playlist', contentId: 'pl_loop' }, 'bulk assignment')

    const dev = await connectDevice(t, `mqtt://127.0.0.1:${c.running.mqttPort}`, a)
    await presence.idle()
    t.match(await item(c, a.screenId), { status: 'online', lastSeenAt: c.clock.now().toISOString() }, 'online')
    t.equal((await item(c, a.screenId, '', pinned))!.status, 'online', 'online, in the pinned scope')

    c.clock.advance(1000)
    const reported = { version: 0, playing: { source: 'none', contentKind: null, contentId: null }, at: c.clock.now().toISOString() }
    await dev.client.publishAsync(topics.reported(a.screenId), JSON.stringify(reported), { qos: 1 })
    for (const guardEnd = Date.now() + HANG_GUARD_MS; (await c.call('GET', `/v1/screens/${a.screenId}`)).body.data.reported === null && Date.now() < guardEnd; )
      await new Promise((r) => setTimeout(r, 20))
    await presence.idle()
    t.equal((await item(c, a.screenId))!.lastSeenAt, c.clock.now().toISOString(), 'reported state: last seen')

    dev.client.stream.destroy()
    t.ok(await droppedAtBroker(c, a.screenId), 'the broker saw the connection close')
    await presence.idle()
    c.clock.advance(presence.offlineAfterMs)
    await presence.sweep()
    t.equal((await item(c, a.screenId))!.status, 'offline', 'offline')
    t.ok(c.clock.now().getTime() - Date.parse('2026-06-01T12:00:00.000Z') < 2 * HOUR, 'all within the keep time')

    t.equal((await c.call('DELETE', `/v1/screens/${b.screenId}`)).status, 200)
    t.same(
      (await list(c)).data.map((s) => s.id),
      [a.screenId],
      'delete',
    )
    t.same(await list(c, '?limit=1&count=1'), { data: [await item(c, a.screenId)], nextCursor: null, total: 1 }, 'delete: the counted page')
  })
}

t.test('with SVC_SCREEN_LIST_KEEP_MS=0 no page is kept', async (t) => {
  const c = await startCloud(t, { config: { screenListKeepMs: 0 } })
  const a = await c.pair('A')
  t.equal((await item(c, a.screenId))!.name, 'A')
  await servicesOf(c.running.app).db.kysely.updateTable('screens').set({ name: 'Written around' }).where('id', '=', a.screenId).execute()
  t.equal((await item(c, a.screenId))!.name, 'Written around')
})

t.test('ScreenListCache: a read overtaken by a change is not kept; changes drop only the pages they touch; size and time bounds', async (t) => {
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const cache = new ScreenListCache(clock, 1000, 200)
  const epoch = cache.begin()
  cache.drop({ kind: 'screens', screenIds: ['scr_x'] })
  cache.keep(epoch, 'k0', 'ws_a', ['scr_1'], 'read before the change')
  t.equal(cache.get('k0'), undefined, 'a read that began before a change is not kept')

  cache.keep(cache.begin(), 'k1', 'ws_a', ['scr_1', 'scr_2'], 'a page 1')
  cache.keep(cache.begin(), 'k2', 'ws_a', ['scr_3'], 'a page 2')
  cache.keep(cache.begin(), 'k3', 'ws_b', ['scr_9'], 'b page')
  cache.keep(cache.begin(), 'k4', 'ws_b', [], 'b empty page')
  cache.drop({ kind: 'screens', screenIds: ['scr_2'] })
  t.same(
    ['k1', 'k2', 'k3', 'k4'].map((k) => cache.get(k)),
    [undefined, 'a page 2', 'b page', 'b empty page'],
    'a screen change drops the pages holding it',
  )
  cache.drop({ kind: 'workspaceScreens', workspaceId: 'ws_b' })
  t.same(
    ['k2', 'k3', 'k4'].map((k) => cache.get(k)),
    ['a page 2', undefined, undefined],
    "a workspace change drops all of the workspace's pages",
  )
  clock.advance(1000)
  t.equal(cache.get('k2'), undefined, 'kept for the keep time at most')
  t.equal(cache.size, 0)

  cache.keep(cache.begin(), 'big', 'ws_a', [], 'x'.repeat(300))
  t.equal(cache.get('big'), undefined, 'a page beyond the bound is not kept')
  for (let i = 0; i < 5; i++) cache.keep(cache.begin(), `p${i}`, 'ws_a', [`scr_${i}`], 'y'.repeat(50))
  t.ok(cache.size < 5, 'the oldest pages go when the bound is reached')
  t.equal(cache.get('p4'), 'y'.repeat(50), 'the newest is kept')
  t.equal(cache.get('p0'), undefined, 'the oldest went first')
  cache.drop({ kind: 'screens', screenIds: ['scr_4'] })
  t.equal(cache.get('p4'), undefined, 'the indexes follow evictions')
})

toolTest(t, redis, "two instances on one database: a change made through one drops the other's kept pages", async (t: Test) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-list-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'svc.sqlite')
  // One database file, two connections to it: each instance hears only its own writes locally.
  const dbA = await SqliteDatabase.open(file, 2000)
  await migrate(dbA)
  const dbB = await SqliteDatabase.open(file, 2000)
  t.after(async () => {
    await dbA.close()
    await dbB.close()
  })
  const config = { redisUrl: process.env.SVC_TEST_REDIS_URL ?? null, redisPrefix: `svc-test-${randomUUID()}:`, screenListKeepMs: HOUR, presenceTimers: false }
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const content = new InMemoryContentResolver()
  const a = await startCloud(t, { clock, content, config, deps: { db: dbA } })
  const b = await startCloud(t, { clock, content, config, deps: { db: dbB }, workspace: { id: a.workspaceId, apiKey: a.apiKey } })
  for (const c of [a, b]) await (servicesOf(c.running.app).dataChanges as unknown as { listening(): Promise<void> }).listening()

  // B has heard A's pairing before it lists, so what it keeps is not dropped by that.
  const heard = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`B did not hear A's pairing within ${HANG_GUARD_MS / 60_000} minutes`)), HANG_GUARD_MS)
    servicesOf(b.running.app).dataChanges.subscribe((ch) => void (ch.kind === 'workspaceScreens' && (clearTimeout(timer), resolve())))
  })
  const d = await a.pair('Lobby')
  await heard
  t.equal((await item(b, d.screenId))?.name, 'Lobby', "B lists A's pairing")
  await dbA.kysely.updateTable('screens').set({ name: 'Written around' }).where('id', '=', d.screenId).execute()
  t.equal((await item(b, d.screenId))?.name, 'Lobby', 'B answers from its kept page')
  t.equal((await a.call('PATCH', `/v1/screens/${d.screenId}`, { name: 'Foyer' })).status, 200)
  let seen = (await item(b, d.screenId))?.name
  for (const guardEnd = Date.now() + HANG_GUARD_MS; seen !== 'Foyer' && Date.now() < guardEnd; ) {
    await new Promise((r) => setTimeout(r, 20))
    seen = (await item(b, d.screenId))?.name
  }
  t.equal(seen, 'Foyer', "B's kept page is dropped by A's rename (through Redis; the clock stands still)")
})
