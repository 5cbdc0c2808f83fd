// Remote logs through inject, on both engines: asking (defaults, bounds, the error envelope),
// reading and listing, the device's upload (its credential, its bounds, what is kept of it,
// lines as text whatever they hold), other workspaces, pinned keys and missing permissions,
// expiry after the TTL and deletion after 7 days by the housekeeper, on the injected clock;
// the bounds on asking (one open request per screen, the hourly limit per screen) and on
// keeping (the byte budgets per screen and per workspace).
import t from 'tap'
import { makeKey, type Harness } from '../helpers.js'
import { pairScreen } from '../screenHelpers.js'
import { forEngines } from '../db/engines.js'
import { AGENT_LOG_LIMITS } from '@svc/shared/mqtt/index'
import { AGENT_LOG_REQUESTS_PER_HOUR, AGENT_LOG_RETENTION_DAYS, AGENT_LOG_TTL_MS } from '../../src/domains/agentlogs/AgentLogService.js'
import { loadConfig } from '../../src/config.js'

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
    t.equal((await upload(h, asked.id, basic(screen.screenId, screen.deviceSecret), { lines: [] })).statusCode, 200, 'answered: the screen may be asked again')

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
    // A JSON null is a body, and not an object: refused like any other (no body at all is the defaults).
    const nul = await h.app.inject({
      method: 'POST',
      url: `/v1/screens/${screen.screenId}/logs`,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      payload: 'null',
    })
    t.equal(nul.statusCode, 422, 'a JSON null body')
    t.match(nul.json(), { error: 'validation_error', message: /object/ })
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
      ['a NUL character in a time', { lines: [line('2026-06-01T11:50:00Z\u0000', 'x')] }, /at/],
      ['a NUL character in a field name', { lines: [{ ...line('2026-06-01T11:50:00Z', 'x'), 'a\u0000': 1 }] }, /is not a field/],
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

  t.test('another workspace gets 404 not_found; a pinned key reaches only its subtree; asking needs screen.edit, reading screen.view (else 403)', async (t) => {
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
    const pinned = await makeKey(h, apiKey, ['screen.view', 'screen.edit'], node)
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
    for (const [method, url, perm] of [
      ['POST', `/v1/screens/${screen.screenId}/logs`, 'screen.edit'],
      ['GET', `/v1/agent-logs/${asked.id}`, 'screen.view'],
      ['GET', `/v1/screens/${screen.screenId}/agent-logs`, 'screen.view'],
    ] as const) {
      const res = await h.req(method, url, blind.secret)
      t.equal(res.statusCode, 403, `${method} ${url} without ${perm}`)
      t.same(res.json(), { error: 'forbidden', message: `Missing permission: ${perm}` })
    }
    // A viewer reads logs but cannot make screens upload them.
    const viewer = await makeKey(h, apiKey, ['screen.view'])
    const door = await pairScreen(h, apiKey, 'Door')
    const refused = await h.req('POST', `/v1/screens/${door.screenId}/logs`, viewer.secret)
    t.same(
      { status: refused.statusCode, body: refused.json() },
      { status: 403, body: { error: 'forbidden', message: 'Missing permission: screen.edit' } },
      'screen.view is not enough to ask',
    )
    t.same((await h.req('GET', `/v1/screens/${door.screenId}/agent-logs`, apiKey)).json().data, [], 'nothing was queued')
    t.equal((await h.req('GET', `/v1/agent-logs/${asked.id}`, viewer.secret)).statusCode, 200, 'screen.view reads')
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

  t.test('lines are text whatever they hold: markup, terminal escapes, NUL and line separators come back as sent', async (t) => {
    const { h, apiKey, screen } = await setup(t)
    const asked = (await h.req('POST', `/v1/screens/${screen.screenId}/logs`, apiKey)).json().data
    const sent = [
      line('2026-06-01T11:59:00.000Z', '<script>alert(document.cookie)</script><img src=x onerror=alert(1)>', 'error', 'kiosk'),
      line('2026-06-01T11:59:01.000Z', '\u001b[31mred\u001b[0m \u001b]0;title\u0007 \r\n tab\there'),
      line('2026-06-01T11:59:02.000Z', 'before\u0000after \u0000'),
      line('2026-06-01T11:59:03.000Z', 'line\u2028separator\u2029paragraph \u0085 "quoted" \\ \ud83d\ude00'),
    ]
    const r = await upload(h, asked.id, basic(screen.screenId, screen.deviceSecret), { lines: sent })
    t.equal(r.statusCode, 200, r.body)
    t.match(r.json().data, { state: 'done', lineCount: 4 })
    const got = await h.req('GET', `/v1/agent-logs/${asked.id}`, apiKey)
    t.match(got.headers['content-type'], /^application\/json/, 'served as JSON, never as markup')
    t.same(got.json().data.lines, sent, 'every character as it was sent')
    t.notOk(got.body.includes('\u0000'), 'NUL travels escaped')
    // Other bodies still refuse NUL.
    const node = await h.req('POST', '/v1/nodes', apiKey, { name: 'a\u0000b' })
    t.match({ status: node.statusCode, body: node.json() }, { status: 422, body: { error: 'validation_error', message: /NUL/ } })
  })

  t.test(
    'one open request per screen: a second ask answers 409 naming the open one; once it is answered or expired the screen may be asked again',
    async (t) => {
      const { h, apiKey, screen } = await setup(t)
      const door = await pairScreen(h, apiKey, 'Door')
      const first = await h.req('POST', `/v1/screens/${screen.screenId}/logs`, apiKey)
      t.equal(first.statusCode, 202)
      const id = first.json().data.id
      const again = await h.req('POST', `/v1/screens/${screen.screenId}/logs`, apiKey, { lines: 10 })
      t.equal(again.statusCode, 409)
      t.match(again.json(), { error: 'conflict', agentLogId: id, message: new RegExp(`open log request \\(${id}\\).*2026-06-01T12:10:00.000Z`) })
      t.equal((await h.req('POST', `/v1/screens/${door.screenId}/logs`, apiKey)).statusCode, 202, 'another screen is not held')
      t.same(
        (await h.req('GET', `/v1/screens/${screen.screenId}/agent-logs`, apiKey)).json().data.map((x: { id: string }) => x.id),
        [id],
        'nothing more was queued',
      )

      t.equal((await upload(h, id, basic(screen.screenId, screen.deviceSecret), { lines: [] })).statusCode, 200)
      const second = await h.req('POST', `/v1/screens/${screen.screenId}/logs`, apiKey)
      t.equal(second.statusCode, 202, 'answered: asked again')
      h.clock.advance(AGENT_LOG_TTL_MS + 1000)
      const third = await h.req('POST', `/v1/screens/${screen.screenId}/logs`, apiKey)
      t.equal(third.statusCode, 202, 'past the TTL the open one expires and a new one is taken')
      t.match((await h.req('GET', `/v1/agent-logs/${second.json().data.id}`, apiKey)).json().data, { state: 'expired' })
    },
  )

  t.test(
    `at most ${AGENT_LOG_REQUESTS_PER_HOUR} requests per screen per clock hour: the next answers 429 with Retry-After; another screen and the next hour are open`,
    async (t) => {
      const { h, apiKey, screen } = await setup(t)
      const door = await pairScreen(h, apiKey, 'Door')
      const own = basic(screen.screenId, screen.deviceSecret)
      h.clock.advance(10 * 60_000) // 12:10: the hour ends in 50 minutes
      for (let i = 0; i < AGENT_LOG_REQUESTS_PER_HOUR; i++) {
        const res = await h.req('POST', `/v1/screens/${screen.screenId}/logs`, apiKey)
        t.equal(res.statusCode, 202, `request ${i + 1}`)
        t.equal((await upload(h, res.json().data.id, own, { lines: [] })).statusCode, 200)
        h.clock.advance(1000)
      }
      const over = await h.req('POST', `/v1/screens/${screen.screenId}/logs`, apiKey)
      t.equal(over.statusCode, 429, over.body)
      const wait = 50 * 60 - AGENT_LOG_REQUESTS_PER_HOUR
      t.equal(over.headers['retry-after'], String(wait), 'Retry-After: seconds until the next hour')
      t.match(over.json(), {
        error: 'rate_limited',
        message: /10 log requests per screen per hour/,
        limit: AGENT_LOG_REQUESTS_PER_HOUR,
        windowSeconds: 3600,
        retryAfterSeconds: wait,
      })
      const list = await h.req('GET', `/v1/screens/${screen.screenId}/agent-logs?count=1`, apiKey)
      t.equal(list.json().total, AGENT_LOG_REQUESTS_PER_HOUR, 'the refused one was not queued')
      t.equal((await h.req('POST', `/v1/screens/${door.screenId}/logs`, apiKey)).statusCode, 202, 'another screen has its own count')
      h.clock.advance(wait * 1000)
      t.equal((await h.req('POST', `/v1/screens/${screen.screenId}/logs`, apiKey)).statusCode, 202, 'the next hour opens')
    },
  )

  t.test('stored lines have a byte budget per screen and per workspace: past one, the oldest uploads go and the new one stays', async (t) => {
    const message = (c: string) => c.repeat(1000)
    const size = Buffer.byteLength(JSON.stringify([line('2026-06-01T11:59:00.000Z', message('a'))]))
    const h = await build(t, { agentLogScreenBytes: 2 * size + 10, agentLogWorkspaceBytes: 3 * size + 10 })
    const { apiKey } = await h.workspace()
    const a = await pairScreen(h, apiKey, 'A')
    const b = await pairScreen(h, apiKey, 'B')
    const { apiKey: otherKey } = await h.workspace('Other')
    const c = await pairScreen(h, otherKey, 'C')
    async function stored(key: string, s: { screenId: string; deviceSecret: string }, ch: string) {
      const asked = (await h.req('POST', `/v1/screens/${s.screenId}/logs`, key)).json().data
      h.clock.advance(1000)
      const r = await upload(h, asked.id, basic(s.screenId, s.deviceSecret), { lines: [line('2026-06-01T11:59:00.000Z', message(ch))] })
      t.equal(r.statusCode, 200, r.body)
      return asked.id as string
    }
    const listed = async (key: string, screenId: string) =>
      (await h.req('GET', `/v1/screens/${screenId}/agent-logs`, key)).json().data.map((x: { id: string }) => x.id)

    const c1 = await stored(otherKey, c, 'c')
    const a1 = await stored(apiKey, a, 'a')
    const a2 = await stored(apiKey, a, 'b')
    t.same(await listed(apiKey, a.screenId), [a2, a1], 'two uploads fit the screen budget')
    const a3 = await stored(apiKey, a, 'c')
    t.same(await listed(apiKey, a.screenId), [a3, a2], "the screen's oldest upload went for the third")
    t.match((await h.req('GET', `/v1/agent-logs/${a1}`, apiKey)).json(), { error: 'not_found' })
    t.match((await h.req('GET', `/v1/agent-logs/${a3}`, apiKey)).json().data, { state: 'done', lines: [{ message: message('c') }] })

    // A pending request holds no lines and is never dropped.
    const pendingB = (await h.req('POST', `/v1/screens/${b.screenId}/logs`, apiKey)).json().data.id
    const a4 = await stored(apiKey, a, 'd')
    t.same(await listed(apiKey, a.screenId), [a4, a3])
    // B's first upload makes three in the workspace (a4, a3, B's): within its budget.
    h.clock.advance(1000)
    t.equal((await upload(h, pendingB, basic(b.screenId, b.deviceSecret), { lines: [line('2026-06-01T11:59:00.000Z', message('e'))] })).statusCode, 200)
    t.same(await listed(apiKey, a.screenId), [a4, a3], 'three uploads fit the workspace budget')
    const b2 = await stored(apiKey, b, 'f')
    t.same(await listed(apiKey, b.screenId), [b2, pendingB], "B's own two stay")
    t.same(await listed(apiKey, a.screenId), [a4], "the workspace's oldest upload (A's) went for B's second")
    t.same(await listed(otherKey, c.screenId), [c1], "another workspace's budget is its own")
  })
})

t.test('the storage budgets are settings: SVC_AGENT_LOG_SCREEN_BYTES and SVC_AGENT_LOG_WORKSPACE_BYTES, at least 1 MiB', async (t) => {
  t.match(loadConfig({}), { agentLogScreenBytes: 16 * 1024 * 1024, agentLogWorkspaceBytes: 256 * 1024 * 1024 }, 'the defaults')
  t.match(loadConfig({ SVC_AGENT_LOG_SCREEN_BYTES: '2097152', SVC_AGENT_LOG_WORKSPACE_BYTES: '1048576' }), {
    agentLogScreenBytes: 2 * 1024 * 1024,
    agentLogWorkspaceBytes: 1024 * 1024,
  })
  t.throws(() => loadConfig({ SVC_AGENT_LOG_SCREEN_BYTES: '1000' }), /SVC_AGENT_LOG_SCREEN_BYTES must be an integer >= 1048576/)
  t.throws(() => loadConfig({ SVC_AGENT_LOG_WORKSPACE_BYTES: 'lots' }), /SVC_AGENT_LOG_WORKSPACE_BYTES/)
})
