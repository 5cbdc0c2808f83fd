// The identity and screen repositories on both engines: counts and versions come back as
// numbers, timestamps as the ISO text written, a duplicate is a unique violation the
// services map to 409, conditional updates report whether they won, and the recursive
// key-tree queries walk the same chain on SQLite and PostgreSQL.
import t from 'tap'
import { eachEngine } from './engines.js'
import { isUniqueViolation } from '../../src/platform/db/Database.js'
import { ApiKeyRepository, type ApiKeyRecord } from '../../src/domains/access/ApiKeyRepository.js'
import { IdempotencyRepository } from '../../src/platform/http/IdempotencyRepository.js'
import { PairingRepository } from '../../src/domains/screens/PairingRepository.js'
import { ScreenRepository } from '../../src/domains/screens/ScreenRepository.js'
import { WorkspaceRepository } from '../../src/domains/account/WorkspaceRepository.js'

const T0 = '2026-06-01T12:00:00.000Z'
const T1 = '2026-06-01T12:00:01.000Z'
const T2 = '2026-06-01T12:00:02.000Z'

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p
  } catch (e) {
    return e
  }
  return null
}

const key = (id: string, createdBy: string, extra: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
  id,
  workspace_id: 'ws_1',
  name: id,
  preview: `pv_${id}`,
  secret_hash: `h_${id}`,
  permissions: '"all"',
  node_id: null,
  created_by: createdBy,
  expires_at: null,
  revoked_at: null,
  last_used_at: null,
  created_at: T0,
  ...extra,
})

eachEngine(t, 'workspaces and API keys', async (t, db) => {
  const workspaces = new WorkspaceRepository(db.kysely)
  t.equal(await workspaces.count(), 0)
  await workspaces.insert({ id: 'ws_1', name: 'One', region: 'us', created_at: T0 })
  t.match(await workspaces.byId('ws_1'), { id: 'ws_1', status: 'active', rate_limit: null, created_at: T0 })
  t.equal(await workspaces.count(), 1, 'a number')
  t.ok(
    isUniqueViolation(await rejection(workspaces.insert({ id: 'ws_1', name: 'Again', region: 'us', created_at: T0 }))),
    'a duplicate id is a unique violation',
  )

  const keys = new ApiKeyRepository(db.kysely)
  // root → child → grandchild, and a sibling of child.
  await keys.insert(key('key_root', 'bootstrap'))
  await keys.insert(key('key_child', 'apikey:key_root', { expires_at: T2 }))
  await keys.insert(key('key_grand', 'apikey:key_child'))
  await keys.insert(key('key_other', 'apikey:key_root'))
  t.ok(isUniqueViolation(await rejection(keys.insert(key('key_root', 'bootstrap')))))
  t.equal(await keys.count('ws_1', null), 4)
  t.equal(await keys.count('ws_1', []), 0, 'an empty reach sees nothing')
  t.same(
    (await keys.list('ws_1', null, { limit: 2, after: null, count: false })).map((k) => k.id),
    ['key_root', 'key_other', 'key_grand'],
    'newest (highest id) first, limit + 1 rows',
  )
  t.same(
    (await keys.ancestors('key_child')).map((a) => a.id),
    ['key_child', 'key_root'],
    'the chain above key_grand, nearest first',
  )
  t.equal((await keys.ancestors('key_child'))[0]!.expires_at, T2)
  t.same(await keys.ancestors('key_gone'), [])

  await keys.revokeTree('key_child', T1)
  const revoked = Object.fromEntries((await keys.list('ws_1', null, { limit: null, after: null, count: false })).map((k) => [k.id, k.revoked_at]))
  t.same(revoked, { key_root: null, key_child: T1, key_grand: T1, key_other: null }, 'the key and its subtree, nothing else')
  await keys.revokeTree('key_root', T2)
  t.equal((await keys.byId('key_child'))!.revoked_at, T1, 'an earlier revocation is kept')

  t.equal(await keys.countAtNode('ws_1', 'node_x'), 0, 'a number')
  t.same(
    (await keys.byPreview('pv_key_other')).map((k) => k.id),
    ['key_other'],
  )
  t.notOk('preview' in (await keys.authById('key_other'))!, 'authentication reads only what it needs')

  await keys.touchLastUsed([['key_root', T1]])
  await keys.touchLastUsed([['key_root', T0]])
  t.equal((await keys.byId('key_root'))!.last_used_at, T1, 'never moved backwards')
  await keys.setSecret('key_root', 'pv_new', 'h_new')
  t.match(await keys.byId('key_root'), { preview: 'pv_new', secret_hash: 'h_new' })
})

eachEngine(t, 'idempotency keys', async (t, db) => {
  await new WorkspaceRepository(db.kysely).insert({ id: 'ws_1', name: 'One', region: 'us', created_at: T0 })
  const repo = new IdempotencyRepository(db.kysely)
  const scope = { workspaceId: 'ws_1', credential: 'apikey:key_a', route: 'POST /v1/nodes', key: 'k1' }
  await repo.claim(scope, 'fp', T0)
  const second = await rejection(repo.claim(scope, 'fp', T0))
  t.ok(isUniqueViolation(second), 'a second claim of the same key is a unique violation (409 idempotency_in_progress)')
  t.notOk(isUniqueViolation(await rejection(repo.claim({ ...scope, route: 'POST /v1/screens/pair' }, 'fp', T0))), 'another route may use it')
  const other = { ...scope, credential: 'apikey:key_b' }
  t.notOk(isUniqueViolation(await rejection(repo.claim(other, 'fp2', T0))), 'another credential may use it')
  t.equal((await repo.find(other))?.fingerprint, 'fp2', 'each credential finds its own record')
  await repo.release(other)
  t.equal((await repo.find(scope))?.fingerprint, 'fp', "releasing one credential's key leaves the other's")
  t.match(await repo.find(scope), { state: 'running', status_code: null, body: null, created_at: T0 })
  await repo.complete(scope, 201, '{"data":{}}')
  const done = (await repo.find(scope))!
  t.equal(done.status_code, 201)
  t.equal(typeof done.status_code, 'number', 'the status code is a number on both engines')
  t.equal(done.state, 'done')
  await repo.release(scope)
  t.equal(await repo.find(scope), undefined)
  t.equal(await repo.purgeBefore(T1), 1, 'the other route’s record, counted as a number')
})

eachEngine(t, 'screens and pairing registrations', async (t, db) => {
  await new WorkspaceRepository(db.kysely).insert({ id: 'ws_1', name: 'One', region: 'us', created_at: T0 })
  const screens = new ScreenRepository(db.kysely)
  const ids = Array.from({ length: 450 }, (_, i) => `scr_${String(i).padStart(4, '0')}`)
  for (const id of ids)
    await screens.insert({ id, workspace_id: 'ws_1', node_id: null, name: id, model: null, serial_number: null, created_at: T0, updated_at: T0 })
  t.ok(
    isUniqueViolation(
      await rejection(
        screens.insert({ id: ids[0]!, workspace_id: 'ws_1', node_id: null, name: 'x', model: null, serial_number: null, created_at: T0, updated_at: T0 }),
      ),
    ),
  )
  t.equal(await screens.count('ws_1', null), 450)
  const page = await screens.listJson(db.dialect, 'ws_1', null, { limit: 2, after: ids[0]!, count: false })
  const items = JSON.parse(page.data) as Record<string, unknown>[]
  t.same(
    items.map((s) => s.id),
    ids.slice(1, 3),
    'ascending after the cursor, limit rows',
  )
  t.same(page, { data: page.data, ids: ids.slice(1, 3), count: 2, lastId: ids[2], more: true }, 'the page says more follow, and which screens it holds')
  t.same(
    Object.keys(items[0]!).sort(),
    [
      'agentVersion',
      'contentId',
      'contentKind',
      'contentName',
      'drift',
      'id',
      'lastScreenshot',
      'lastSeenAt',
      'name',
      'nodeId',
      'playing',
      'playingName',
      'playingThumbnailUrl',
      'status',
      'tags',
    ],
    'only the list fields',
  )
  t.equal(items[0]!.status, 'offline')
  const last = await screens.listJson(db.dialect, 'ws_1', null, { limit: 5, after: ids[446]!, count: false })
  t.same([last.count, last.lastId, last.more, last.ids], [3, ids[449], false, ids.slice(447)], 'the last page says none follow')
  // Drift: stored on the row, the item carries it as an object, the list filters on it.
  const items2 = [{ field: 'panel.power', desired: 'on', reported: 'off', since: '2026-06-01T12:00:00.000Z' }]
  await screens.setDrift('ws_1', ids[7]!, { drift_state: 'drifting', drift_since: '2026-06-01T12:00:00.000Z', drift_items: JSON.stringify(items2) })
  const drifting = await screens.listJson(db.dialect, 'ws_1', null, { limit: 10, after: null, count: false }, { drift: 'drifting' })
  const listed = JSON.parse(drifting.data) as Record<string, unknown>[]
  t.same(
    listed.map((x) => [x.id, x.drift]),
    [[ids[7], { state: 'drifting', since: '2026-06-01T12:00:00.000Z', items: items2 }]],
    'only the drifting screen, its drift an object',
  )
  t.equal(await screens.count('ws_1', null, { drift: 'drifting' }), 1)
  t.equal(await screens.count('ws_1', null, { drift: 'unknown' }), 449)
  t.same(JSON.parse((await screens.listJson(db.dialect, 'ws_1', null, { limit: 1, after: null, count: false })).data)[0].drift, {
    state: 'unknown',
    since: null,
    items: [],
  })
  const none = await screens.listJson(db.dialect, 'ws_1', [], { limit: null, after: null, count: false })
  t.same([none.data, none.count, none.more, none.ids], ['[]', 0, false, []], 'an empty scope: an empty array')

  // More screens than one IN list: every one is assigned.
  await screens.setAssignment('ws_1', ids, { kind: 'playlist', id: 'pl_1' }, T1)
  t.equal(await screens.countAssigned('ws_1', 'playlist', 'pl_1'), 450)
  t.same(await screens.assignedAny('ws_1', ['pl_1']), ids)
  t.match(await screens.assignmentOf('ws_1', ids[449]!), { content_kind: 'playlist', content_id: 'pl_1' })
  const v = await screens.desiredVersion('ws_1', ids[0]!)
  t.equal(v, 0)
  t.equal(typeof v, 'number')

  await screens.setPanel('ws_1', ids[0]!, { panel_protocol: 'samsung-mdc', panel_set_id: 3, panel_poll_seconds: 30, panel_port_hint: '/dev/ttyUSB0' }, T1)
  t.same(
    await screens.panel('ws_1', ids[0]!),
    { panel_protocol: 'samsung-mdc', panel_set_id: 3, panel_poll_seconds: 30, panel_port_hint: '/dev/ttyUSB0' },
    'integers as numbers',
  )
  t.equal(await screens.panel('ws_2', ids[0]!), undefined, 'another workspace sees nothing')

  const pairing = new PairingRepository(db.kysely)
  const reg = { id: 'reg_1', pairing_code: 'ABC234', poll_secret_hash: 'h', model: null, serial_number: null, created_at: T0, expires_at: T2 }
  await pairing.insert(reg)
  t.ok(await pairing.codeTaken('ABC234', T1))
  t.notOk(await pairing.codeTaken('ABC234', T2), 'expired codes are free again')
  t.equal((await pairing.claimable('ABC234', T1))?.id, 'reg_1')
  t.equal(await pairing.claim('reg_1', { workspace_id: 'ws_1', screen_id: ids[0]!, claimed_at: T1 }), true)
  t.equal(await pairing.claim('reg_1', { workspace_id: 'ws_1', screen_id: ids[1]!, claimed_at: T1 }), false, 'claimed once')
  t.equal(await pairing.claimable('ABC234', T1), undefined)
  t.equal(await pairing.markSecretIssued('reg_1', T1), true)
  t.equal(await pairing.markSecretIssued('reg_1', T2), false, 'the device secret is handed out once')
  await screens.setDeviceSecretHash(ids[0]!, 'dev_hash', T1)
  t.equal(await screens.credentialHash(ids[0]!), 'dev_hash')
  await pairing.insert({ ...reg, id: 'reg_2', pairing_code: 'XYZ789', expires_at: T0 })
  t.equal(await pairing.purgeUnclaimedBefore(T1), 1)
  await pairing.deleteForScreen(ids[0]!)
  await screens.delete('ws_1', ids[0]!)
  t.equal(await screens.byId('ws_1', ids[0]!), undefined)
  t.equal(await screens.count('ws_1', null), 449)
})
