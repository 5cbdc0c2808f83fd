// The media, alert, status and mail repositories on both engines: numbers come back as
// numbers (a BIGINT size, REAL latencies, COUNTs), ISO timestamps compare as time, upserts
// replace, a second open alert event is a unique violation on either engine, and a rule's
// scope is found by its column — including rules written before that column existed.
import t from 'tap'
import { eachEngine } from './engines.js'
import { isUniqueViolation } from '../../src/platform/db/Database.js'
import type { Database } from '../../src/platform/db/Database.js'
import type { AlertEventRow, AlertRuleRow } from '../../src/domains/alerts/tables.js'
import type { MediaRow } from '../../src/domains/media/tables.js'
import { loadMigrations, migrate } from '../../src/platform/db/migrate.js'
import { MediaRepository } from '../../src/domains/media/MediaRepository.js'
import { StoredBytesRepository } from '../../src/domains/media/StoredBytesRepository.js'
import { AlertRepository } from '../../src/domains/alerts/AlertRepository.js'
import { StatusRepository } from '../../src/domains/status/StatusRepository.js'
import { MailRepository } from '../../src/domains/mail/MailRepository.js'
import { ScreenRepository } from '../../src/domains/screens/ScreenRepository.js'

const AT = '2026-06-01T12:00:00.000Z'
const page = (limit: number | null, after: string | null = null) => ({ limit, after, count: false })

async function workspaceWithNodes(db: Database): Promise<void> {
  await db.kysely.insertInto('workspaces').values({ id: 'ws_1', name: 'W', region: 'us', rate_limit: null, licensed_screens: null, created_at: AT }).execute()
  for (const [id, parent] of [
    ['nod_a', null],
    ['nod_b', null],
  ] as const)
    await db.kysely
      .insertInto('nodes')
      .values({ id, workspace_id: 'ws_1', parent_id: parent, kind: 'location', name: id, created_at: AT, updated_at: AT })
      .execute()
}

const media = (id: string, over: Partial<MediaRow> = {}): MediaRow => ({
  id,
  workspace_id: 'ws_1',
  name: `File ${id}`,
  kind: 'image',
  mime_type: 'image/png',
  size_bytes: 10,
  sha256: `sha_${id}`,
  state: 'processing',
  failure_reason: null,
  width: null,
  height: null,
  duration_ms: null,
  thumbnail_at: null,
  folder_id: null,
  node_id: null,
  recalled_at: null,
  recall_reason: null,
  recalled_by: null,
  created_by: 'key_1',
  created_at: AT,
  updated_at: AT,
  ...over,
})

eachEngine(t, 'media repository', async (t, db) => {
  await workspaceWithNodes(db)
  const repo = new MediaRepository(db.kysely)
  const big = 12 * 1024 ** 3
  await repo.insert(media('med_1', { size_bytes: big, name: 'Lobby LOOP', node_id: 'nod_a' }))
  await repo.insert(media('med_2', { node_id: 'nod_b', folder_id: 'fld_1', kind: 'video' }))
  await repo.insert(media('med_3', { node_id: null, sha256: 'sha_med_1' }))
  const one = (await repo.byId('ws_1', 'med_1'))!
  t.equal(one.size_bytes, big, 'a size past 32 bits reads back as that number')
  t.equal(typeof one.size_bytes, 'number')
  t.equal(await repo.byId('ws_2', 'med_1'), undefined, 'another workspace does not see it')

  const ids = (rows: MediaRow[]) => rows.map((r) => r.id)
  t.same(ids(await repo.list('ws_1', null, {}, page(null))), ['med_3', 'med_2', 'med_1'], 'newest id first')
  t.same(ids(await repo.list('ws_1', null, {}, page(1, 'med_3'))), ['med_2', 'med_1'], 'after the cursor, limit + 1 rows')
  t.same(ids(await repo.list('ws_1', null, { search: 'loop' }, page(null))), ['med_1'], 'search ignores case on both engines')
  t.same(ids(await repo.list('ws_1', null, { folderId: 'root' }, page(null))), ['med_3', 'med_1'])
  t.same(ids(await repo.list('ws_1', null, { folderId: 'fld_1', kind: 'video' }, page(null))), ['med_2'])
  t.equal(await repo.count('ws_1', null, {}), 3)
  t.equal(typeof (await repo.count('ws_1', null, {})), 'number')

  // Visibility for a credential pinned to nod_a: homed there, or shared into it.
  t.same(ids(await repo.list('ws_1', ['nod_a'], {}, page(null))), ['med_1'])
  await db.kysely
    .insertInto('content_shares')
    .values([
      { workspace_id: 'ws_1', content_kind: 'media', content_id: 'med_2', node_id: 'nod_a', created_at: '2026-06-01T12:00:02.000Z' },
      { workspace_id: 'ws_1', content_kind: 'media', content_id: 'med_2', node_id: 'nod_b', created_at: '2026-06-01T12:00:01.000Z' },
      { workspace_id: 'ws_1', content_kind: 'playlist', content_id: 'med_3', node_id: 'nod_a', created_at: AT },
    ])
    .execute()
  t.same(ids(await repo.list('ws_1', ['nod_a'], {}, page(null))), ['med_2', 'med_1'], 'a media share counts, another kind does not')
  t.equal(await repo.count('ws_1', ['nod_a'], {}), 2)
  t.same(ids(await repo.list('ws_1', [], {}, page(null))), [], 'an empty subtree sees nothing')
  t.same([...(await repo.shares('ws_1', ['med_1', 'med_2']))], [['med_2', ['nod_b', 'nod_a']]], 'shares oldest first')

  t.ok(await repo.settleProbe('med_1', { state: 'ready', failure: null, width: 1920, height: 1080, durationMs: null, thumbnailAt: AT }, AT))
  t.notOk(
    await repo.settleProbe('med_1', { state: 'failed', failure: 'x', width: null, height: null, durationMs: null, thumbnailAt: null }, AT),
    'settled once',
  )
  t.same(ids(await repo.processing()), ['med_2', 'med_3'])
  t.match(await repo.byId('ws_1', 'med_1'), { state: 'ready', width: 1920, height: 1080, thumbnail_at: AT })

  await repo.delete('ws_1', 'med_1')
  t.ok(await new StoredBytesRepository(db.kysely).inUse('sha_med_1'), 'another item still holds the bytes')
  await repo.delete('ws_1', 'med_3')
  t.notOk(await new StoredBytesRepository(db.kysely).inUse('sha_med_1'))

  // Multipart uploads: a part sent again replaces the first; expiry compares as time.
  await repo.insertUpload({
    id: 'upl_1',
    workspace_id: 'ws_1',
    name: 'big.mp4',
    folder_id: null,
    node_id: null,
    created_by: 'k',
    created_at: AT,
    expires_at: '2026-06-02T12:00:00.000Z',
  })
  await repo.insertUpload({
    id: 'upl_2',
    workspace_id: 'ws_1',
    name: 'old.mp4',
    folder_id: null,
    node_id: null,
    created_by: 'k',
    created_at: AT,
    expires_at: '2026-06-01T11:59:59.999Z',
  })
  await repo.putPart({ upload_id: 'upl_1', part_number: 2, size_bytes: 5, sha256: 'a', received_at: AT })
  await repo.putPart({ upload_id: 'upl_1', part_number: 1, size_bytes: 6 * 1024 ** 3, sha256: 'b', received_at: AT })
  await repo.putPart({ upload_id: 'upl_1', part_number: 2, size_bytes: 7, sha256: 'c', received_at: '2026-06-01T12:00:05.000Z' })
  t.same(
    (await repo.parts('upl_1')).map((p) => [p.part_number, p.size_bytes, p.sha256]),
    [
      [1, 6 * 1024 ** 3, 'b'],
      [2, 7, 'c'],
    ],
  )
  t.same(await repo.expiredUploads(AT), ['upl_2'])
  await db.kysely.transaction().execute((tx) => repo.deleteUpload('upl_1', tx))
  t.same(await repo.parts('upl_1'), [])
  t.equal(await repo.upload('ws_1', 'upl_1'), undefined)

  // The signing secret: the first value kept wins for every later caller.
  t.equal(await repo.secret('media_url', 'aa', AT), 'aa')
  t.equal(await repo.secret('media_url', 'bb', AT), 'aa')
})

const rule = (id: string, over: Partial<AlertRuleRow> = {}): AlertRuleRow => ({
  id,
  workspace_id: 'ws_1',
  name: `Rule ${id}`,
  trigger_code: 'connection-lost',
  config: JSON.stringify({ codes: ['connection-lost'], scopeKind: 'workspace', scopeId: 'ws_1' }),
  scope_id: 'ws_1',
  webhook_secret: 'secret',
  enabled: 1,
  node_id: null,
  created_at: AT,
  updated_at: AT,
  deleted_at: null,
  ...over,
})

const event = (id: string, over: Partial<AlertEventRow> = {}): AlertEventRow => ({
  id,
  workspace_id: 'ws_1',
  rule_id: 'alr_1',
  code: 'connection-lost',
  severity: 'critical',
  screen_id: 'scr_1',
  screen_name: 'Lobby',
  node_id: 'nod_a',
  message: 'offline',
  next_action: '',
  opened_at: AT,
  closed_at: null,
  detail: null,
  ...over,
})

eachEngine(t, 'alert repository', async (t, db) => {
  await workspaceWithNodes(db)
  const repo = new AlertRepository(db.kysely)
  await repo.insertRule(rule('alr_1'))
  await repo.insertRule(rule('alr_2', { node_id: 'nod_a', name: 'Lobby WATCH' }))
  await repo.insertRule(rule('alr_3', { scope_id: 'nod_b', config: JSON.stringify({ codes: ['display-off'], scopeKind: 'location', scopeId: 'nod_b' }) }))
  await repo.insertRule(rule('alr_4', { scope_id: 'nod_b', deleted_at: AT }))
  await repo.insertRule(rule('alr_5', { enabled: 0 }))
  t.equal(await repo.countAtNode('ws_1', 'nod_a'), 1, 'homed there')
  t.equal(await repo.countAtNode('ws_1', 'nod_b'), 1, 'scoped there; the deleted rule does not count')
  t.equal(typeof (await repo.countAtNode('ws_1', 'nod_b')), 'number')
  t.equal(await repo.countAtNode('ws_1', 'nod_zzz'), 0)
  t.same(
    (await repo.activeRules('ws_1')).map((r) => r.id),
    ['alr_1', 'alr_2', 'alr_3'],
  )
  t.same(
    (await repo.rules('ws_1', null, 'watch', page(null))).map((r) => r.id),
    ['alr_2'],
    'search ignores case',
  )
  t.same(
    (await repo.rules('ws_1', ['nod_a'], undefined, page(null))).map((r) => r.id),
    ['alr_2'],
    'a pinned credential sees rules homed in its subtree',
  )
  t.equal(await repo.countRules('ws_1', null), 4)
  t.equal(await repo.rule('ws_1', 'alr_4', null), undefined, 'a deleted rule is gone from reads')
  t.ok(await repo.ruleById('alr_4'), '…but the evaluator still finds it by id')
  t.equal((await repo.rule('ws_1', 'alr_1', null))!.enabled, 1, 'booleans read back as the number 1')

  // One open event per rule and screen, on both engines.
  await repo.insertEvent(event('ale_1'))
  const dup = await repo.insertEvent(event('ale_2')).then(
    () => null,
    (e: unknown) => e,
  )
  t.ok(isUniqueViolation(dup), 'a second open event for the rule and screen is a unique violation')
  await repo.insertEvent(event('ale_3', { rule_id: 'alr_2' }))
  t.same(
    (await repo.openEvents('ws_1', 'scr_1', 'connection-lost')).map((e) => e.id),
    ['ale_1', 'ale_3'],
  )
  t.same(
    (await repo.openEvents('ws_1', 'scr_1', 'connection-lost', 'alr_2')).map((e) => e.id),
    ['ale_3'],
  )
  t.ok(await repo.closeEvent('ale_1', '2026-06-01T12:05:00.000Z', '{"kind":"recovery"}'))
  t.notOk(await repo.closeEvent('ale_1', '2026-06-01T12:06:00.000Z', '{}'), 'closed once')
  await repo.insertEvent(event('ale_4'))
  t.pass('after closing, the same rule and screen may open again')
  t.equal(await repo.closeRuleEvents('alr_2', AT, '{}'), 1)
  t.same(
    (await repo.events('ws_1', null, { state: 'open' }, page(null))).map((e) => e.id),
    ['ale_4'],
  )
  t.same(
    (await repo.events('ws_1', null, { state: 'closed' }, page(null))).map((e) => e.id),
    ['ale_3', 'ale_1'],
  )
  t.equal(await repo.countEvents('ws_1', ['nod_b'], {}), 0, 'scoped to node_id')
  t.equal(await repo.countEvents('ws_1', ['nod_a'], { ruleId: 'alr_1' }), 2)
  t.equal((await repo.eventIn('ws_1', 'ale_4', ['nod_b'])) ?? null, null)

  // Per-screen state: the upsert replaces every column but the key.
  await repo.putScreenStates([
    { workspace_id: 'ws_1', screen_id: 'scr_1', screen_name: 'A', node_id: null, status: 'offline', since: AT, flaps: '[]' },
    { workspace_id: 'ws_1', screen_id: 'scr_2', screen_name: 'B', node_id: null, status: 'online', since: AT, flaps: '[]' },
  ])
  await repo.putScreenStates([
    {
      workspace_id: 'ws_1',
      screen_id: 'scr_1',
      screen_name: 'A2',
      node_id: 'nod_a',
      status: 'offline',
      since: '2026-06-01T12:01:00.000Z',
      flaps: '["x"]',
    },
  ])
  t.same(await repo.screenState('ws_1', 'scr_1'), {
    workspace_id: 'ws_1',
    screen_id: 'scr_1',
    screen_name: 'A2',
    node_id: 'nod_a',
    status: 'offline',
    since: '2026-06-01T12:01:00.000Z',
    flaps: '["x"]',
  })
  // A rename is the state read back and written with the new name and place (several at once).
  const states = await repo.screenStates('ws_1', ['scr_1', 'scr_2', 'scr_none'])
  t.same([...states.keys()].sort(), ['scr_1', 'scr_2'], 'screens without a state are absent')
  await repo.putScreenStates([
    { ...states.get('scr_1')!, screen_name: 'A3', node_id: null },
    { ...states.get('scr_2')!, screen_name: 'B2' },
  ])
  t.match(await repo.screenState('ws_1', 'scr_1'), { screen_name: 'A3', node_id: null, status: 'offline' })
  t.match(await repo.screenState('ws_1', 'scr_2'), { screen_name: 'B2', status: 'online' })
  t.same(
    (await repo.offlineScreens()).map((s) => s.screen_id),
    ['scr_1'],
  )
  await repo.deleteScreenState('ws_1', 'scr_1')
  t.same(await repo.offlineScreens('ws_1'), [])
})

eachEngine(
  t,
  'rules written before the scope column get it from their config',
  async (t, db) => {
    const all = await loadMigrations()
    await migrate(
      db,
      all.filter((m) => m.version < 100),
    )
    await workspaceWithNodes(db)
    const insert = (id: string, config: object) =>
      db.kysely
        .insertInto('alert_rules')
        // The pre-0100 shape: no scope_id column yet.
        .values({
          id,
          workspace_id: 'ws_1',
          name: id,
          trigger_code: 'display-off',
          config: JSON.stringify(config),
          webhook_secret: 's',
          node_id: null,
          created_at: AT,
          updated_at: AT,
        } as never)
        .execute()
    await insert('alr_old1', { codes: ['display-off'], scopeKind: 'location', scopeId: 'nod_b', thresholds: {}, channels: ['in-app'] })
    // A text search would also have matched this one: the id appears in a value, not as the scope.
    await insert('alr_old2', { codes: ['display-off'], scopeKind: 'workspace', scopeId: 'ws_1', name: '"scopeId":"nod_b"' })
    await migrate(db, all)
    const repo = new AlertRepository(db.kysely)
    t.equal((await repo.ruleById('alr_old1'))!.scope_id, 'nod_b')
    t.equal((await repo.ruleById('alr_old2'))!.scope_id, 'ws_1')
    t.equal(await repo.countAtNode('ws_1', 'nod_b'), 1)
  },
  { migrate: false },
)

eachEngine(t, 'status repository', async (t, db) => {
  const repo = new StatusRepository(db.kysely)
  await repo.ping()
  const m = (id: string, at: string, state: string, dbMs: number | null) => ({
    id,
    measured_at: at,
    state,
    db_ok: 1,
    db_latency_ms: dbMs,
    broker_ok: 1,
    broker_latency_ms: 0.25,
    detail: null,
  })
  await repo.insertMeasurement(m('msr_1', '2026-05-31T23:59:59.999Z', 'degraded', 612.5))
  await repo.insertMeasurement(m('msr_2', '2026-06-01T00:00:00.000Z', 'operational', 3.75))
  await repo.insertMeasurement(m('msr_3', '2026-01-01T00:00:00.000Z', 'outage', null))
  const last = (await repo.latestMeasurement())!
  t.equal(last.id, 'msr_2', 'the latest by time')
  t.equal(last.db_latency_ms, 3.75, 'REAL latency reads back as a number')
  t.equal(last.broker_latency_ms, 0.25)
  t.equal(last.db_ok, 1)
  t.same((await repo.measurementsSince('2026-05-31T00:00:00.000Z')).map((r) => r.measured_at).sort(), ['2026-05-31T23:59:59.999Z', '2026-06-01T00:00:00.000Z'])
  t.equal(await repo.deleteMeasurementsBefore('2026-05-31T23:59:59.999Z'), 1, 'strictly before')

  const inc = (id: string, started: string, resolved: string | null) => ({
    id,
    title: id,
    status: resolved ? 'resolved' : 'investigating',
    impact: 'degraded',
    screens_playing: 1,
    started_at: started,
    resolved_at: resolved,
  })
  await db.kysely
    .transaction()
    .execute((tx) => repo.insertIncident(inc('inc_1', AT, null), { id: 'iu_1', incident_id: 'inc_1', at: AT, status: 'investigating', message: 'looking' }, tx))
  await repo.insertIncident(inc('inc_2', '2026-05-20T00:00:00.000Z', null), {
    id: 'iu_2',
    incident_id: 'inc_2',
    at: '2026-05-20T00:00:00.000Z',
    status: 'investigating',
    message: 'm',
  })
  await repo.updateIncident(
    'inc_2',
    { status: 'resolved', impact: 'outage', screens_playing: 0, resolved_at: '2026-05-25T00:00:00.000Z' },
    { id: 'iu_3', incident_id: 'inc_2', at: '2026-05-25T00:00:00.000Z', status: 'resolved', message: 'fixed' },
  )
  await repo.insertIncident(inc('inc_3', '2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z'), {
    id: 'iu_4',
    incident_id: 'inc_3',
    at: '2026-01-01T00:00:00.000Z',
    status: 'resolved',
    message: 'old',
  })
  t.same(
    (await repo.openIncidents()).map((i) => i.id),
    ['inc_1'],
  )
  t.same(
    (await repo.resolvedSince('2026-05-25T00:00:00.000Z')).map((i) => i.id),
    ['inc_2'],
    'resolved at the bound is included',
  )
  t.same(
    (await repo.activeSince('2026-03-01T00:00:00.000Z')).map((i) => i.id),
    ['inc_1', 'inc_2'],
  )
  t.same(
    (await repo.incidents()).map((i) => i.id),
    ['inc_1', 'inc_2', 'inc_3'],
  )
  t.match(await repo.incident('inc_2'), { impact: 'outage', screens_playing: 0 })
  t.same(await repo.updates('inc_2'), [
    { at: '2026-05-20T00:00:00.000Z', status: 'investigating', message: 'm' },
    { at: '2026-05-25T00:00:00.000Z', status: 'resolved', message: 'fixed' },
  ])
})

eachEngine(t, 'mail repository', async (t, db) => {
  const repo = new MailRepository(db.kysely)
  const mail = (id: string, ws: string | null, at: string) => ({ id, workspace_id: ws, to_addresses: '["a@b.c"]', subject: 's', body: 'b', created_at: at })
  await repo.insert(mail('mail_2', 'ws_1', '2026-06-01T00:00:01.000Z'))
  await repo.insert(mail('mail_1', 'ws_1', '2026-06-01T00:00:01.000Z'))
  await repo.insert(mail('mail_0', 'ws_1', '2026-05-01T00:00:00.000Z'))
  await repo.insert(mail('mail_9', null, AT))
  t.same(
    (await repo.forWorkspace('ws_1')).map((m) => m.id),
    ['mail_0', 'mail_1', 'mail_2'],
    'oldest first, id within the same time',
  )
  await repo.markSent('mail_0', '2026-05-01T00:00:00.000Z')
  await repo.markSent('mail_1', AT)
  await repo.markFailed('mail_2', 'refused')
  t.match(await repo.byId('mail_2'), { sent_at: null, error: 'refused' })
  const n = await repo.purgeSentBefore('2026-05-02T00:00:00.000Z')
  t.equal(n, 1, 'only mail sent before the cutoff; unsent mail stays')
  t.equal(typeof n, 'number')
  t.same(
    (await repo.forWorkspace('ws_1')).map((m) => m.id),
    ['mail_1', 'mail_2'],
  )
})

eachEngine(t, 'screens due for a media URL refresh', async (t, db) => {
  await workspaceWithNodes(db)
  const screen = (id: string, version: number, published: string | null) =>
    db.kysely
      .insertInto('screens')
      .values({ id, workspace_id: 'ws_1', name: id, created_at: AT, updated_at: AT, desired_version: version, desired_published_at: published } as never)
      .execute()
  await screen('scr_1', 3, '2026-05-28T00:00:00.000Z')
  await screen('scr_2', 1, '2026-05-20T00:00:00.000Z')
  await screen('scr_3', 2, null)
  await screen('scr_4', 0, null)
  await screen('scr_5', 2, '2026-05-29T00:00:00.000Z')
  const repo = new ScreenRepository(db.kysely)
  const due = (await repo.publishedBefore('2026-05-29T00:00:00.000Z', 10)).map((s) => s.id)
  t.same(due, ['scr_3', 'scr_2', 'scr_1'], 'never published first, then oldest publication; no desired state or at the cutoff: not due')
  t.equal((await repo.publishedBefore('2026-05-29T00:00:00.000Z', 1)).length, 1)
})
