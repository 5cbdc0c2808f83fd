// Proof of play, end to end on the cloud: a real MQTT device publishes play-log batches;
// the PUBACK comes only once the batch is stored; a bad batch is dropped, another screen's
// topic is refused, a batch sent twice stores nothing twice; then the routes read it back
// (range, paging, tenancy) and export CSV.
import { servicesOf } from '../../src/app.js'
import t, { type Test } from 'tap'
import { parse } from 'csv-parse/sync'
import { topics, PLAY_LOG_LIMITS } from '@svc/shared/mqtt/index'
import { ManualClock } from '../../src/platform/clock.js'
import { connectDevice, startCloud, type Cloud, type Device } from '../devicelink/link.js'

const rec = (screenId: string, i: number, extra: Record<string, unknown> = {}) => ({
  screenId,
  source: 'assignment',
  contentKind: 'playlist',
  contentId: 'pl_1',
  castId: null,
  emergencyId: null,
  itemKind: 'media',
  itemId: `med_${i}`,
  zone: null,
  startedAt: new Date(Date.UTC(2026, 5, 1, 10, 0, i * 10)).toISOString(),
  endedAt: new Date(Date.UTC(2026, 5, 1, 10, 0, i * 10 + 10)).toISOString(),
  durationMs: 10_000,
  ...extra,
})

/**
 * A cloud whose screens are paired at 09:00 and whose clock then reads 12:00, so the plays
 * of these tests (10:00 onwards) are after pairing and not in the future.
 */
async function cloudWith(t: Test, ...names: string[]): Promise<{ cloud: Cloud; screens: Device[] }> {
  const cloud = await startCloud(t, { clock: new ManualClock('2026-06-01T09:00:00.000Z') })
  const screens: Device[] = []
  for (const name of names) screens.push(await cloud.pair(name))
  cloud.clock.set('2026-06-01T12:00:00.000Z')
  return { cloud, screens }
}

async function rows(cloud: Cloud, screenId?: string): Promise<any[]> {
  const db = servicesOf(cloud.running.app).db
  return screenId ? db.all('SELECT * FROM play_log WHERE screen_id = ? ORDER BY started_at', [screenId]) : db.all('SELECT * FROM play_log ORDER BY started_at')
}

t.test('a device publishes batches: stored before the PUBACK, once, in its workspace', async (t) => {
  const {
    cloud,
    screens: [a, b],
  } = await cloudWith(t, 'A', 'B')
  const url = `mqtt://127.0.0.1:${cloud.running.mqttPort}`
  const dev = await connectDevice(t, url, a)

  const batch = {
    batchId: 'b1',
    records: [rec(a.screenId, 0), rec(a.screenId, 1), rec(a.screenId, 2, { startedAt: '2026-06-01T12:00:20+02:00', endedAt: '2026-06-01T12:00:30+02:00' })],
  }
  await dev.client.publishAsync(topics.playLog(a.screenId), JSON.stringify(batch), { qos: 1 })
  // The PUBACK resolved publishAsync: the rows are there already, no waiting.
  let got = await rows(cloud, a.screenId)
  t.equal(got.length, 3, 'stored by the time the PUBACK arrives')
  t.equal(got[0].workspace_id, cloud.workspaceId)
  t.equal(got[2].started_at, '2026-06-01T10:00:20.000Z', 'times normalised to UTC')

  // Replay (lost PUBACK, agent restart): nothing stored twice; a batch overlapping it adds only the new one.
  await dev.client.publishAsync(topics.playLog(a.screenId), JSON.stringify(batch), { qos: 1 })
  await dev.client.publishAsync(
    topics.playLog(a.screenId),
    JSON.stringify({
      batchId: 'b2',
      records: [rec(a.screenId, 2, { startedAt: '2026-06-01T12:00:20+02:00', endedAt: '2026-06-01T12:00:30+02:00' }), rec(a.screenId, 3)],
    }),
    { qos: 1 },
  )
  got = await rows(cloud, a.screenId)
  t.equal(got.length, 4, 'replayed records stored once')

  // Invalid batches: acknowledged and dropped whole (the agent must not resend them forever).
  const bad = [
    'not json',
    JSON.stringify({ batchId: 'x', records: [] }),
    JSON.stringify({ batchId: 'x', records: Array.from({ length: PLAY_LOG_LIMITS.maxRecords + 1 }, (_, i) => rec(a.screenId, 100 + i)) }),
    JSON.stringify({ batchId: 'x', records: [rec(a.screenId, 50, { itemId: 'i'.repeat(PLAY_LOG_LIMITS.idLength + 1) })] }),
    JSON.stringify({ batchId: 'x', records: [rec(a.screenId, 51, { endedAt: '2026-06-01T09:00:00Z' })] }),
    JSON.stringify({ batchId: 'x', records: [rec(a.screenId, 52, { durationMs: -1 })] }),
    JSON.stringify({ batchId: 'x', records: [rec(a.screenId, 53, { startedAt: 'yesterday' })] }),
    JSON.stringify({ batchId: 'x', records: [rec(a.screenId, 56, { panelPower: 'dim' })] }),
    JSON.stringify({ batchId: 'x', records: [rec(a.screenId, 54), rec(b.screenId, 55)] }),
  ]
  for (const p of bad) await dev.client.publishAsync(topics.playLog(a.screenId), p, { qos: 1 })
  t.equal((await rows(cloud)).length, 4, 'no invalid batch stored anything, not even its valid records')
  t.ok(dev.client.connected, 'the device stays connected')

  // Another screen's topic: refused by the ACL (Aedes closes the connection), nothing stored.
  const closed = new Promise<void>((resolve) => dev.client.once('close', () => resolve()))
  dev.client.publish(topics.playLog(b.screenId), JSON.stringify({ batchId: 'evil', records: [rec(b.screenId, 0)] }), { qos: 1 })
  await closed
  t.equal((await rows(cloud, b.screenId)).length, 0, 'nothing stored for the other screen')
})

t.test('a batch that cannot be stored is not acknowledged, and arrives when sent again', async (t) => {
  const {
    cloud,
    screens: [a],
  } = await cloudWith(t, 'A')
  const url = `mqtt://127.0.0.1:${cloud.running.mqttPort}`
  const dev = await connectDevice(t, url, a)
  const svc = servicesOf(cloud.running.app).playLog
  const ingest = svc.ingest.bind(svc)
  svc.ingest = async () => {
    throw new Error('disk full')
  }
  let acked = false
  const closed = new Promise<void>((resolve) => dev.client.once('close', () => resolve()))
  dev.client.publish(topics.playLog(a.screenId), JSON.stringify({ batchId: 'b1', records: [rec(a.screenId, 0)] }), { qos: 1 }, () => (acked = true))
  await closed
  t.notOk(acked, 'no PUBACK for a batch that was not stored')
  svc.ingest = ingest
  const again = await connectDevice(t, url, a, {}, false)
  await again.client.publishAsync(topics.playLog(a.screenId), JSON.stringify({ batchId: 'b1', records: [rec(a.screenId, 0)] }), { qos: 1 })
  t.equal((await rows(cloud, a.screenId)).length, 1)
})

t.test('routes: range, paging, tenancy, CSV', async (t) => {
  const {
    cloud,
    screens: [a, b],
  } = await cloudWith(t, 'A', 'B')
  const url = `mqtt://127.0.0.1:${cloud.running.mqttPort}`
  const da = await connectDevice(t, url, a, {}, false)
  const db = await connectDevice(t, url, b, {}, false)
  await da.client.publishAsync(
    topics.playLog(a.screenId),
    JSON.stringify({ batchId: 'a', records: Array.from({ length: 7 }, (_, i) => rec(a.screenId, i, i === 3 ? { itemId: '=HYPERLINK("x"),"quoted"' } : {})) }),
    { qos: 1 },
  )
  await db.client.publishAsync(
    topics.playLog(b.screenId),
    JSON.stringify({
      batchId: 'b',
      records: [rec(b.screenId, 0, { source: 'cast', castId: 'cast_1', contentKind: 'media', contentId: 'med_9', panelPower: 'on' })],
    }),
    { qos: 1 },
  )

  const all = await cloud.call('GET', `/v1/screens/${a.screenId}/play-log?count=1`)
  t.equal(all.status, 200)
  t.equal(all.body.data.length, 7)
  t.equal(all.body.total, 7)
  t.equal(all.body.nextCursor, null)
  t.same(Object.keys(all.body.data[0]).sort(), [
    'castId',
    'contentId',
    'contentKind',
    'contentName',
    'durationMs',
    'emergencyId',
    'endedAt',
    'id',
    'itemId',
    'itemKind',
    'itemName',
    'panelPower',
    'receivedAt',
    'screenId',
    'source',
    'startedAt',
    'zone',
  ])
  t.equal(all.body.data[0].itemId, 'med_0')
  t.equal(all.body.data[0].panelPower, 'unknown', 'a record without panelPower (an older player): unknown')
  const ofB = await cloud.call('GET', `/v1/screens/${b.screenId}/play-log`)
  t.equal(ofB.body.data[0].panelPower, 'on', 'proof of display: the panel was on when the play started')

  // Range [from, to) on startedAt, and paging through it.
  const q = `from=2026-06-01T10:00:10Z&to=2026-06-01T12:00:50%2B02:00&limit=2`
  const seen: string[] = []
  let cursor: string | null = null
  for (let i = 0; i < 5; i++) {
    const r: { status: number; body: any } = await cloud.call('GET', `/v1/screens/${a.screenId}/play-log?${q}${cursor ? `&cursor=${cursor}` : ''}`)
    t.equal(r.status, 200)
    seen.push(...r.body.data.map((x: any) => x.startedAt))
    cursor = r.body.nextCursor
    if (!cursor) break
  }
  t.same(
    seen,
    ['2026-06-01T10:00:10.000Z', '2026-06-01T10:00:20.000Z', '2026-06-01T10:00:30.000Z', '2026-06-01T10:00:40.000Z'],
    'from inclusive, to exclusive, every page in order',
  )

  for (const bad of [
    'from=yesterday',
    'to=2026-13-01T00:00:00Z',
    'from=2026-06-02T00:00:00Z&to=2026-06-01T00:00:00Z',
    'cursor=abc',
    'limit=0',
    'limit=1001',
    'colour=red',
  ]) {
    const r = await cloud.call('GET', `/v1/screens/${a.screenId}/play-log?${bad}`)
    t.ok(r.status === 422 || r.status === 400, `${bad}: ${r.status}`)
    t.type(r.body.error, 'string')
  }

  // Tenancy: another workspace sees neither the screen nor its plays.
  const other = await servicesOf(cloud.running.app).workspaces.create('Other', 'us')
  const otherKey = (await servicesOf(cloud.running.app).apiKeys.createRoot(other.id, other.region, 'Owner', 'all')).secret
  t.equal((await cloud.call('GET', `/v1/screens/${a.screenId}/play-log`, undefined, otherKey)).status, 404)
  t.equal(
    (await cloud.call('GET', `/v1/play-log.csv?from=2026-06-01T00:00:00Z&to=2026-06-02T00:00:00Z&screenIds=${a.screenId}`, undefined, otherKey)).status,
    404,
  )

  // Names beside ids: the content's and the item's names as the library has them now, read
  // in the screen's own workspace only (another workspace's playlist id gets no name).
  const lobby = await cloud.call('POST', '/v1/playlists', { name: 'Lobby loop' })
  const theirs = await cloud.call('POST', '/v1/playlists', { name: 'Their loop' }, otherKey)
  t.equal(lobby.status, 201)
  t.equal(theirs.status, 201)
  await db.client.publishAsync(
    topics.playLog(b.screenId),
    JSON.stringify({
      batchId: 'names',
      records: [
        rec(b.screenId, 3, { contentId: lobby.body.data.id, itemKind: 'playlist', itemId: theirs.body.data.id }),
        rec(b.screenId, 4, { contentId: 'pl_gone', itemId: lobby.body.data.id }),
      ],
    }),
    { qos: 1 },
  )
  const named = await cloud.call('GET', `/v1/screens/${b.screenId}/play-log?from=2026-06-01T10:00:30Z`)
  t.same(
    named.body.data.map((r: any) => [r.contentName, r.itemName]),
    [
      ['Lobby loop', null],
      [null, 'Lobby loop'],
    ],
    "names beside ids, only the workspace's own, null for an id the library does not hold",
  )

  // CSV: header, one line per play of the chosen screens, oldest first, fields escaped.
  const base = `http://127.0.0.1:${cloud.running.httpPort}`
  const res = await fetch(`${base}/v1/play-log.csv?from=2026-06-01T00:00:00Z&to=2026-06-02T00:00:00Z&screenIds=${a.screenId},${b.screenId}`, {
    headers: { authorization: `Bearer ${cloud.apiKey}` },
  })
  t.equal(res.status, 200)
  t.match(res.headers.get('content-type'), /^text\/csv/)
  const lines = (await res.text()).trimEnd().split('\r\n')
  t.equal(lines[0], 'screenId,startedAt,endedAt,durationMs,panelPower,source,contentKind,contentId,itemKind,itemId,zone,castId,emergencyId,id')
  t.equal(lines.length, 1 + 10)
  t.ok(lines.some((l) => l.startsWith(`${b.screenId},2026-06-01T10:00:00.000Z,2026-06-01T10:00:10.000Z,10000,on,cast,media,med_9,media,med_0,,cast_1,,play_`)))
  t.ok(lines.some((l) => l.startsWith(`${a.screenId},2026-06-01T10:00:00.000Z,2026-06-01T10:00:10.000Z,10000,unknown,assignment,`)))
  t.ok(
    lines.some((l) => l.includes(`,"'=HYPERLINK(""x""),""quoted""",`)),
    'a formula is defused and quotes are doubled',
  )
  const onlyB = await fetch(`${base}/v1/play-log.csv?from=2026-06-01T00:00:00Z&to=2026-06-02T00:00:00Z&screenIds=${b.screenId}`, {
    headers: { authorization: `Bearer ${cloud.apiKey}` },
  })
  t.equal((await onlyB.text()).trimEnd().split('\r\n').length, 4)
  for (const bad of [
    'to=2026-06-02T00:00:00Z&screenIds=x',
    `from=2026-06-01T00:00:00Z&to=2026-06-02T00:00:00Z&screenIds=`,
    `from=2026-06-01T00:00:00Z&to=2026-06-02T00:00:00Z&screenIds=${Array.from({ length: 101 }, (_, i) => `s${i}`).join(',')}`,
  ]) {
    const r = await cloud.call('GET', `/v1/play-log.csv?${bad}`)
    t.ok(r.status === 422 || r.status === 400, `${bad.slice(0, 60)}: ${r.status}`)
  }
  t.equal((await cloud.call('GET', `/v1/play-log.csv?from=2026-06-01T00:00:00Z&to=2026-06-02T00:00:00Z&screenIds=scr_nope`)).status, 404)
})

t.test('over its message budget a batch is refused, never acknowledged and dropped', async (t) => {
  const {
    cloud,
    screens: [a],
  } = await cloudWith(t, 'A')
  const url = `mqtt://127.0.0.1:${cloud.running.mqttPort}`
  const budget = servicesOf(cloud.running.app).broker.budget
  const before = budget.options
  budget.options = { ...before, burst: 2, ratePerSecond: 0.001 }
  const dev = await connectDevice(t, url, a, {}, false)
  await dev.client.publishAsync(topics.playLog(a.screenId), JSON.stringify({ batchId: '1', records: [rec(a.screenId, 0)] }), { qos: 1 })
  await dev.client.publishAsync(topics.playLog(a.screenId), JSON.stringify({ batchId: '2', records: [rec(a.screenId, 1)] }), { qos: 1 })
  let acked = false
  const closed = new Promise<void>((resolve) => dev.client.once('close', () => resolve()))
  dev.client.publish(topics.playLog(a.screenId), JSON.stringify({ batchId: '3', records: [rec(a.screenId, 2)] }), { qos: 1 }, () => (acked = true))
  await closed
  t.notOk(acked, 'the third batch got no PUBACK')
  t.equal((await rows(cloud, a.screenId)).length, 2, 'and was not stored')
  budget.options = before
  // The budget runs on the process' monotonic clock: let the bucket refill a few tokens.
  await new Promise((resolve) => setTimeout(resolve, 200))
  const again = await connectDevice(t, url, a, {}, false)
  await again.client.publishAsync(topics.playLog(a.screenId), JSON.stringify({ batchId: '3', records: [rec(a.screenId, 2)] }), { qos: 1 })
  t.equal((await rows(cloud, a.screenId)).length, 3, 'sent again, it is stored')
})

t.test('summary: per content, seconds with the panel on, by location and content; bounded and paged', async (t) => {
  const {
    cloud,
    screens: [a, b],
  } = await cloudWith(t, 'A', 'B', 'C')
  const store = (await cloud.call('POST', '/v1/nodes', { name: 'Store', kind: 'location' })).body.data.id as string
  t.equal((await cloud.call('PATCH', `/v1/screens/${b.screenId}`, { nodeId: store })).status, 200)
  const url = `mqtt://127.0.0.1:${cloud.running.mqttPort}`
  const da = await connectDevice(t, url, a, {}, false)
  const db = await connectDevice(t, url, b, {}, false)
  await da.client.publishAsync(
    topics.playLog(a.screenId),
    JSON.stringify({
      batchId: 'a',
      records: [
        rec(a.screenId, 0, { panelPower: 'on' }),
        rec(a.screenId, 1, { panelPower: 'off' }),
        rec(a.screenId, 2, { contentId: 'pl_2', panelPower: 'on' }),
      ],
    }),
    { qos: 1 },
  )
  await db.client.publishAsync(topics.playLog(b.screenId), JSON.stringify({ batchId: 'b', records: [rec(b.screenId, 0, { panelPower: 'on' })] }), { qos: 1 })
  const day = 'from=2026-06-01T00:00:00Z&to=2026-06-02T00:00:00Z'

  const all = await cloud.call('GET', `/v1/play-log/summary?${day}`)
  t.equal(all.status, 200)
  t.same(all.body.data, [
    { contentKind: 'playlist', contentId: 'pl_1', plays: 3, seconds: 30, secondsPanelOn: 20, screens: 2 },
    { contentKind: 'playlist', contentId: 'pl_2', plays: 1, seconds: 10, secondsPanelOn: 10, screens: 1 },
  ])
  t.equal(all.body.nextCursor, null)

  const atStore = await cloud.call('GET', `/v1/play-log/summary?${day}&nodeId=${store}`)
  t.same(
    atStore.body.data,
    [{ contentKind: 'playlist', contentId: 'pl_1', plays: 1, seconds: 10, secondsPanelOn: 10, screens: 1 }],
    'the screens at the location only',
  )
  // A group's members: screen A tagged into a dynamic group; another workspace's (or no) group is 422.
  t.equal((await cloud.call('PATCH', `/v1/screens/${a.screenId}`, { tags: ['pilot'] })).status, 200)
  const pilot = (await cloud.call('POST', '/v1/groups', { name: 'Pilot', kind: 'dynamic', rule: { all: [{ tag: 'pilot' }] } })).body.data.id
  const inGroup = await cloud.call('GET', `/v1/play-log/summary?${day}&groupId=${pilot}`)
  t.equal(inGroup.status, 200, JSON.stringify(inGroup.body))
  t.same(
    inGroup.body.data,
    [
      { contentKind: 'playlist', contentId: 'pl_1', plays: 2, seconds: 20, secondsPanelOn: 10, screens: 1 },
      { contentKind: 'playlist', contentId: 'pl_2', plays: 1, seconds: 10, secondsPanelOn: 10, screens: 1 },
    ],
    "the group's members only",
  )
  t.same((await cloud.call('GET', `/v1/play-log/summary?${day}&groupId=${pilot}&nodeId=${store}`)).body.data, [], 'both filters hold')
  t.match(await cloud.call('GET', `/v1/play-log/summary?${day}&groupId=grp_nope`), { status: 422, body: { error: 'validation_error', message: /groupId/ } })
  const one = await cloud.call('GET', `/v1/play-log/summary?${day}&contentKind=playlist&contentId=pl_2`)
  t.same(
    one.body.data.map((r: any) => r.contentId),
    ['pl_2'],
    'one content',
  )
  const later = await cloud.call('GET', '/v1/play-log/summary?from=2026-06-01T10:00:05Z&to=2026-06-02T00:00:00Z')
  t.same(
    later.body.data.map((r: any) => [r.contentId, r.plays]),
    [
      ['pl_1', 1],
      ['pl_2', 1],
    ],
    'plays counted by their start',
  )

  const first = await cloud.call('GET', `/v1/play-log/summary?${day}&limit=1`)
  t.same(
    first.body.data.map((r: any) => r.contentId),
    ['pl_1'],
  )
  t.type(first.body.nextCursor, 'string')
  const second = await cloud.call('GET', `/v1/play-log/summary?${day}&limit=1&cursor=${first.body.nextCursor}`)
  t.same(
    second.body.data.map((r: any) => r.contentId),
    ['pl_2'],
  )
  t.equal(second.body.nextCursor, null)

  for (const bad of [
    'from=2026-06-01T00:00:00Z',
    'to=2026-06-02T00:00:00Z',
    'from=2026-01-01T00:00:00Z&to=2026-06-02T00:00:00Z',
    `${day}&contentId=pl_1`,
    `${day}&cursor=abc`,
    `${day}&limit=501`,
    `${day}&colour=red`,
  ]) {
    const r = await cloud.call('GET', `/v1/play-log/summary?${bad}`)
    t.ok(r.status === 422 || r.status === 400, `${bad}: ${r.status}`)
    t.type(r.body.error, 'string')
  }
  t.ok([404, 422].includes((await cloud.call('GET', `/v1/play-log/summary?${day}&nodeId=node_nope`)).status), 'an unknown location is refused')

  // Added up per screen, location, group and UTC day; every form also as CSV (parsed by a CSV library).
  const by = async (groupBy: string, extra = '') => {
    const r = await cloud.call('GET', `/v1/play-log/summary?${day}&groupBy=${groupBy}${extra}`)
    t.equal(r.status, 200, JSON.stringify(r.body))
    t.equal(r.body.nextCursor, null, `groupBy ${groupBy}: one answer`)
    return r.body.data
  }
  t.same(
    await by('screen'),
    [
      { screenId: a.screenId, name: 'A', plays: 3, seconds: 30, secondsPanelOn: 20, screens: 1 },
      { screenId: b.screenId, name: 'B', plays: 1, seconds: 10, secondsPanelOn: 10, screens: 1 },
    ].sort((x, y) => x.screenId.localeCompare(y.screenId)),
  )
  t.same(await by('node'), [
    { nodeId: null, name: '(workspace root)', plays: 3, seconds: 30, secondsPanelOn: 20, screens: 1 },
    { nodeId: store, name: 'Store', plays: 1, seconds: 10, secondsPanelOn: 10, screens: 1 },
  ])
  t.same(await by('group'), [{ groupId: pilot, name: 'Pilot', plays: 3, seconds: 30, secondsPanelOn: 20, screens: 1 }])
  t.same(
    await by('day', '&contentKind=playlist&contentId=pl_1'),
    [{ day: '2026-06-01', plays: 3, seconds: 30, secondsPanelOn: 20, screens: 2 }],
    'plays per day of one content',
  )
  const csv = async (q: string) => {
    const res = await fetch(`http://127.0.0.1:${cloud.running.httpPort}/v1/play-log/summary?${q}`, { headers: { authorization: `Bearer ${cloud.apiKey}` } })
    t.equal(res.status, 200)
    t.match(res.headers.get('content-type'), /^text\/csv/)
    const text = await res.text()
    t.ok(text.endsWith('\r\n'), 'CRLF lines')
    return parse(text, { columns: true }) as Record<string, string>[]
  }
  t.same(
    await csv(`${day}&format=csv`),
    [
      { contentKind: 'playlist', contentId: 'pl_1', plays: '3', seconds: '30', secondsPanelOn: '20', screens: '2' },
      { contentKind: 'playlist', contentId: 'pl_2', plays: '1', seconds: '10', secondsPanelOn: '10', screens: '1' },
    ],
    'per content, every page',
  )
  t.same(await csv(`${day}&format=csv&groupBy=day`), [{ day: '2026-06-01', plays: '4', seconds: '40', secondsPanelOn: '30', screens: '2' }])
  t.same(
    (await csv(`${day}&format=csv&groupBy=node`)).map((r) => [r.nodeId, r.name, r.plays]),
    [
      ['', '(workspace root)', '3'],
      [store, 'Store', '1'],
    ],
  )
  const badCsv = await cloud.call('GET', `/v1/play-log/summary?from=2026-06-01T00:00:00Z&format=csv&groupBy=screen`)
  t.match(badCsv, { status: 422, body: { error: 'validation_error' } }, 'a bad CSV request is an error, not a broken stream')
  t.ok([400, 422].includes((await cloud.call('GET', `/v1/play-log/summary?${day}&groupBy=colour`)).status), 'an unknown groupBy is refused')

  // Another workspace sees none of these plays.
  const other = await servicesOf(cloud.running.app).workspaces.create('Other', 'us')
  const otherKey = (await servicesOf(cloud.running.app).apiKeys.createRoot(other.id, other.region, 'Owner', 'all')).secret
  const theirs = await cloud.call('GET', `/v1/play-log/summary?${day}`, undefined, otherKey)
  t.equal(theirs.status, 200)
  t.same(theirs.body.data, [])
})
