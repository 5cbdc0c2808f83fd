// Remote logs through inject, on both engines: asking (defaults, bounds, the error envelope),
// reading and listing, the device's upload (its credential, its bounds, what is kept of it),
// other workspaces, pinned keys and missing permissions, expiry after the TTL and deletion
// after 7 days by the housekeeper, on the injected clock.
import t from 'tap'
import { makeKey, type Harness } from '../helpers.js'
import { pairScreen } from '../screenHelpers.js'
import { forEngines } from '../db/engines.js'
import { AGENT_LOG_LIMITS } from '@svc/shared/mqtt/index'
import { AGENT_LOG_RETENTION_DAYS, AGENT_LOG_TTL_MS } from '../../src/domains/agentlogs/AgentLogService.js'

const basic = (user: string, secret: string) => `Basic ${Buffer.from(`${user}:${secret}`).toString('base64')}`

function upload(h: Harness, id: string, auth: string | null, body: unknown) {
  return h.app.inject({
    method: 'PUT',
    url: `/v1/devices/agent-logs/${id}`,
    headers: { 'content-type': 'application/json', ...(auth ? { authorization: auth } : {}) },
    payload: JSON.stringify(body),
  })
}

const line = (at: string, message: string, level = 'info', source = 'agent') => ({ at, level, source, message })

forEngines(t, (t, build) => {
  async function setup(t: Parameters<typeof build>[0]) {
    const h = await build(t)
    const { apiKey, workspaceId } = await h.workspace()
    const screen = await pairScreen(h, apiKey, 'Lobby')
    return { h, apiKey, workspaceId, screen }
  }

  t.test('a request answers 202 pending with its defaults; the GET shows it, the list has it', async (t) => {
    const { h, apiKey, screen } = await setup(t)
    const res = await h.req('POST', `/v1/screens/${screen.screenId}/logs`, apiKey)
    t.equal(res.statusCode, 202, res.body)
    const asked = res.json().data
    t.match(asked.id, /^alog_[0-9a-z]{26}$/)
    t.same(asked, {
      id: asked.id,
      screenId: screen.screenId,
      state: 'pending',
      reason: null,
      maxLines: 1000,
      since: null,
      requestedAt: '2026-06-01T12:00:00.000Z',
      sentAt: null,
      uploadedAt: null,
      completedAt: null,
      lineCount: null,
      truncated: false,
      lines: [],
    })
    t.same((await h.req('GET', `/v1/agent-logs/${asked.id}`, apiKey)).json().data, asked, 'the GET answers the same')

    const withBody = await h.req('POST', `/v1/screens/${screen.screenId}/logs`, apiKey, { lines: 5000, since: '2026-06-01T13:00:00+01:00' })
    t.equal(withBody.statusCode, 202)
    t.match(withBody.json().data, { maxLines: 5000, since: '2026-06-01T12:00:00.000Z' }, 'since is kept in UTC')

    const list = await h.req('GET', `/v1/screens/${screen.screenId}/agent-logs?limit=1&count=1`, apiKey)
    t.equal(list.statusCode, 200)
    t.equal(list.json().total, 2)
    t.same(
      list.json().data.map((x: { id: string }) => x.id),
      [withBody.json().data.id],
      'newest first',
    )
    t.notOk('lines' in list.json().data[0], 'a list item carries no lines')
    const next = await h.req('GET', `/v1/screens/${screen.screenId}/agent-logs?limit=1&cursor=${list.json().nextCursor}`, apiKey)
    t.same(
      next.json().data.map((x: { id: string }) => x.id),
      [asked.id],
    )
    t.equal(next.json().nextCursor, null)
  })

  t.test('bad input answers 422 in the error envelope and queues nothing', async (t) => {
    const { h, apiKey, screen } = await setup(t)
    for (const [body, field] of [
      [{ lines: 0 }, /lines/],
      [{ lines: AGENT_LOG_LIMITS.maxLines + 1 }, /lines/],
      [{ lines: 10.5 }, /lines/],
      [{ lines: '100' }, /lines/],
      [{ since: 'yesterday' }, /since/],
      [{ since: 1700000000 }, /since/],
      [{ level: 'debug' }, /level/],
    ] as const) {
      const res = await h.req('POST', `/v1/screens/${screen.screenId}/logs`, apiKey, body)
      t.equal(res.statusCode, 422, JSON.stringify(body))
      t.equal(res.json().error, 'validation_error')
      t.match(res.json().message, field, `the message names the field: ${res.json().message}`)
    }
    const list = await h.req('GET', `/v1/screens/${screen.screenId}/agent-logs`, apiKey)
    t.same(list.json().data, [], 'nothing was queued')
    const missing = await h.req('POST', '/v1/screens/scr_nope/logs', apiKey)
    t.match({ status: missing.statusCode, body: missing.json() }, { status: 404, body: { error: 'not_found' } }, 'an unknown screen')
    const nothing = await h.req('GET', '/v1/agent-logs/alog_nope', apiKey)
    t.match({ status: nothing.statusCode, body: nothing.json() }, { status: 404, body: { error: 'not_found' } }, 'an unknown request')
  })

  t.test('the upload: the device credential of its own screen, its bounds; what the request asked for is kept', async (t) => {
    const { h, apiKey, screen } = await setup(t)
    const other = await pairScreen(h, apiKey, 'Door')
    const asked = (await h.req('POST', `/v1/screens/${screen.screenId}/logs`, apiKey, { lines: 3, since: '2026-06-01T11:00:00Z' })).json().data
    const own = basic(screen.screenId, screen.deviceSecret)
    const body = {
      lines: [
        line('2026-06-01T10:59:59.999Z', 'before since: left out'),
        line('2026-06-01T11:00:00.000Z', 'first kept? no: only the newest 3 are'),
        line('2026-06-01T11:30:00.000Z', 'player page listening', 'info'),
        line('2026-06-01T11:45:00.000Z', 'Uncaught TypeError: x is undefined', 'error', 'kiosk'),
        line('2026-06-01T11:40:00.000Z', 'link lost', 'warn'),
      ],
      truncated: false,
    }

    let r = await upload(h, asked.id, null, body)
    t.match({ status: r.statusCode, body: r.json() }, { status: 401, body: { error: 'missing_credentials' } }, 'no credential')
    r = await upload(h, asked.id, `Bearer ${apiKey}`, body)
    t.match({ status: r.statusCode, body: r.json() }, { status: 401, body: { error: 'missing_credentials' } }, 'an API key is not a device credential')
    r = await upload(h, asked.id, basic(screen.screenId, 'wrong'), body)
    t.match({ status: r.statusCode, body: r.json() }, { status: 401, body: { error: 'invalid_credentials' } }, 'a wrong secret')
    r = await upload(h, asked.id, basic(other.screenId, other.deviceSecret), body)
    t.match({ status: r.statusCode, body: r.json() }, { status: 401, body: { error: 'invalid_credentials' } }, "another screen's credential")
    r = await upload(h, 'alog_nope', own, body)
    t.match({ status: r.statusCode, body: r.json() }, { status: 401, body: { error: 'invalid_credentials' } }, 'an unknown request: no hint whether it exists')

    const long = 'x'.repeat(AGENT_LOG_LIMITS.messageLength + 1)
    for (const [label, bad, field] of [
      ['a message over the bound', { lines: [line('2026-06-01T11:50:00Z', long)] }, /message/],
      ['too many lines', { lines: Array.from({ length: AGENT_LOG_LIMITS.maxLines + 1 }, () => line('2026-06-01T11:50:00Z', 'x')) }, /lines/],
      ['an unknown level', { lines: [line('2026-06-01T11:50:00Z', 'x', 'fatal')] }, /level/],
      ['an unknown source', { lines: [line('2026-06-01T11:50:00Z', 'x', 'info', 'kernel')] }, /source/],
      ['a time that is not one', { lines: [line('noon', 'x')] }, /at/],
      ['a NUL character', { lines: [line('2026-06-01T11:50:00Z', 'a\u0000b')] }, /NUL/],
      ['no lines field', { truncated: true }, /lines/],
      ['a field the upload does not take', { lines: [], colour: 'red' }, /colour is not a field/],
      ['a line field the upload does not take', { lines: [{ ...line('2026-06-01T11:50:00Z', 'x'), pid: 7 }] }, /pid is not a field/],
    ] as const) {
      r = await upload(h, asked.id, own, bad)
      t.equal(r.statusCode, 422, label)
      t.match(r.json(), { error: 'validation_error', message: field }, label)
    }
    const huge = { lines: Array.from({ length: 600 }, () => line('2026-06-01T11:50:00Z', 'y'.repeat(AGENT_LOG_LIMITS.messageLength))) }
    r = await upload(h, asked.id, own, huge)
    t.match({ status: r.statusCode, body: r.json() }, { status: 413, body: { error: 'too_large' } }, `a body over ${AGENT_LOG_LIMITS.maxBytes} bytes`)
    r = await upload(h, asked.id, basic(screen.screenId, 'wrong'), huge)
    t.match({ status: r.statusCode, body: r.json() }, { status: 401, body: { error: 'invalid_credentials' } }, 'the credential is checked before the body')
    t.equal((await h.req('GET', `/v1/agent-logs/${asked.id}`, apiKey)).json().data.state, 'pending', 'still pending after the refusals')

    h.clock.advance(5000)
    r = await upload(h, asked.id, own, body)
    t.equal(r.statusCode, 200, r.body)
    t.match(r.json().data, { id: asked.id, state: 'done', lineCount: 3, truncated: true, uploadedAt: '2026-06-01T12:00:05.000Z' })
    t.notOk('lines' in r.json().data, 'the upload answers without the lines')
    const got = (await h.req('GET', `/v1/agent-logs/${asked.id}`, apiKey)).json().data
    t.match(got, { state: 'done', completedAt: '2026-06-01T12:00:05.000Z', lineCount: 3, truncated: true })
    t.same(
      got.lines,
      [
        line('2026-06-01T11:30:00.000Z', 'player page listening', 'info'),
        line('2026-06-01T11:40:00.000Z', 'link lost', 'warn'),
        line('2026-06-01T11:45:00.000Z', 'Uncaught TypeError: x is undefined', 'error', 'kiosk'),
      ],
      'since and the newest 3, oldest first; cut lines make it truncated',
    )

    r = await upload(h, asked.id, own, body)
    t.match({ status: r.statusCode, body: r.json() }, { status: 409, body: { error: 'conflict' } }, 'a second upload is refused')

    // The agent's own truncation is kept.
    const second = (await h.req('POST', `/v1/screens/${screen.screenId}/logs`, apiKey)).json().data
    r = await upload(h, second.id, own, { lines: [line('2026-06-01T11:59:00Z', 'only one')], truncated: true })
    t.match(r.json().data, { state: 'done', lineCount: 1, truncated: true })
    const empty = (await h.req('POST', `/v1/screens/${screen.screenId}/logs`, apiKey)).json().data
    r = await upload(h, empty.id, own, { lines: [] })
    t.match(r.json().data, { state: 'done', lineCount: 0, truncated: false }, 'no lines is an answer too')
  })

  t.test('another workspace gets 404 not_found; a pinned key reaches only its subtree; no screen.view is 403', async (t) => {
    const { h, apiKey, screen } = await setup(t)
    const asked = (await h.req('POST', `/v1/screens/${screen.screenId}/logs`, apiKey)).json().data
    const { apiKey: otherKey } = await h.workspace('Other')
    for (const [method, url] of [
      ['POST', `/v1/screens/${screen.screenId}/logs`],
      ['GET', `/v1/agent-logs/${asked.id}`],
      ['GET', `/v1/screens/${screen.screenId}/agent-logs`],
    ] as const) {
      const res = await h.req(method, url, otherKey)
      t.equal(res.statusCode, 404, `${method} ${url} from another workspace`)
      t.equal(res.json().error, 'not_found')
    }

    const node = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Store 1' })).json().data.id
    const inside = await pairScreen(h, apiKey, 'Store screen', node)
    const pinned = await makeKey(h, apiKey, ['screen.view'], node)
    const ok = await h.req('POST', `/v1/screens/${inside.screenId}/logs`, pinned.secret, { lines: 10 })
    t.equal(ok.statusCode, 202, 'a pinned key asks a screen of its subtree')
    t.equal((await h.req('GET', `/v1/agent-logs/${ok.json().data.id}`, pinned.secret)).statusCode, 200)
    t.equal((await h.req('GET', `/v1/screens/${inside.screenId}/agent-logs`, pinned.secret)).json().data.length, 1)
    for (const [method, url] of [
      ['POST', `/v1/screens/${screen.screenId}/logs`],
      ['GET', `/v1/agent-logs/${asked.id}`],
      ['GET', `/v1/screens/${screen.screenId}/agent-logs`],
    ] as const) {
      const res = await h.req(method, url, pinned.secret)
      t.equal(res.statusCode, 404, `${method} ${url}: outside the pin`)
      t.equal(res.json().error, 'not_found')
    }

    const blind = await makeKey(h, apiKey, ['node.view'])
    for (const [method, url] of [
      ['POST', `/v1/screens/${screen.screenId}/logs`],
      ['GET', `/v1/agent-logs/${asked.id}`],
      ['GET', `/v1/screens/${screen.screenId}/agent-logs`],
    ] as const) {
      const res = await h.req(method, url, blind.secret)
      t.equal(res.statusCode, 403, `${method} ${url} without screen.view`)
      t.same(res.json(), { error: 'forbidden', message: 'Missing permission: screen.view' })
    }
    const viewer = await makeKey(h, apiKey, ['screen.view'])
    t.equal((await h.req('POST', `/v1/screens/${screen.screenId}/logs`, viewer.secret)).statusCode, 202, 'screen.view is enough to ask')
  })

  t.test('silence past the TTL expires a request; the housekeeper deletes requests after 7 days', async (t) => {
    const { h, apiKey, screen } = await setup(t)
    const old = (await h.req('POST', `/v1/screens/${screen.screenId}/logs`, apiKey)).json().data
    h.clock.advance(AGENT_LOG_TTL_MS - 1000)
    t.equal((await h.req('GET', `/v1/agent-logs/${old.id}`, apiKey)).json().data.state, 'pending', 'still pending just before the TTL')
    h.clock.advance(2000)
    const expired = (await h.req('GET', `/v1/agent-logs/${old.id}`, apiKey)).json().data
    t.match(expired, { state: 'expired', reason: /no answer from the screen within 10 minutes/, completedAt: '2026-06-01T12:10:01.000Z', lines: [] })
    const late = await upload(h, old.id, basic(screen.screenId, screen.deviceSecret), { lines: [line('2026-06-01T12:00:00Z', 'late')] })
    t.match({ status: late.statusCode, body: late.json() }, { status: 409, body: { error: 'conflict', message: /expired/ } }, 'an upload after expiry')

    const done = (await h.req('POST', `/v1/screens/${screen.screenId}/logs`, apiKey)).json().data
    t.equal((await upload(h, done.id, basic(screen.screenId, screen.deviceSecret), { lines: [line('2026-06-01T12:10:00Z', 'kept a week')] })).statusCode, 200)

    const housekeeper = h.app.workers.housekeeper
    // Six days and 23 hours after the first: both kept.
    h.clock.advance(AGENT_LOG_RETENTION_DAYS * 86_400_000 - 3_600_000 - AGENT_LOG_TTL_MS)
    await housekeeper.runOnce()
    t.equal((await h.req('GET', `/v1/agent-logs/${old.id}`, apiKey)).statusCode, 200, 'kept under 7 days')
    t.equal((await h.req('GET', `/v1/agent-logs/${done.id}`, apiKey)).statusCode, 200)
    // Past 7 days for both.
    h.clock.advance(2 * 3_600_000)
    await housekeeper.runOnce()
    for (const id of [old.id, done.id]) {
      const res = await h.req('GET', `/v1/agent-logs/${id}`, apiKey)
      t.equal(res.statusCode, 404, `${id} gone after 7 days`)
      t.equal(res.json().error, 'not_found')
    }
    t.same((await h.req('GET', `/v1/screens/${screen.screenId}/agent-logs`, apiKey)).json().data, [], 'and from the list')
  })
})
