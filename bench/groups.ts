// Tags and groups at fleet size (not a test): the app on a file SQLite database (or a fresh
// PostgreSQL schema with --database-url) with N screens inserted directly, each with five
// tags (`format:…`, `floor:0…9`, `region:…`, `panel:…`, `half:a|b`) and an agent version,
// the real content library (one PNG uploaded through the API), no devices. Every figure is
// an API request through the app (Fastify's inject), as a client sees the answer:
//   (a) POST /v1/groups/preview of a three-condition rule (a tag, a tag prefix, a version
//       comparison under `not`), R times;
//   (b) GET /v1/groups/<id>/members?limit=100 (a page of a 5,000-member group), R times;
//   (c) POST /v1/casts to a 5,000-member dynamic group, beside, in the same run and
//       interleaved round by round, the same cast to a static group of the same 5,000 ids and
//       to a location holding exactly them; and a cast to a 1,000-member group beside the same
//       cast by its 1,000 `screenIds` (the route takes at most 1,000 ids). Each cast is cleared
//       and its fan-out handed to the broker before the next;
//   (d) membership update after POST /v1/screens/bulk-tag adds (then removes) a tag on the
//       5,000 screens of a group: the answer, then until GET /v1/groups/<id> counts them,
//       then until the active emergency aimed at a group on that tag holds them all and
//       their desired states are handed to the broker.
//   pnpm exec tsx bench/groups.ts [N=10000] [--rounds=9] [--database-url=postgres://…] [--casts-only]
// (c) is also reported in process CPU time (process.cpuUsage around each request: on SQLite
// the SQL included, on PostgreSQL not), which other processes on a shared machine disturb far
// less than the wall time.
import { join } from 'node:path'
import { PostgresDatabase } from '../cloud/src/platform/db/PostgresDatabase.js'
import { databaseUrlArg, engineLabel, freshSchema } from './lib/engine.js'
import { buildApp, servicesOf } from '../cloud/src/app.js'
import { testConfig } from '../cloud/src/config.js'
import { f1, loadAvg, now, tempDir, uploadImage } from './lib/harness.js'
import { screenRow } from '../cloud/test/fixtures/screenRows.js'

const FORMATS = ['kiosk', 'menu', 'window', 'lobby']
const REGIONS = Array.from({ length: 20 }, (_, i) => `r${i}`)
const PANELS = ['samsung', 'lg', 'philips']
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const each = (xs: number[]) => xs.map(f1).join(', ')

async function main(): Promise<void> {
  const databaseUrl = databaseUrlArg()
  const args = process.argv.slice(2)
  const N = Number(args.find((a) => /^\d+$/.test(a)) ?? 10_000)
  const R = Number(args.find((a) => a.startsWith('--rounds='))?.slice(9) ?? 9)
  // --casts-only: (a), (b) and (c), without (d) (for iterating on the casts' cost).
  const castsOnly = args.includes('--casts-only')
  const dir = tempDir('svc-bench-groups-')
  const pgSchema = databaseUrl ? await freshSchema(databaseUrl) : null
  const db = pgSchema ? await PostgresDatabase.open(databaseUrl!, { busyTimeoutMs: 5000, schema: pgSchema.schema }) : undefined
  const app = await buildApp(
    testConfig({ dataDir: dir, dbFile: join(dir, 'svc.sqlite'), rateLimitPerMinute: 100_000_000, mediaProcessing: 'background' }),
    db ? { db } : {},
  )
  await app.ready()
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  const s = servicesOf(app)
  const ws = await s.workspaces.create('Bench', 'us')
  const { secret } = await s.apiKeys.createRoot(ws.id, ws.region, 'Owner', 'all')
  const req = async (method: 'GET' | 'POST' | 'PATCH', path: string, body?: object) => {
    const c0 = process.cpuUsage()
    const t0 = now()
    const r = await app.inject({ method, url: path, headers: { authorization: `Bearer ${secret}` }, ...(body ? { payload: body } : {}) })
    const ms = now() - t0
    const c = process.cpuUsage(c0)
    if (r.statusCode >= 300) throw new Error(`${method} ${path}: ${r.statusCode} ${r.body}`)
    return { ms, cpu: (c.user + c.system) / 1000, data: r.json().data }
  }

  // The fleet: half:a on even screens (5,000 of 10,000), also the only screens at location "Half A".
  const halfA = (await req('POST', '/v1/nodes', { name: 'Half A', kind: 'location' })).data.id as string
  const at = new Date().toISOString()
  const id = (i: number) => `scr_bench${String(i).padStart(6, '0')}`
  for (let i = 0; i < N; i += 500) {
    const n = Math.min(500, N - i)
    const rows = Array.from({ length: n }, (_, j) =>
      screenRow(id(i + j), ws.id, at, {
        name: `S${i + j}`,
        node_id: (i + j) % 2 === 0 ? halfA : null,
        agent_version: `${(i + j) % 3}.${(i + j) % 7}.${(i + j) % 11}`,
        panel_protocol: (i + j) % 4 === 0 ? 'samsung-mdc' : null,
      }),
    )
    await s.db.kysely.insertInto('screens').values(rows).execute()
    const tags = rows.flatMap((r, j) => {
      const k = i + j
      return [
        `format:${FORMATS[k % FORMATS.length]}`,
        `floor:${k % 10}`,
        `region:${REGIONS[k % REGIONS.length]}`,
        `panel:${PANELS[k % PANELS.length]}`,
        `half:${k % 2 === 0 ? 'a' : 'b'}`,
      ].map((tag) => ({ screen_id: r.id as string, workspace_id: ws.id, tag }))
    })
    await s.db.kysely.insertInto('screen_tags').values(tags).execute()
  }
  const mediaId = await uploadImage(url, secret)
  console.log(`N = ${N} screens, 5 tags each, ${engineLabel(databaseUrl)}, ${R} rounds; load average ${await loadAvg()}`)

  // (a) preview of a three-condition rule
  const rule = { all: [{ tag: 'half:a' }, { tagPrefix: 'floor:' }, { not: { agentVersion: { lt: '1.0.0' } } }] }
  const previews: number[] = []
  let previewCount = 0
  for (let i = 0; i < R; i++) {
    const r = await req('POST', '/v1/groups/preview', { rule })
    previews.push(r.ms)
    previewCount = r.data.count
  }

  // (b) a page of members
  const group = async (body: object) => (await req('POST', '/v1/groups', body)).data as { id: string; memberCount: number }
  const half = await group({ name: 'Half A (rule)', kind: 'dynamic', rule: { all: [{ tag: 'half:a' }] } })
  const halfIds = Array.from({ length: Math.ceil(N / 2) }, (_, k) => id(2 * k))
  const halfStatic = await group({ name: 'Half A (list)', kind: 'static', screenIds: halfIds })
  const tenth = await group({ name: 'Floor 0 of half A', kind: 'dynamic', rule: { all: [{ tag: 'half:a' }, { tag: 'floor:0' }] } })
  const tenthIds = Array.from({ length: Math.ceil(N / 10) }, (_, k) => id(10 * k))
  const pages: number[] = []
  for (let i = 0; i < R; i++) pages.push((await req('GET', `/v1/groups/${half.id}/members?limit=100`)).ms)

  // (c) casts: the group forms and their equivalents, interleaved
  const targets = {
    dynamic5k: { scopeKind: 'group', groupId: half.id },
    static5k: { scopeKind: 'group', groupId: halfStatic.id },
    node5k: { scopeKind: 'node', scopeNodeId: halfA },
    dynamic1k: { scopeKind: 'group', groupId: tenth.id },
    ids1k: { scopeKind: 'screens', screenIds: tenthIds },
  } as const
  const casts: Record<keyof typeof targets, number[]> = { dynamic5k: [], static5k: [], node5k: [], dynamic1k: [], ids1k: [] }
  const castCpu: Record<keyof typeof targets, number[]> = { dynamic5k: [], static5k: [], node5k: [], dynamic1k: [], ids1k: [] }
  const counts: Record<string, number> = {}
  for (let i = 0; i < R; i++) {
    const order = (Object.keys(targets) as (keyof typeof targets)[]).sort(() => (i % 2 ? 1 : -1))
    for (const k of order) {
      const r = await req('POST', '/v1/casts', { contentKind: 'media', contentId: mediaId, ...targets[k] })
      casts[k].push(r.ms)
      castCpu[k].push(r.cpu)
      counts[k] = r.data.screenCount
      await s.desiredPublisher.idle()
      await req('POST', `/v1/casts/${r.data.id}/clear`)
      await s.desiredPublisher.idle()
    }
  }

  // (d) membership after a bulk tag of 5,000 screens
  const promo = await group({ name: 'Promo', kind: 'dynamic', rule: { all: [{ tag: 'promo' }] } })
  await req('POST', '/v1/screens/bulk-tag', { screenIds: [id(0)], add: ['promo'] })
  const emg = (await req('POST', '/v1/emergencies', { contentKind: 'media', contentId: mediaId, scopeKind: 'group', groupId: promo.id, message: 'Bench' }))
    .data as { id: string }
  await s.desiredPublisher.idle()
  const rows: { op: string; answer: number; counted: number; followed: number; handed: number; matched: number; changed: number }[] = []
  for (let i = 0; i < Math.min(R, 3) * 2; i++) {
    const op = i % 2 === 0 ? 'add' : 'remove'
    const t0 = now()
    const r = await req('POST', '/v1/screens/bulk-tag', { groupId: half.id, [op]: ['promo'] })
    const answered = now() - t0
    // id(0), tagged first, is in the group too: the remove takes every member off.
    const expected = op === 'add' ? halfIds.length : 0
    while ((await req('GET', `/v1/groups/${promo.id}`)).data.memberCount !== expected);
    const counted = now() - t0
    while ((await req('GET', `/v1/emergencies/${emg.id}`)).data.screenCount !== expected) await new Promise((res) => setTimeout(res, 2))
    const followed = now() - t0
    await s.desiredPublisher.idle()
    rows.push({ op, answer: answered, counted, followed, handed: now() - t0, matched: r.data.matched, changed: r.data.changed })
  }

  console.log(`| N = ${N}, ${engineLabel(databaseUrl)} (${R} rounds; load average at the end ${await loadAvg()}) | median | each |`)
  console.log('| --- | --- | --- |')
  console.log(`| (a) \`POST /v1/groups/preview\`, three conditions (${previewCount} screens) | ${f1(med(previews))} ms | ${each(previews)} |`)
  console.log(`| (b) \`GET /v1/groups/<id>/members?limit=100\` (${half.memberCount} members) | ${f1(med(pages))} ms | ${each(pages)} |`)
  const label: Record<keyof typeof targets, string> = {
    dynamic5k: 'dynamic group (tag rule)',
    static5k: 'static group of the same ids',
    node5k: 'location holding the same screens',
    dynamic1k: 'dynamic group (two tags)',
    ids1k: 'the same screenIds',
  }
  for (const k of Object.keys(targets) as (keyof typeof targets)[])
    console.log(`| (c) \`POST /v1/casts\` to a ${label[k]} (${counts[k]} screens) | ${f1(med(casts[k]))} ms | ${each(casts[k])} |`)
  console.log('')
  console.log(
    `(c) ratios of medians: dynamic 5,000 / static 5,000 = ${(med(casts.dynamic5k) / med(casts.static5k)).toFixed(2)}×, dynamic 5,000 / location 5,000 = ${(med(casts.dynamic5k) / med(casts.node5k)).toFixed(2)}×, dynamic 1,000 / ids 1,000 = ${(med(casts.dynamic1k) / med(casts.ids1k)).toFixed(2)}×`,
  )
  console.log('')
  console.log(
    'Process CPU time of the same casts (the request, and on SQLite the SQL it waits on; not the PostgreSQL backends): less moved by other processes on the machine than the wall time:',
  )
  console.log('')
  console.log('| (c) cast, CPU ms | median | each |')
  console.log('| --- | --- | --- |')
  for (const k of Object.keys(targets) as (keyof typeof targets)[])
    console.log(`| ${label[k]} (${counts[k]} screens) | ${f1(med(castCpu[k]))} ms | ${each(castCpu[k])} |`)
  console.log('')
  console.log(
    `(c) CPU ratios of medians: dynamic 5,000 / static 5,000 = ${(med(castCpu.dynamic5k) / med(castCpu.static5k)).toFixed(2)}×, dynamic 5,000 / location 5,000 = ${(med(castCpu.dynamic5k) / med(castCpu.node5k)).toFixed(2)}×, dynamic 1,000 / ids 1,000 = ${(med(castCpu.dynamic1k) / med(castCpu.ids1k)).toFixed(2)}×`,
  )
  // Round by round the casts grow (the cleared casts' rows stay), the same for each target: the
  // ratio of the two casts of one round cancels that drift, and its median the outliers.
  const paired = (xs: Record<keyof typeof targets, number[]>, a: keyof typeof targets, b: keyof typeof targets) =>
    med(xs[a].map((x, i) => x / xs[b][i]!)).toFixed(2)
  console.log(
    `(c) medians of the per-round ratios, wall / CPU: dynamic 5,000 / static 5,000 = ${paired(casts, 'dynamic5k', 'static5k')}× / ${paired(castCpu, 'dynamic5k', 'static5k')}×, dynamic 5,000 / location 5,000 = ${paired(casts, 'dynamic5k', 'node5k')}× / ${paired(castCpu, 'dynamic5k', 'node5k')}×, dynamic 1,000 / ids 1,000 = ${paired(casts, 'dynamic1k', 'ids1k')}× / ${paired(castCpu, 'dynamic1k', 'ids1k')}×`,
  )
  console.log('')
  if (castsOnly) {
    await app.close()
    await db?.close()
    await pgSchema?.drop()
    return
  }
  console.log('| (d) bulk tag of a group | matched, changed | answered | group counts them | emergency holds them | … handed to the broker |')
  console.log('| --- | --- | --- | --- | --- | --- |')
  for (const r of rows)
    console.log(`| ${r.op} \`promo\` | ${r.matched}, ${r.changed} | ${f1(r.answer)} ms | ${f1(r.counted)} ms | ${f1(r.followed)} ms | ${f1(r.handed)} ms |`)
  await app.close()
  await db?.close()
  await pgSchema?.drop()
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e)
    process.exit(1)
  },
)
