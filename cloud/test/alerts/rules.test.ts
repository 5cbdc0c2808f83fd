// /v1/alert-rules: CRUD, paging and search, config validation, the URL masking round trip,
// permissions and pinned keys.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { build, makeKey } from '../helpers.js'
import { pairScreen } from '../screenHelpers.js'

const HOOK = 'https://hooks.example.com/services/T0001/B0002/abcdefghijklmnopWXYZ'
const CHAT = 'https://chat.example.com/workflows/123456/triggers/secret-token-9876'

const rule = (over: Record<string, unknown> = {}) => ({
  name: 'Lobby offline',
  config: {
    codes: ['connection-lost'],
    severity: 'critical',
    scopeKind: 'workspace',
    thresholds: { minutes: 10 },
    channels: ['in-app', 'email', 'webhook', 'chat'],
    recipients: ['ops@example.com', 'role:owner', HOOK],
    chatUrls: [CHAT],
    custom: { kept: true },
  },
  ...over,
})

// The tests share one app, each in a workspace of its own (the rules, nodes and screens it reads are that workspace's).
t.test('alert rules over HTTP, on one app', async (t) => {
  const shared = await build(t)
  t.test('create, get, list, patch, delete (soft)', async (t) => {
    const h = shared
    const { apiKey, workspaceId } = await h.workspace()
    const res = await h.req('POST', '/v1/alert-rules', apiKey, rule())
    t.equal(res.statusCode, 201, res.body)
    const r = res.json().data
    t.match(r.id, /^alr_/)
    t.equal(r.spaceId, workspaceId)
    t.equal(r.trigger, 'connection-lost')
    t.equal(r.enabled, true)
    t.equal(r.nodeId, null)
    t.equal(r.deletedAt, null)
    t.match(r.webhookSecret, /^[0-9a-f]{64}$/)
    t.equal(r.webhookSecretPreview, r.webhookSecret.slice(0, 8))
    t.equal(r.config.scopeId, workspaceId, 'workspace scope defaults to the workspace id')
    t.same(r.config.custom, { kept: true }, 'other config keys pass through')
    t.same(r.config.thresholds, { minutes: 10 })

    const got = (await h.req('GET', `/v1/alert-rules/${r.id}`, apiKey)).json().data
    t.notOk('webhookSecret' in got)
    t.same(got.config, r.config)

    for (let i = 0; i < 3; i++) await h.req('POST', '/v1/alert-rules', apiKey, rule({ name: `Storage ${i}`, config: { codes: ['storage-critical'] } }))
    const list = (await h.req('GET', '/v1/alert-rules?count=1', apiKey)).json()
    t.equal(list.data.length, 4)
    t.equal(list.total, 4)
    t.equal(list.nextCursor, null)
    t.equal(list.data[3].id, r.id, 'newest first')
    const page1 = (await h.req('GET', '/v1/alert-rules?limit=2', apiKey)).json()
    t.equal(page1.data.length, 2)
    const page2 = (await h.req('GET', `/v1/alert-rules?limit=2&cursor=${page1.nextCursor}`, apiKey)).json()
    t.equal(page2.data.length, 2)
    t.equal(page2.nextCursor, null)
    t.equal((await h.req('GET', '/v1/alert-rules?search=storage', apiKey)).json().data.length, 3)
    t.equal((await h.req('GET', '/v1/alert-rules?limit=501', apiKey)).statusCode, 422)

    const p = (await h.req('PATCH', `/v1/alert-rules/${r.id}`, apiKey, { name: 'Renamed', enabled: false })).json().data
    t.equal(p.name, 'Renamed')
    t.equal(p.enabled, false)
    t.same(p.config, r.config, 'config untouched')

    const del = await h.req('DELETE', `/v1/alert-rules/${r.id}`, apiKey)
    t.same(del.json(), { data: { id: r.id, deleted: true } })
    t.equal((await h.req('GET', `/v1/alert-rules/${r.id}`, apiKey)).statusCode, 404)
    t.equal((await h.req('GET', '/v1/alert-rules', apiKey)).json().data.length, 3, 'deleted rules are not listed')
    const row = await servicesOf(h.app).db.get<{ deleted_at: string | null }>('SELECT deleted_at FROM alert_rules WHERE id = ?', [r.id])
    t.ok(row?.deleted_at, 'kept with deletedAt')
  })

  t.test('config validation', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const node = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Store', kind: 'location' })).json().data
    const bad: [unknown, number, string][] = [
      [{ name: 'x', config: { codes: [] } }, 422, 'validation_error'],
      [{ name: 'x', config: {} }, 422, 'validation_error'],
      [{ name: 'x', config: { codes: ['on-fire'] } }, 422, 'validation_error'],
      [{ name: 'x', trigger: 'display-off', config: { codes: ['connection-lost', 'display-off'] } }, 422, 'validation_error'],
      [{ name: 'x', config: { codes: ['display-off'], scopeKind: 'galaxy' } }, 422, 'validation_error'],
      [{ name: 'x', config: { codes: ['display-off'], scopeKind: 'location' } }, 422, 'validation_error'],
      [{ name: 'x', config: { codes: ['display-off'], scopeKind: 'location', scopeId: 'node_nope' } }, 422, 'invalid_node'],
      [{ name: 'x', config: { codes: ['display-off'], scopeKind: 'org_unit', scopeId: node.id } }, 422, 'invalid_node'],
      [{ name: 'x', config: { codes: ['display-off'], channels: ['pager'] } }, 422, 'validation_error'],
      [{ name: 'x', config: { codes: ['display-off'], severity: 'apocalyptic' } }, 422, 'validation_error'],
      [{ name: 'x', config: { codes: ['display-off'], thresholds: { minutes: -1 } } }, 422, 'validation_error'],
      [{ name: 'x', config: { codes: ['display-off'], recipients: ['not an address'] } }, 422, 'validation_error'],
      [{ name: 'x', config: { codes: ['display-off'], recipients: ['http://hooks.example.com/x'] } }, 400, 'unsafe_url'],
      [{ name: 'x', config: { codes: ['display-off'], recipients: ['https://10.0.0.1/x'] } }, 400, 'unsafe_url'],
      [{ name: 'x', config: { codes: ['display-off'], chatUrls: ['https://localhost/x'] } }, 400, 'unsafe_url'],
      [{ name: 'x', config: { codes: ['display-off'], chatUrls: ['https://chat.example.com/••••abcd'] } }, 422, 'validation_error'],
      [{ name: '  ', config: { codes: ['display-off'] } }, 422, 'validation_error'],
      [{ config: { codes: ['display-off'] } }, 422, 'validation_error'],
    ]
    for (const [body, status, code] of bad) {
      const res = await h.req('POST', '/v1/alert-rules', apiKey, body)
      t.equal(res.statusCode, status, JSON.stringify(body))
      t.equal(res.json().error, code, JSON.stringify(body))
    }
    const ok = await h.req('POST', '/v1/alert-rules', apiKey, {
      name: 'ok',
      trigger: 'display-off',
      config: { codes: ['display-off', 'storage-critical'], scopeKind: 'location', scopeId: node.id },
    })
    t.equal(ok.statusCode, 201)
    t.equal(ok.json().data.config.severity, 'warning', 'severity defaults by trigger')
    t.same(ok.json().data.config.channels, ['in-app'], 'in-app by default')
    const del = await h.req('DELETE', `/v1/nodes/${node.id}`, apiKey)
    t.equal(del.statusCode, 409, 'a node a rule is scoped to cannot be deleted')
  })

  t.test('masking: host and last four only; masked values round-trip, full URLs replace', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const r = (await h.req('POST', '/v1/alert-rules', apiKey, rule())).json().data
    const masked = r.config.recipients[2] as string
    t.equal(masked.startsWith('https://hooks.example.com/'), false, 'the path is not shown')
    t.match(masked, /^https:\/\/hooks\.example\.com•+WXYZ$/)
    t.notOk(JSON.stringify(r).includes('abcdefgh'), 'no secret part in the answer')
    t.match(r.config.chatUrls[0], /^https:\/\/chat\.example\.com•+9876$/)
    t.same(r.config.recipients.slice(0, 2), ['ops@example.com', 'role:owner'], 'addresses are not masked')
    const listed = (await h.req('GET', '/v1/alert-rules', apiKey)).json().data[0]
    t.same(listed.config, r.config, 'masked in lists too')

    // Send the answer back unchanged: the stored URLs are kept.
    const same = await h.req('PATCH', `/v1/alert-rules/${r.id}`, apiKey, { config: r.config })
    t.equal(same.statusCode, 200, same.body)
    const stored = await servicesOf(h.app).db.get<{ config: string }>('SELECT config FROM alert_rules WHERE id = ?', [r.id])
    const c = JSON.parse(stored!.config)
    t.equal(c.recipients[2], HOOK, 'webhook URL kept')
    t.same(c.chatUrls, [CHAT], 'chat URL kept')

    // A full URL replaces; a masked one that matches nothing is refused.
    const NEW = 'https://chat.example.com/workflows/999/triggers/another-token-1111'
    const rep = (await h.req('PATCH', `/v1/alert-rules/${r.id}`, apiKey, { config: { ...r.config, chatUrls: [NEW] } })).json().data
    t.match(rep.config.chatUrls[0], /1111$/)
    t.same(JSON.parse((await servicesOf(h.app).db.get<{ config: string }>('SELECT config FROM alert_rules WHERE id = ?', [r.id]))!.config).chatUrls, [NEW])
    const wrong = await h.req('PATCH', `/v1/alert-rules/${r.id}`, apiKey, { config: { ...r.config, chatUrls: [r.config.chatUrls[0]] } })
    t.equal(wrong.statusCode, 422, 'the old mask no longer matches a stored URL')
    // Changing only the name leaves every URL as stored.
    await h.req('PATCH', `/v1/alert-rules/${r.id}`, apiKey, { name: 'n', trigger: 'connection-lost' })
    t.equal(JSON.parse((await servicesOf(h.app).db.get<{ config: string }>('SELECT config FROM alert_rules WHERE id = ?', [r.id]))!.config).recipients[2], HOOK)
  })

  t.test('permissions and pinned keys', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const shop = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Shop' })).json().data
    const other = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Other' })).json().data
    const atRoot = (await h.req('POST', '/v1/alert-rules', apiKey, rule())).json().data
    const viewer = await makeKey(h, apiKey, ['alert.view'])
    t.equal((await h.req('GET', '/v1/alert-rules', viewer.secret)).statusCode, 200)
    t.equal((await h.req('GET', '/v1/alert-events', viewer.secret)).statusCode, 200)
    const no = await h.req('POST', '/v1/alert-rules', viewer.secret, rule())
    t.equal(no.statusCode, 403)
    t.equal(no.json().message, 'Missing permission: alert.edit')
    t.equal((await h.req('DELETE', `/v1/alert-rules/${atRoot.id}`, viewer.secret)).statusCode, 403)
    const pinned = await makeKey(h, apiKey, 'all', shop.id)
    const mine = (await h.req('POST', '/v1/alert-rules', pinned.secret, rule({ name: 'Shop rule' }))).json().data
    t.equal(mine.nodeId, shop.id, 'a pinned key homes rules at its node')
    t.same(
      (await h.req('GET', '/v1/alert-rules', pinned.secret)).json().data.map((r: { id: string }) => r.id),
      [mine.id],
      'sees only its subtree',
    )
    t.equal((await h.req('GET', `/v1/alert-rules/${atRoot.id}`, pinned.secret)).statusCode, 404)
    t.equal((await h.req('POST', '/v1/alert-rules', pinned.secret, rule({ nodeId: other.id }))).json().error, 'invalid_node')
  })

  t.test('PATCH config merges into the stored config: untouched keys, thresholds and custom keys pass through', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const r = (await h.req('POST', '/v1/alert-rules', apiKey, rule())).json().data
    const res = await h.req('PATCH', `/v1/alert-rules/${r.id}`, apiKey, { config: { severity: 'warning', thresholds: { percent: 80 }, extra: 'x' } })
    t.equal(res.statusCode, 200)
    const c = res.json().data.config
    t.equal(c.severity, 'warning')
    t.same(c.thresholds, { minutes: 10, percent: 80 }, 'thresholds merge key by key')
    t.same(c.custom, { kept: true }, 'custom keys are kept')
    t.equal(c.extra, 'x')
    t.same(c.codes, ['connection-lost'])
    t.same(c.recipients, r.config.recipients, 'masked URLs stay the stored ones')
    t.same(c.chatUrls, r.config.chatUrls)
    // null removes a key; arrays replace.
    const again = (await h.req('PATCH', `/v1/alert-rules/${r.id}`, apiKey, { config: { custom: null, channels: ['in-app'] } })).json().data.config
    t.notOk('custom' in again)
    t.same(again.channels, ['in-app'])
    t.same(again.thresholds, { minutes: 10, percent: 80 })
    const stored = await servicesOf(h.app).db.get<{ config: string }>('SELECT config FROM alert_rules WHERE id = ?', [r.id])
    t.ok(JSON.parse(stored!.config).chatUrls[0].startsWith('https://'), 'the full chat URL is still stored')
    t.notOk(JSON.parse(stored!.config).chatUrls[0].includes('•'))
  })

  t.test('a location watched by a rule (home or scope) is not deleted until the rule goes', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const watched = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Watched' })).json().data
    const other = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Other' })).json().data
    // The watched node's id also appears in this rule's JSON, but not as its scope: it does not hold the node.
    const decoy = await h.req('POST', '/v1/alert-rules', apiKey, {
      name: 'Decoy',
      config: { codes: ['display-off'], scopeKind: 'location', scopeId: other.id, note: { scopeId: watched.id } },
    })
    t.equal(decoy.statusCode, 201, decoy.body)
    const r = (
      await h.req('POST', '/v1/alert-rules', apiKey, { name: 'Watch', config: { codes: ['display-off'], scopeKind: 'location', scopeId: watched.id } })
    ).json().data
    const refused = await h.req('DELETE', `/v1/nodes/${watched.id}`, apiKey)
    t.equal(refused.statusCode, 409, refused.body)
    t.equal(refused.json().error, 'node_not_empty')
    t.match(refused.json().message, /1 alert rule\(s\) homed or scoped there/)
    // Moving the rule's scope elsewhere frees the node; the column follows the config.
    const moved = await h.req('PATCH', `/v1/alert-rules/${r.id}`, apiKey, { config: { scopeKind: 'workspace', scopeId: null } })
    t.equal(moved.statusCode, 200, moved.body)
    t.equal((await h.req('DELETE', `/v1/nodes/${watched.id}`, apiKey)).statusCode, 200)
    t.equal((await h.req('DELETE', `/v1/nodes/${other.id}`, apiKey)).statusCode, 409, 'the decoy rule scoped there holds its node')
    await h.req('DELETE', `/v1/alert-rules/${decoy.json().data.id}`, apiKey)
    t.equal((await h.req('DELETE', `/v1/nodes/${other.id}`, apiKey)).statusCode, 200, 'a deleted rule holds nothing')
  })

  t.test("a screen scope names a screen of this workspace the credential reaches: another workspace's screen is 422", async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const { apiKey: otherKey } = await h.workspace('Other')
    const theirs = await pairScreen(h, otherKey, 'Their lobby')
    const shop = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Shop' })).json().data.id as string
    const depot = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Depot' })).json().data.id as string
    const mine = await pairScreen(h, apiKey, 'Our lobby', shop)
    const atDepot = await pairScreen(h, apiKey, 'Depot door', depot)
    const scoped = (scopeId: string) => ({ name: 'One screen', config: { codes: ['display-off'], scopeKind: 'screen', scopeId } })

    for (const scopeId of [theirs.screenId, 'scr_nope']) {
      const res = await h.req('POST', '/v1/alert-rules', apiKey, scoped(scopeId))
      t.equal(res.statusCode, 422, `create scoped to ${scopeId}`)
      t.equal(res.json().error, 'validation_error')
      t.match(res.json().message, /config\.scopeId .* is not a screen in this workspace/)
    }
    const ok = await h.req('POST', '/v1/alert-rules', apiKey, scoped(mine.screenId))
    t.equal(ok.statusCode, 201, ok.body)
    const id = ok.json().data.id as string
    t.equal(ok.json().data.config.scopeId, mine.screenId)

    const moved = await h.req('PATCH', `/v1/alert-rules/${id}`, apiKey, { config: { scopeId: theirs.screenId } })
    t.equal(moved.statusCode, 422, 'update scoped to their screen')
    t.equal(moved.json().error, 'validation_error')
    const fromWorkspace = (await h.req('POST', '/v1/alert-rules', apiKey, { name: 'All', config: { codes: ['display-off'] } })).json().data.id
    const toTheirs = await h.req('PATCH', `/v1/alert-rules/${fromWorkspace}`, apiKey, { config: { scopeKind: 'screen', scopeId: theirs.screenId } })
    t.equal(toTheirs.statusCode, 422)
    t.equal(toTheirs.json().error, 'validation_error')
    t.match(
      (await h.req('GET', `/v1/alert-rules/${id}`, apiKey)).json().data.config,
      { scopeKind: 'screen', scopeId: mine.screenId },
      'refused changes changed nothing',
    )
    t.equal((await h.req('PATCH', `/v1/alert-rules/${id}`, apiKey, { config: { scopeId: atDepot.screenId } })).statusCode, 200)

    // A key pinned to the shop names only screens it reaches.
    const pinned = (await makeKey(h, apiKey, ['alert.view', 'alert.edit'], shop)).secret
    const outside = await h.req('POST', '/v1/alert-rules', pinned, scoped(atDepot.screenId))
    t.equal(outside.statusCode, 422)
    t.equal(outside.json().error, 'validation_error')
    t.equal((await h.req('POST', '/v1/alert-rules', pinned, scoped(mine.screenId))).statusCode, 201)

    // A rule kept on a screen deleted since stays editable (its scope is not checked again).
    t.equal((await h.req('DELETE', `/v1/screens/${atDepot.screenId}`, apiKey)).statusCode, 200)
    const renamed = await h.req('PATCH', `/v1/alert-rules/${id}`, apiKey, { name: 'Depot door (gone)', config: { severity: 'info' } })
    t.equal(renamed.statusCode, 200, renamed.body)
  })
})
