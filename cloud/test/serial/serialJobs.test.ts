// Serial jobs and panel profiles through inject: queueing (template command or literal
// value), expansion at queue time, scope form, reading, listing, expiry, permissions.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { makeKey, type Harness } from '../helpers.js'
import { pairScreen } from '../screenHelpers.js'
import { SERIAL_JOB_TTL_MS } from '../../src/domains/serial/SerialJobService.js'
import { forEngines, onOneEngine, type EngineBuild } from '../db/engines.js'
import type { Test } from 'tap'

async function paired(build: EngineBuild, t: Test) {
  const h = await build(t)
  const { apiKey, workspaceId } = await h.workspace()
  const screen = await pairScreen(h, apiKey, 'Lobby')
  return { h, apiKey, workspaceId, screenId: screen.screenId }
}

const send = (h: Harness, key: string, screenId: string, body: unknown) => h.req('POST', `/v1/screens/${screenId}/serial`, key, body)

// What the routes answer (commands, validation, scope, permissions): one engine (SQLite, or
// SVC_TEST_ENGINE=postgres; db/engines.ts onOneEngine).
onOneEngine(t, (t, build) => {
  const setup = (t: Test) => paired(build, t)

  t.test('a literal command is queued as a job with its expanded bytes', async (t) => {
    const { h, apiKey, screenId } = await setup(t)
    const res = await send(h, apiKey, screenId, { value: 'ka 01 01', encoding: 'ascii', eol: 'cr' })
    t.equal(res.statusCode, 202, res.body)
    const job = res.json().data
    t.match(job.id, /^sjob_[0-9a-z]{26}$/)
    t.match(job, {
      screenId,
      bytesHex: '6B 61 20 30 31 20 30 31 0D',
      status: 'queued',
      replyHex: null,
      reason: null,
      completedAt: null,
      sentAt: null,
      templateId: null,
      itemId: null,
      protocol: null,
    })
    t.equal(job.createdAt, '2026-06-01T12:00:00.000Z')
    const got = await h.req('GET', `/v1/serial-jobs/${job.id}`, apiKey)
    t.equal(got.statusCode, 200)
    t.same(got.json().data, job)
    const hex = await send(h, apiKey, screenId, { value: 'aa 11 01 01 01 14', encoding: 'hex' })
    t.equal(hex.json().data.bytesHex, 'AA 11 01 01 01 14')
  })

  t.test('a template command is expanded at queue time; later edits do not change the job', async (t) => {
    const { h, apiKey, screenId } = await setup(t)
    const tpl = (
      await h.req('POST', '/v1/serial-templates', apiKey, { name: 'QM55', items: [{ name: 'on', value: 'AA 11 01 01 01 14', encoding: 'hex' }] })
    ).json().data
    const item = tpl.items[0]
    const res = await send(h, apiKey, screenId, { templateId: tpl.id, itemId: item.id })
    t.equal(res.statusCode, 202)
    const job = res.json().data
    t.match(job, { templateId: tpl.id, itemId: item.id, bytesHex: 'AA 11 01 01 01 14' })
    await h.req('PATCH', `/v1/serial-templates/${tpl.id}`, apiKey, { items: [{ id: item.id, name: 'on', value: 'FF', encoding: 'hex' }] })
    t.equal((await h.req('GET', `/v1/serial-jobs/${job.id}`, apiKey)).json().data.bytesHex, 'AA 11 01 01 01 14')
    await h.req('DELETE', `/v1/serial-templates/${tpl.id}`, apiKey)
    t.equal((await h.req('GET', `/v1/serial-jobs/${job.id}`, apiKey)).json().data.bytesHex, 'AA 11 01 01 01 14', 'nor does deleting it')
  })

  t.test('bad commands answer 422 with the cause; unknown screens 404; permissions', async (t) => {
    const { h, apiKey, screenId } = await setup(t)
    const tpl = (await h.req('POST', '/v1/serial-templates', apiKey, { name: 'T', items: [{ name: 'on', value: 'ON' }] })).json().data
    const cases: [unknown, RegExp][] = [
      [{}, /value is required/],
      [{ value: '' }, /value/],
      [{ value: 'A'.repeat(513) }, /513 characters/],
      [{ value: 'GG', encoding: 'hex' }, /non-hex/],
      [{ templateId: tpl.id }, /templateId and itemId/],
      [{ templateId: tpl.id, itemId: 'sti_nope' }, /itemId/],
      [{ templateId: 'sertpl_nope', itemId: tpl.items[0].id }, /templateId/],
      [{ templateId: tpl.id, itemId: tpl.items[0].id, value: 'X' }, /either/],
      [{ value: 'A', protocol: 'sony' }, /protocol/],
    ]
    for (const [body, msg] of cases) {
      const res = await send(h, apiKey, screenId, body)
      t.equal(res.statusCode, 422, JSON.stringify(body))
      t.equal(res.json().error, 'validation_error')
      t.match(res.json().message, msg, JSON.stringify(body))
    }
    t.equal((await send(h, apiKey, 'scr_nope', { value: 'A' })).statusCode, 404)
    t.equal((await h.req('GET', '/v1/serial-jobs/sjob_nope', apiKey)).statusCode, 404)
    const viewer = (await makeKey(h, apiKey, ['screen.view'])).secret
    const denied = await send(h, viewer, screenId, { value: 'A' })
    t.equal(denied.statusCode, 403)
    t.equal(denied.json().message, 'Missing permission: screen.edit')
    t.equal((await h.req('GET', `/v1/screens/${screenId}/serial-jobs`, viewer)).statusCode, 200, 'screen.view reads jobs')
  })

  t.test('a pinned key reaches only its screens and jobs', async (t) => {
    const h = await build(t)
    const { apiKey } = await h.workspace()
    const north = (await h.req('POST', '/v1/nodes', apiKey, { name: 'North' })).json().data.id
    const south = (await h.req('POST', '/v1/nodes', apiKey, { name: 'South' })).json().data.id
    const n = await pairScreen(h, apiKey, 'N', north)
    const s = await pairScreen(h, apiKey, 'S', south)
    const pinned = (await makeKey(h, apiKey, ['screen.view', 'screen.edit'], north)).secret
    t.equal((await send(h, pinned, n.screenId, { value: 'A' })).statusCode, 202)
    t.equal((await send(h, pinned, s.screenId, { value: 'A' })).statusCode, 404)
    const other = (await send(h, apiKey, s.screenId, { value: 'A' })).json().data.id
    t.equal((await h.req('GET', `/v1/serial-jobs/${other}`, pinned)).statusCode, 404)
    const all = await h.req('POST', '/v1/serial-jobs', pinned, { value: 'A' })
    t.equal(all.statusCode, 202)
    t.same(
      all.json().data.map((j: { screenId: string }) => j.screenId),
      [n.screenId],
      'scope all = the screens the key reaches',
    )
    const southScope = await h.req('POST', '/v1/serial-jobs', pinned, { value: 'A', scopeKind: 'node', scopeNodeId: south })
    t.equal(southScope.statusCode, 422)
    t.equal(southScope.json().error, 'invalid_node', "a location outside the key's reach, as for casts and emergencies")
    const listed = await h.req('POST', '/v1/serial-jobs', pinned, { value: 'A', scopeKind: 'screens', screenIds: [s.screenId] })
    t.equal(listed.json().error, 'no_screens', 'unreachable screens are not targets')
  })

  t.test('scope form: one job per screen; node scope covers the subtree; no_screens; invalid_node', async (t) => {
    const h = await build(t)
    const { apiKey } = await h.workspace()
    const none = await h.req('POST', '/v1/serial-jobs', apiKey, { value: 'A' })
    t.equal(none.statusCode, 422)
    t.equal(none.json().error, 'no_screens')
    const top = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Top' })).json().data.id
    const sub = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Sub', parentId: top })).json().data.id
    const a = await pairScreen(h, apiKey, 'A', top)
    const b = await pairScreen(h, apiKey, 'B', sub)
    const c = await pairScreen(h, apiKey, 'C')
    const all = await h.req('POST', '/v1/serial-jobs', apiKey, { value: 'PWR', eol: 'cr' })
    t.equal(all.statusCode, 202)
    t.equal(all.json().data.length, 3)
    t.same(new Set(all.json().data.map((j: { bytesHex: string }) => j.bytesHex)), new Set(['50 57 52 0D']))
    const node = await h.req('POST', '/v1/serial-jobs', apiKey, { value: 'X', scopeKind: 'node', scopeNodeId: top })
    t.same(
      node
        .json()
        .data.map((j: { screenId: string }) => j.screenId)
        .sort(),
      [a.screenId, b.screenId].sort(),
    )
    const some = await h.req('POST', '/v1/serial-jobs', apiKey, { value: 'X', scopeKind: 'screens', screenIds: [c.screenId, c.screenId, 'scr_nope'] })
    t.same(
      some.json().data.map((j: { screenId: string }) => j.screenId),
      [c.screenId],
    )
    t.equal((await h.req('POST', '/v1/serial-jobs', apiKey, { value: 'X', scopeKind: 'node', scopeNodeId: 'node_nope' })).json().error, 'invalid_node')
    t.equal((await h.req('POST', '/v1/serial-jobs', apiKey, { value: 'X', scopeKind: 'screens' })).statusCode, 422)
    t.equal((await h.req('POST', '/v1/serial-jobs', apiKey, { scopeKind: 'all' })).json().error, 'validation_error', 'the command is checked too')
  })

  t.test('panel profile: set, read, clear; the accessor; jobs read replies with its protocol', async (t) => {
    const { h, apiKey, workspaceId, screenId } = await setup(t)
    const url = `/v1/screens/${screenId}/panel`
    t.same((await h.req('GET', url, apiKey)).json(), { data: null })
    t.equal(await servicesOf(h.app).screenPanels.panelProfile(workspaceId, screenId), null)
    const set = await h.req('PATCH', url, apiKey, { protocol: 'samsung-mdc' })
    t.equal(set.statusCode, 200)
    t.same(set.json().data, { protocol: 'samsung-mdc', setId: 1, pollSeconds: 60, portHint: null }, 'defaults')
    const upd = await h.req('PATCH', url, apiKey, { setId: 3, pollSeconds: 0 })
    t.same(upd.json().data, { protocol: 'samsung-mdc', setId: 3, pollSeconds: 0, portHint: null }, 'partial update keeps the protocol')
    t.same(await servicesOf(h.app).screenPanels.panelProfile(workspaceId, screenId), { protocol: 'samsung-mdc', setId: 3, pollSeconds: 0 })
    t.equal(await servicesOf(h.app).screenPanels.panelProfile('ws_other', screenId), null, 'scoped by workspace')
    t.equal((await send(h, apiKey, screenId, { value: 'AA', encoding: 'hex' })).json().data.protocol, 'samsung-mdc')
    t.equal((await send(h, apiKey, screenId, { value: 'AA', encoding: 'hex', protocol: 'raw' })).json().data.protocol, null)
    for (const bad of [{ protocol: 'sony' }, { setId: 256 }, { pollSeconds: -1 }, { setId: 'x' }]) {
      const res = await h.req('PATCH', url, apiKey, bad)
      t.equal(res.statusCode, 422, JSON.stringify(bad))
      t.equal(res.json().error, 'validation_error')
    }
    t.same((await h.req('PATCH', url, apiKey, { protocol: null })).json(), { data: null })
    t.equal(await servicesOf(h.app).screenPanels.panelProfile(workspaceId, screenId), null)
    const viewer = (await makeKey(h, apiKey, ['screen.view'])).secret
    t.equal((await h.req('PATCH', url, viewer, { protocol: 'lg' })).statusCode, 403)
    t.equal((await h.req('GET', url, viewer)).statusCode, 200)
    t.equal((await h.req('GET', '/v1/screens/scr_nope/panel', apiKey)).statusCode, 404)
  })
})

// Listing order and pages, expiry past the TTL, and which result closes a job: the SQL, on both engines.
forEngines(t, (t, build) => {
  const setup = (t: Test) => paired(build, t)

  t.test("a screen's jobs list newest first and page with limit", async (t) => {
    const { h, apiKey, screenId } = await setup(t)
    const ids: string[] = []
    for (let i = 0; i < 5; i++) {
      ids.push((await send(h, apiKey, screenId, { value: `C${i}` })).json().data.id)
      h.clock.advance(1000)
    }
    const all = await h.req('GET', `/v1/screens/${screenId}/serial-jobs`, apiKey)
    t.same(
      all.json().data.map((j: { id: string }) => j.id),
      [...ids].reverse(),
    )
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const page: { data: { id: string }[]; nextCursor: string | null } = (
        await h.req('GET', `/v1/screens/${screenId}/serial-jobs?limit=2${cursor ? `&cursor=${cursor}` : ''}`, apiKey)
      ).json()
      t.ok(page.data.length <= 2)
      seen.push(...page.data.map((j: { id: string }) => j.id))
      cursor = page.nextCursor
    } while (cursor)
    t.same(seen, [...ids].reverse())
    t.equal((await h.req('GET', '/v1/screens/scr_nope/serial-jobs', apiKey)).statusCode, 404)
  })

  t.test('a job without a result past the TTL fails as expired', async (t) => {
    const { h, apiKey, screenId } = await setup(t)
    const job = (await send(h, apiKey, screenId, { value: 'A' })).json().data
    h.clock.advance(SERIAL_JOB_TTL_MS - 1000)
    t.equal((await h.req('GET', `/v1/serial-jobs/${job.id}`, apiKey)).json().data.status, 'queued')
    h.clock.advance(2000)
    const got = (await h.req('GET', `/v1/serial-jobs/${job.id}`, apiKey)).json().data
    t.match(got, { status: 'failed', reason: 'expired' })
    t.ok(got.completedAt)
    t.same(await servicesOf(h.app).serialJobs.pendingFor(screenId), [], 'expired jobs are not delivered')
  })

  t.test('the read for a job just queued leaves out jobs past the TTL without writing', async (t) => {
    const { h, apiKey, screenId } = await setup(t)
    const old = (await send(h, apiKey, screenId, { value: 'A' })).json().data
    h.clock.advance(SERIAL_JOB_TTL_MS + 1000)
    const fresh = (await send(h, apiKey, screenId, { value: 'B' })).json().data
    const jobs = servicesOf(h.app).serialJobs
    t.same(
      (await jobs.pendingFor(screenId, { expire: false })).map((j) => j.id),
      [fresh.id],
      'only the job within its TTL',
    )
    t.equal(await jobs.expireStale(), 1, 'the stale one was still open: the read wrote nothing')
    t.match((await h.req('GET', `/v1/serial-jobs/${old.id}`, apiKey)).json().data, { status: 'failed', reason: 'expired' })
  })

  t.test('job results: only the owning screen closes a job; a late result replaces expired', async (t) => {
    const { h, apiKey, screenId } = await setup(t)
    const jobs = servicesOf(h.app).serialJobs
    const job = (await send(h, apiKey, screenId, { value: 'A' })).json().data
    const result = { jobId: job.id, sentHex: '41', replyHex: 'aa0d', outcome: 'ok' as const, at: '2026-06-01T12:00:01.000Z' }
    t.equal(await jobs.applyResult('scr_other', result), false, 'another screen cannot close it')
    t.equal(await jobs.applyResult(screenId, result), true)
    t.match((await h.req('GET', `/v1/serial-jobs/${job.id}`, apiKey)).json().data, { status: 'ok', replyHex: 'AA 0D' })
    t.equal(await jobs.applyResult(screenId, { ...result, outcome: 'nak' }), false, 'a closed job stays closed')
    const late = (await send(h, apiKey, screenId, { value: 'B' })).json().data
    h.clock.advance(SERIAL_JOB_TTL_MS + 1)
    await jobs.expireStale()
    t.equal(await jobs.applyResult(screenId, { ...result, jobId: late.id, outcome: 'timeout' }), true)
    t.match((await h.req('GET', `/v1/serial-jobs/${late.id}`, apiKey)).json().data, { status: 'timeout', reason: null })
  })
})
