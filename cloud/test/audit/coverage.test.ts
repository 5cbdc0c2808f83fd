// The audit log's coverage walk: EVERY write operation of the OpenAPI document (any method
// but GET, under /v1) is sent once, and each must leave an entry carrying its request id —
// in the caller's workspace, or in the cloud's own chain for what a device does before it
// belongs to a workspace. An operation added later is walked without anything added here;
// one the edge does not record fails this test. Only the operations that change nothing
// (previews, the MCP transport, whose tool calls are recorded as their own operations) are
// exempt, by name, below.
import t from 'tap'
import { servicesOf } from '../../src/app.js'
import { InMemoryContentResolver } from '../../src/domains/content/testing/InMemoryContentResolver.js'
import { build, makeKey } from '../helpers.js'
import { pairScreen } from '../screenHelpers.js'
import { PNG_1x1 } from '../content/fixtures.js'
import { capDoc } from '../cap/capDocs.js'

/** Writes that change nothing, so they are no entry: the only ones the walk lets through. */
const EXEMPT = new Set(['POST /v1/groups/preview', 'POST /v1/timeline/preview', 'POST /v1/mcp'])

const basic = (user: string, secret: string) => `Basic ${Buffer.from(`${user}:${secret}`).toString('base64')}`

t.test('every write operation of the OpenAPI document leaves an audit entry', async (t) => {
  const h = await build(t, {}, { content: InMemoryContentResolver.permissive() })
  const { apiKey } = await h.workspace()
  const doc = (await h.req('GET', '/v1/openapi.json', null)).json() as { paths: Record<string, Record<string, unknown>> }
  const ops: [method: string, path: string][] = []
  for (const [path, item] of Object.entries(doc.paths))
    for (const method of Object.keys(item)) if (['post', 'put', 'patch', 'delete'].includes(method)) ops.push([method.toUpperCase(), path])
  t.ok(ops.length > 100, `the walk sees the write operations (${ops.length})`)

  // The operations a credential cannot stand for: what lets each succeed, so it has a workspace (or a device).
  const screen = await pairScreen(h, apiKey, 'Walk screen')
  const shot = (await h.req('POST', `/v1/screens/${screen.screenId}/screenshot`, apiKey)).json().data.id as string
  const logs = (await h.req('POST', `/v1/screens/${screen.screenId}/logs`, apiKey)).json().data.id as string
  const invite = (await h.req('POST', '/v1/users', apiKey, { email: 'walk@example.com', role: 'viewer' })).json().data.inviteUrl as string
  const client = await makeKey(h, apiKey, ['node.view'])
  const feed = (await h.req('POST', '/v1/cap-feeds', apiKey, { name: 'Walk feed', contentKind: 'media', contentId: 'med_walk' })).json().data
  const special: Record<string, () => Promise<{ statusCode: number; headers: Record<string, unknown> }>> = {
    // A push feed's document, proven by the feed's secret: recorded in the feed's workspace.
    'POST /v1/cap-feeds/{id}/alerts': () =>
      h.app.inject({
        method: 'POST',
        url: `/v1/cap-feeds/${feed.id}/alerts`,
        headers: { 'content-type': 'application/cap+xml', authorization: `Bearer ${feed.pushSecret}` },
        payload: capDoc({ identifier: 'walk-1' }),
      }),
    'PUT /v1/devices/screenshots/{id}': () =>
      h.app.inject({
        method: 'PUT',
        url: `/v1/devices/screenshots/${shot}`,
        headers: { 'content-type': 'image/png', authorization: basic(screen.screenId, screen.deviceSecret) },
        payload: PNG_1x1,
      }),
    'PUT /v1/devices/agent-logs/{id}': () =>
      h.app.inject({
        method: 'PUT',
        url: `/v1/devices/agent-logs/${logs}`,
        headers: { 'content-type': 'application/json', authorization: basic(screen.screenId, screen.deviceSecret) },
        payload: { lines: [] },
      }),
    'POST /v1/invites/accept': () => h.req('POST', '/v1/invites/accept', null, { token: invite.split(/[#=/]/).pop(), password: 'a long enough password' }),
    'POST /v1/oauth/token': () =>
      h.req('POST', '/v1/oauth/token', null, { grant_type: 'client_credentials', client_id: client.id, client_secret: client.secret }),
    // A SAML answer for a workspace without a SAML provider: refused, and the refusal recorded.
    'POST /v1/sso/saml/acs': () =>
      h.app.inject({
        method: 'POST',
        url: '/v1/sso/saml/acs?workspace=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'SAMLResponse=bm90IHNhbWw%3D',
      }),
    'POST /v1/session': () => h.req('POST', '/v1/session', null, { email: 'nobody@example.com', password: 'not a password at all' }),
  }

  const db = servicesOf(h.app).db
  const missing: string[] = []
  for (const [method, path] of ops) {
    const name = `${method} ${path}`
    if (EXEMPT.has(name)) continue
    const send = special[name] ?? (() => h.req(method, path.replace(/\{[^}]+\}/g, 'x'), apiKey, method === 'DELETE' ? undefined : {}))
    const res = await send()
    const requestId = res.headers['x-svc-request-id'] as string
    const entry = await db.get<{ action: string }>('SELECT action FROM audit_entries WHERE request_id = ?', [requestId])
    if (!entry) missing.push(`${name} (answered ${res.statusCode})`)
  }
  t.same(missing, [], 'every write operation left an entry')
  // A document pushed with the feed's secret is the feed's write, in the feed's workspace.
  t.match(
    await db.get('SELECT chain, actor_kind, actor_id, via FROM audit_entries WHERE actor_id = ?', [feed.id]),
    { chain: feed.workspaceId ?? /^ws_/, actor_kind: 'system', actor_id: feed.id, via: 'api' },
    'the push is recorded as the feed, in its workspace',
  )
  for (const name of EXEMPT)
    t.ok(
      ops.some(([m, p]) => `${m} ${p}` === name),
      `${name} is still an operation (else drop it from EXEMPT)`,
    )
})
