// The availability report against a brute-force oracle: random presence and panel histories
// and operating hours (own, inherited from a location, none; several time zones) are
// seeded, and every figure the report answers per screen, per location and per group must
// equal what the oracle counts minute by minute; the CSV, read over a socket as it streams,
// holds the same rows. On both engines.
import http from 'node:http'
import t, { type Test } from 'tap'
import { parse } from 'csv-parse/sync'
import { panelIntentAt, type OperatingHours } from '@svc/shared/schedule/index'
import { servicesOf } from '../../src/app.js'
import { SCREEN_BATCH } from '../../src/domains/reports/ReportsRepository.js'
import { forEngines } from '../db/engines.js'
import { screenRow } from '../fixtures/screenRows.js'
import { HANG_GUARD_MS, seededRandom } from '@svc/shared/testing'

const MIN = 60_000
const WEEK = 7 * 24 * 60 * MIN
const W0 = Date.parse('2026-05-01T00:00:00.000Z')
const W1 = Date.parse('2026-05-15T00:00:00.000Z')
const NOW = '2026-05-14T18:00:00.000Z'
const SCREENS = 24
const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata']
const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const

interface Interval {
  start: number
  end: number | null
}
interface PanelStretch extends Interval {
  power: 'on' | 'off' | 'unknown'
  playing: number
}
interface World {
  id: string
  node: string | null
  zone: string
  created: number
  presence: Interval[]
  panel: PanelStretch[]
  hours: OperatingHours | null
}

const iso = (ms: number) => new Date(ms).toISOString()

function randomHours(rnd: () => number): OperatingHours {
  const clock = () => {
    const q = Math.floor(rnd() * 96)
    return `${String(Math.floor(q / 4)).padStart(2, '0')}:${String((q % 4) * 15).padStart(2, '0')}`
  }
  const weekly = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => ({
    days: DAYS.filter(() => rnd() < 0.5).concat(DAYS[Math.floor(rnd() * 7)]!) as (typeof DAYS)[number][],
    on: clock(),
    off: clock(),
  })).map((w) => ({ ...w, days: [...new Set(w.days)] }))
  const exceptions = rnd() < 0.5 ? [{ date: '2026-05-06', off: true as const }] : [{ date: '2026-05-09', on: clock(), off: clock() }]
  return { weekly, exceptions }
}

function randomWorld(rnd: () => number, i: number, nodes: string[]): World {
  const created = rnd() < 0.7 ? W0 - 3 * 86_400_000 : W0 + Math.floor(rnd() * 10 * 24 * 60) * MIN
  const now = Date.parse(NOW)
  const walk = (from: number, gap: () => number) => {
    const cuts: number[] = []
    for (let at = from; at < now; ) {
      cuts.push(at)
      at += gap()
    }
    return cuts
  }
  // Presence: alternate stretches from before the window; the last may still be open.
  const presence: Interval[] = []
  let online = rnd() < 0.5
  const cuts = walk(created, () => (1 + Math.floor(rnd() * (rnd() < 0.3 ? 30 : 2000))) * MIN)
  cuts.forEach((c, j) => {
    if (online) presence.push({ start: c, end: j + 1 < cuts.length ? cuts[j + 1]! : rnd() < 0.5 ? null : Math.min(now, c + 5 * MIN) })
    online = !online
  })
  const panel: PanelStretch[] = []
  const pcuts = walk(created + Math.floor(rnd() * 60) * MIN, () => (1 + Math.floor(rnd() * 1500)) * MIN)
  pcuts.forEach((c, j) => {
    const power = (['on', 'off', 'unknown'] as const)[Math.floor(rnd() * 3)]!
    panel.push({ start: c, end: j + 1 < pcuts.length ? pcuts[j + 1]! : null, power, playing: rnd() < 0.7 ? 1 : 0 })
  })
  const kind = rnd()
  return {
    id: `scr_${String(i).padStart(3, '0')}`,
    node: rnd() < 0.75 ? nodes[Math.floor(rnd() * nodes.length)]! : null,
    zone: ZONES[Math.floor(rnd() * ZONES.length)]!,
    created,
    presence,
    panel,
    hours: kind < 0.5 ? randomHours(rnd) : null,
  }
}

interface Figures {
  windowSeconds: number
  onlineSeconds: number
  outages: number
  longestOutageSeconds: number
  scheduledSeconds: number
  displaySeconds: number
}

/** Minute by minute (every edge is on a minute): what the report must say of one screen. */
function oracle(w: World, hours: OperatingHours | null): Figures {
  const now = Date.parse(NOW)
  const covers = (xs: Interval[], at: number) => xs.some((x) => x.start <= at && at < (x.end ?? now))
  const onAt = new Map<number, boolean>()
  const f: Figures = { windowSeconds: 0, onlineSeconds: 0, outages: 0, longestOutageSeconds: 0, scheduledSeconds: 0, displaySeconds: 0 }
  let run = 0
  const shows = w.panel.filter((p) => p.power !== 'off' && p.playing)
  for (let m = W0; m < Math.min(W1, now); m += MIN) {
    if (m < w.created) continue
    const mid = m + MIN / 2
    f.windowSeconds += 60
    const online = covers(w.presence, mid)
    const showing = covers(shows, mid)
    // Hours change on quarter hours (every zone here is offset by whole or half hours).
    let scheduled = true
    if (hours) {
      const block = Math.floor(m / (15 * MIN))
      let v = onAt.get(block)
      if (v === undefined) onAt.set(block, (v = panelIntentAt(hours, new Date(block * 15 * MIN + MIN / 2), w.zone).power === 'on'))
      scheduled = v
    }
    if (online) f.onlineSeconds += 60
    if (scheduled) f.scheduledSeconds += 60
    if (online && showing && scheduled) f.displaySeconds += 60
    if (!online) {
      if (run === 0) f.outages++
      run += 60
      f.longestOutageSeconds = Math.max(f.longestOutageSeconds, run)
    } else run = 0
  }
  return f
}

const pick = (r: Record<string, unknown>): Figures => ({
  windowSeconds: r.windowSeconds as number,
  onlineSeconds: r.onlineSeconds as number,
  outages: r.outages as number,
  longestOutageSeconds: r.longestOutageSeconds as number,
  scheduledSeconds: r.scheduledSeconds as number,
  displaySeconds: r.displaySeconds as number,
})

function sum(fs: Figures[]): Figures {
  const s: Figures = { windowSeconds: 0, onlineSeconds: 0, outages: 0, longestOutageSeconds: 0, scheduledSeconds: 0, displaySeconds: 0 }
  for (const f of fs) {
    s.windowSeconds += f.windowSeconds
    s.onlineSeconds += f.onlineSeconds
    s.outages += f.outages
    s.longestOutageSeconds = Math.max(s.longestOutageSeconds, f.longestOutageSeconds)
    s.scheduledSeconds += f.scheduledSeconds
    s.displaySeconds += f.displaySeconds
  }
  return s
}

forEngines(t, (t, build) => {
  t.test('every figure per screen, location and group equals the minute-by-minute oracle', async (t) => {
    const h = await build(t)
    h.clock.set(NOW)
    const { apiKey, workspaceId } = await h.workspace()
    const other = await h.workspace('Other')
    const rnd = seededRandom(4901)
    const nodes: string[] = []
    for (const name of ['North', 'South']) {
      const res = await h.req('POST', '/v1/nodes', apiKey, { name, kind: 'location' })
      t.equal(res.statusCode, 201, res.body)
      nodes.push(res.json().data.id)
    }
    // One location has hours its screens without their own inherit.
    const nodeHours = randomHours(rnd)
    t.equal((await h.req('PUT', `/v1/nodes/${nodes[0]}/operating-hours`, apiKey, nodeHours)).statusCode, 200)
    const worlds = Array.from({ length: SCREENS }, (_, i) => randomWorld(rnd, i, nodes))
    const db = servicesOf(h.app).db.kysely
    await db
      .insertInto('screens')
      .values(worlds.map((w) => screenRow(w.id, workspaceId, iso(w.created), { node_id: w.node, timezone: w.zone, name: `Screen ${w.id}` })))
      .execute()
    // A screen of another workspace with a full history: never counted here.
    await db
      .insertInto('screens')
      .values(screenRow('scr_other', other.workspaceId, iso(W0 - 86_400_000)))
      .execute()
    await db
      .insertInto('presence_intervals')
      .values({ workspace_id: other.workspaceId, screen_id: 'scr_other', started_at: iso(W0), ended_at: null })
      .execute()
    for (const w of worlds) {
      if (w.presence.length)
        await db
          .insertInto('presence_intervals')
          .values(
            w.presence.map((p) => ({ workspace_id: workspaceId, screen_id: w.id, started_at: iso(p.start), ended_at: p.end === null ? null : iso(p.end) })),
          )
          .execute()
      if (w.panel.length)
        await db
          .insertInto('panel_intervals')
          .values(
            w.panel.map((p) => ({
              workspace_id: workspaceId,
              screen_id: w.id,
              started_at: iso(p.start),
              ended_at: p.end === null ? null : iso(p.end),
              power: p.power,
              playing: p.playing,
              showing: p.power !== 'off' && p.playing ? 1 : 0,
            })),
          )
          .execute()
      if (w.hours) t.equal((await h.req('PUT', `/v1/screens/${w.id}/operating-hours`, apiKey, w.hours)).statusCode, 200)
    }
    const effective = (w: World) => w.hours ?? (w.node === nodes[0] ? nodeHours : null)
    const expected = new Map(worlds.map((w) => [w.id, oracle(w, effective(w))]))

    const members = worlds.filter((_, i) => i % 3 === 0).map((w) => w.id)
    const group = await h.req('POST', '/v1/groups', apiKey, { name: 'Every third', kind: 'static', screenIds: members })
    t.equal(group.statusCode, 201, group.body)
    const groupId = group.json().data.id

    const check = async (t: Test) => {
      const q = `from=${iso(W0)}&to=${iso(W1)}`
      const res = await h.req('GET', `/v1/reports/availability?${q}`, apiKey)
      t.equal(res.statusCode, 200, res.body)
      const report = res.json().data
      t.equal(report.rows.length, SCREENS, 'one row per screen of the workspace, none of another')
      for (const r of report.rows) {
        const want = expected.get(r.id)!
        t.same(pick(r), want, `screen ${r.id}`)
        t.equal(r.offlineSeconds, want.windowSeconds - want.onlineSeconds)
        if (want.windowSeconds) t.ok(Math.abs(r.availability - want.onlineSeconds / want.windowSeconds) < 1e-9)
        if (want.scheduledSeconds) t.ok(Math.abs(r.displayAvailability - want.displaySeconds / want.scheduledSeconds) < 1e-9)
        else t.equal(r.displayAvailability, null)
      }
      t.same(pick(report.total), sum([...expected.values()]), 'the total adds every screen up')

      const byNode = (await h.req('GET', `/v1/reports/availability?${q}&groupBy=node`, apiKey)).json().data
      for (const r of byNode.rows) t.same(pick(r), sum(worlds.filter((w) => w.node === r.id).map((w) => expected.get(w.id)!)), `location ${r.id ?? 'root'}`)
      t.equal(byNode.rows.length, new Set(worlds.map((w) => w.node)).size)

      // Cut into weeks in one answer: each period's rows are the report of that period alone,
      // and the whole window's rows are as without `per`.
      const perWeek = (await h.req('GET', `/v1/reports/availability?${q}&groupBy=node&per=week`, apiKey)).json().data
      t.same(perWeek.rows, byNode.rows, 'per keeps the whole window rows')
      t.same(
        perWeek.periods.map((p: { from: string; to: string }) => [p.from, p.to]),
        [
          [iso(W0), iso(W0 + WEEK)],
          [iso(W0 + WEEK), iso(W1)],
        ],
        'two weeks from `from`',
      )
      for (const p of perWeek.periods) {
        const alone = (await h.req('GET', `/v1/reports/availability?from=${p.from}&to=${p.to}&groupBy=node`, apiKey)).json().data
        t.same(p.rows, alone.rows, `the week from ${p.from} as its own report`)
      }
      const refused = await h.req('GET', `/v1/reports/availability?${q}&per=day`, apiKey)
      t.equal(refused.statusCode, 422, 'per without groupBy=node is refused')
      t.match(refused.json(), { error: 'validation_error', message: /groupBy=node/ })

      const byGroup = (await h.req('GET', `/v1/reports/availability?${q}&groupBy=group`, apiKey)).json().data
      t.same(pick(byGroup.rows[0]), sum(members.map((id) => expected.get(id)!)), 'the group adds its members up')
      t.equal(byGroup.rows[0].screens, members.length)

      const oneNode = (await h.req('GET', `/v1/reports/availability?${q}&nodeId=${nodes[1]}`, apiKey)).json().data
      t.same(
        oneNode.rows.map((r: { id: string }) => r.id),
        worlds.filter((w) => w.node === nodes[1]).map((w) => w.id),
        'nodeId keeps the screens at that location',
      )
      const inGroup = (await h.req('GET', `/v1/reports/availability?${q}&groupId=${groupId}`, apiKey)).json().data
      t.same(
        inGroup.rows.map((r: { id: string }) => r.id),
        members,
        "groupId keeps the group's members",
      )
    }
    await t.test('read from the raw history', check)
    const rollup = servicesOf(h.app).availabilityRollup
    t.ok((await rollup.rollAll()) > 0, 'the roll-up looked at the closed stretches')
    const rolledUp = await db
      .selectFrom('availability_hours')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
    t.ok(Number(rolledUp.n) > 0, 'short stretches were folded into hourly rows')
    t.equal(await rollup.rollAll(), 0, 'a second run finds nothing left')
    await t.test('read with the hourly roll-ups in play', check)
    // A stretch closed after a run (a restart finding a device gone): read raw until the next run.
    const open = worlds.find((w) => w.presence.some((p) => p.end === null && p.start < Date.parse(NOW) - 30 * MIN))!
    const last = open.presence.find((p) => p.end === null)!
    last.end = last.start + 20 * MIN
    await db
      .updateTable('presence_intervals')
      .set({ ended_at: iso(last.end) })
      .where('screen_id', '=', open.id)
      .where('started_at', '=', iso(last.start))
      .execute()
    expected.set(open.id, oracle(open, effective(open)))
    await t.test('a stretch closed after a run, before the next', check)
    t.ok((await rollup.rollAll()) > 0)
    await t.test('and after the next run', check)
  })
})

forEngines(t, (t, build) => {
  t.test('a fleet read over several batches of screens, and hours changed between two equal reports', async (t) => {
    const h = await build(t)
    h.clock.set(NOW)
    const { apiKey, workspaceId } = await h.workspace()
    const node = await h.req('POST', '/v1/nodes', apiKey, { name: 'Store', kind: 'location' })
    t.equal(node.statusCode, 201, node.body)
    const nodeId = node.json().data.id as string
    const first: OperatingHours = { weekly: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], on: '09:00', off: '17:00' }], exceptions: [] }
    t.equal((await h.req('PUT', `/v1/nodes/${nodeId}/operating-hours`, apiKey, first)).statusCode, 200)
    // Three batches of the report's reads (the next read while one is worked out); four kinds of history.
    const N = 2 * SCREEN_BATCH + 7
    const kinds: World[] = [0, 1, 2, 3].map((k) => ({
      id: `kind${k}`,
      node: k % 2 ? nodeId : null,
      zone: ZONES[k]!,
      created: W0 - 86_400_000,
      presence: [
        { start: W0 + (k * 97 + 5) * MIN, end: W0 + (k * 97 + 5) * MIN + (k + 1) * 86_400_000 },
        ...(k === 3 ? [{ start: W0 + 6 * 86_400_000, end: null }] : []),
      ],
      panel: [{ start: W0 - 86_400_000, end: null, power: 'on' as const, playing: k === 2 ? 0 : 1 }],
      hours: null,
    }))
    const worlds = Array.from({ length: N }, (_, i) => ({ ...kinds[i % 4]!, id: `scr_${String(i).padStart(5, '0')}` }))
    const db = servicesOf(h.app).db.kysely
    for (let i = 0; i < N; i += 200) {
      const part = worlds.slice(i, i + 200)
      await db
        .insertInto('screens')
        .values(part.map((w) => screenRow(w.id, workspaceId, iso(w.created), { node_id: w.node, timezone: w.zone, name: `Screen ${w.id}` })))
        .execute()
      await db
        .insertInto('presence_intervals')
        .values(
          part.flatMap((w) =>
            w.presence.map((p) => ({ workspace_id: workspaceId, screen_id: w.id, started_at: iso(p.start), ended_at: p.end === null ? null : iso(p.end) })),
          ),
        )
        .execute()
      await db
        .insertInto('panel_intervals')
        .values(
          part.map((w) => ({
            workspace_id: workspaceId,
            screen_id: w.id,
            started_at: iso(w.panel[0]!.start),
            ended_at: null,
            power: 'on',
            playing: w.panel[0]!.playing,
            showing: w.panel[0]!.playing,
          })),
        )
        .execute()
    }
    // A screen with hours of its own in each batch (their location's are not theirs), and a
    // group with members in every batch.
    const own: OperatingHours = { weekly: [{ days: ['tue', 'sat'], on: '06:15', off: '23:45' }], exceptions: [] }
    const ownAt = new Set([1, SCREEN_BATCH + 1, 2 * SCREEN_BATCH + 1])
    for (const i of ownAt) t.equal((await h.req('PUT', `/v1/screens/${worlds[i]!.id}/operating-hours`, apiKey, own)).statusCode, 200)
    const members = worlds.filter((_, i) => i % 37 === 0).map((w) => w.id)
    const group = await h.req('POST', '/v1/groups', apiKey, { name: 'Every 37th', kind: 'static', screenIds: members })
    t.equal(group.statusCode, 201, group.body)
    const q = `from=${iso(W0)}&to=${iso(W1)}`
    const check = async (t: Test, hours: OperatingHours) => {
      const byKind = kinds.map((k) => oracle(k, k.node ? hours : null))
      const ownWant = oracle(kinds[1]!, own)
      const want = worlds.map((_, i) => (ownAt.has(i) ? ownWant : byKind[i % 4]!))
      const res = await h.req('GET', `/v1/reports/availability?${q}`, apiKey)
      t.equal(res.statusCode, 200, res.body)
      const report = res.json().data
      t.same(
        report.rows.map((r: { id: string }) => r.id),
        worlds.map((w) => w.id),
        'every screen once, in id order, across the batches',
      )
      const wrong = report.rows.filter((r: Record<string, unknown>, i: number) => JSON.stringify(pick(r)) !== JSON.stringify(want[i]))
      t.same(wrong, [], 'each screen as the oracle counts its kind of history (or its own hours)')
      t.same(pick(report.total), sum(want), 'the total adds every screen up')
      const byNode = (await h.req('GET', `/v1/reports/availability?${q}&groupBy=node`, apiKey)).json().data
      const at = (home: string | null) => sum(worlds.flatMap((w, i) => (w.node === home ? [want[i]!] : [])))
      t.same(pick(byNode.rows.find((r: { id: string | null }) => r.id === nodeId)), at(nodeId), 'the location adds its screens up')
      t.same(pick(byNode.rows.find((r: { id: string | null }) => r.id === null)), at(null), 'so does the workspace root')
      const byGroup = (await h.req('GET', `/v1/reports/availability?${q}&groupBy=group`, apiKey)).json().data
      t.equal(byGroup.rows[0].screens, members.length)
      t.same(pick(byGroup.rows[0]), sum(worlds.flatMap((w, i) => (i % 37 === 0 ? [want[i]!] : []))), 'the group adds its members up across the batches')
      t.same(pick(byGroup.total), sum(want), 'and the total every screen')
    }
    await t.test('with the first hours', (t) => check(t, first))
    await t.test('the same report again (its hours kept from the first)', (t) => check(t, first))
    await t.test('the CSV over a real socket: parsed by a CSV library, equal to the JSON, and streamed', async (t) => {
      const json = (await h.req('GET', `/v1/reports/availability?${q}`, apiKey)).json().data
      // The reads of a batch of screens, counted as each ends; the read of the last batch (the
      // third) waits until the client holds the first rows. A CSV built whole before it is sent
      // would never send them: the guard then opens the read and the test fails.
      const repo = (servicesOf(h.app).availability as unknown as { repo: { screens: (...a: unknown[]) => Promise<unknown[]> } }).repo
      const read = repo.screens
      let started = 0
      let ended = 0
      let endedAtFirstRows = -1
      let gateExpired = false
      let openGate!: () => void
      const gate = new Promise<void>((r) => (openGate = r))
      const guard = setTimeout(() => {
        gateExpired = true
        openGate()
      }, HANG_GUARD_MS)
      t.teardown(() => {
        clearTimeout(guard)
        repo.screens = read
      })
      repo.screens = async function (this: unknown, ...a: unknown[]) {
        if (++started === 3) await gate
        const rows = await read.apply(this, a)
        ended++
        return rows
      }
      const base = await h.app.listen({ host: '127.0.0.1', port: 0 })
      const text = await new Promise<string>((resolve, reject) => {
        const req = http.get(`${base}/v1/reports/availability?${q}&format=csv`, { headers: { authorization: `Bearer ${apiKey}` } }, (res) => {
          t.equal(res.statusCode, 200)
          t.match(res.headers['content-type'], /^text\/csv/)
          res.setEncoding('utf8')
          let body = ''
          res.on('data', (c: string) => {
            body += c
            // The header line and at least one row.
            if (endedAtFirstRows < 0 && body.split('\n').length > 2) {
              endedAtFirstRows = ended
              openGate()
            }
          })
          res.on('end', () => resolve(body))
          res.on('error', reject)
        })
        req.on('error', reject)
        req.setTimeout(HANG_GUARD_MS, () => req.destroy(new Error('hang guard: the CSV response did not end')))
      })
      t.equal(gateExpired, false, 'the first rows arrived while the last batch was still to be read (hang guard: they never did)')
      t.ok(endedAtFirstRows >= 1 && endedAtFirstRows < 3, `batches read when the first rows arrived: ${endedAtFirstRows} of 3`)
      t.equal(ended, 3, 'three batches of screens read in all')
      const records = parse(text, { columns: true, cast: true }) as Record<string, unknown>[]
      const columns = Object.keys(records[0]!)
      t.equal(columns[0], 'screenId')
      const asCsv = (r: Record<string, unknown>) => Object.fromEntries(columns.map((c, i) => [c, (i === 0 ? r.id : r[c]) ?? '']))
      t.equal(records.length, N + 1, 'a line per screen and the total')
      t.same(records.slice(0, -1), json.rows.map(asCsv), 'every row as in the JSON answer')
      t.same(records[N], asCsv(json.total), 'the last line is the total')
    })
    const second: OperatingHours = { weekly: [{ days: ['sat', 'sun'], on: '10:00', off: '22:30' }], exceptions: [] }
    t.equal((await h.req('PUT', `/v1/nodes/${nodeId}/operating-hours`, apiKey, second)).statusCode, 200)
    await t.test('the location given other hours: the same window reads them', (t) => check(t, second))
  })
})
