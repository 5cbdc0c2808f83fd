// The typed client (cloud/src/client: openapi-fetch over types generated from the served
// document) against a real listening server: every read operation of the document, and
// the main writes (create, update, delete, upload, cast, clear). The calls are checked by
// the compiler, and the generated types must match what the server serves now, so a route
// change that breaks a caller breaks the suite.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import fs from 'node:fs'
import type { AddressInfo } from 'node:net'
import { build } from '../helpers.js'
import { pairScreen } from '../screenHelpers.js'
import { PNG_1x1, png } from '../content/fixtures.js'
import { fakeRelease, releaseForm } from '../fixtures/agentRelease.js'
import { InMemoryContentResolver } from '../../src/domains/content/testing/InMemoryContentResolver.js'
import { createApiClient, ok } from '../../src/client/index.js'
import { CLIENT_TYPES_FILE, generateClientTypes } from '../../scripts/openapi-types.js'
import { CA_FILE } from '../fixtures/receiver.js'
import { startOidcProvider } from '../fixtures/oidcProvider.js'
import { idpMetadata } from '../fixtures/samlIdp.js'

type Doc = { paths: Record<string, Record<string, unknown>> }

t.test('the checked-in client types are the ones the served document generates', async (t) => {
  const h = await build(t)
  const doc = (await h.req('GET', '/v1/openapi.json', null)).json()
  const fresh = await generateClientTypes(doc)
  t.ok(
    fresh === fs.readFileSync(CLIENT_TYPES_FILE, 'utf8'),
    'cloud/src/client/schema.gen.ts is current (regenerate: pnpm exec tsx cloud/scripts/openapi-types.ts)',
  )
})

t.test('every read operation and the main writes, through the typed client on a real socket', async (t) => {
  // The outbound guard lets the test's OpenID provider on localhost through (single sign-on below).
  const h = await build(t, { webhookAllowHosts: ['localhost'], webhookCaFile: CA_FILE }, { content: InMemoryContentResolver.permissive() })
  await h.app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`
  const { apiKey, workspaceId } = await h.workspace()
  const called = new Set<string>()
  const api = createApiClient(base, apiKey, {
    middleware: [
      {
        onResponse({ request, response, schemaPath }) {
          if (response.ok) called.add(`${request.method.toLowerCase()} ${schemaPath}`)
        },
      },
    ],
  })
  const anon = createApiClient(base, null)
  const doc = (await ok(anon.GET('/v1/openapi.json' as never))) as unknown as Doc

  // --- writes that make something to read ---
  const node = (await ok(api.POST('/v1/nodes', { body: { name: 'Lobby' } }))).data
  const renamed = (await ok(api.PATCH('/v1/nodes/{id}', { params: { path: { id: node.id } }, body: { name: 'Front lobby' } }))).data
  t.equal(renamed.name, 'Front lobby')
  const key = (await ok(api.POST('/v1/api-keys', { body: { name: 'ci', permissions: ['screen.view'] } }))).data
  t.match(key.secret, /^ak_/)

  const reg = (await ok(anon.POST('/v1/devices/register', { body: { model: 'QM55B' } }))).data
  const device = createApiClient(base, reg.pollSecret, {
    middleware: [{ onResponse: ({ request, response, schemaPath }) => void (response.ok && called.add(`${request.method.toLowerCase()} ${schemaPath}`)) }],
  })
  const waiting = (await ok(device.GET('/v1/devices/register/{id}', { params: { path: { id: reg.registrationId } } }))).data
  t.equal(waiting.state, 'pending')
  const screen = (await ok(api.POST('/v1/screens/pair', { body: { code: reg.pairingCode, name: 'Door' } }))).data
  t.equal(screen.name, 'Door')
  const other = await pairScreen(h, apiKey, 'Window')

  const form = new FormData()
  form.append('name', 'Logo')
  form.append('file', new Blob([PNG_1x1], { type: 'image/png' }), 'logo.png')
  const media = (await ok(api.POST('/v1/media/upload', { body: { file: new Blob([PNG_1x1]), name: 'Logo' }, bodySerializer: () => form }))).data
  t.equal(media.name, 'Logo')
  const upload = (await ok(api.POST('/v1/media/upload/multipart/initiate', { body: { name: 'Big' } }))).data
  const part = (
    await ok(
      api.PUT('/v1/media/upload/multipart/{id}/parts/{n}', {
        params: { path: { id: upload.id, n: '1' } },
        body: new Blob([PNG_1x1]),
        bodySerializer: (b: Blob) => b,
        headers: { 'content-type': 'application/octet-stream' },
      }),
    )
  ).data
  t.equal(part.sizeBytes, PNG_1x1.length)

  const folder = (await ok(api.POST('/v1/media-folders', { body: { name: 'Brand' } }))).data
  const playlist = (await ok(api.POST('/v1/playlists', { body: { name: 'Morning', items: [{ kind: 'media', id: media.id }] } }))).data
  const schedule = (
    await ok(
      api.POST('/v1/schedules', {
        body: {
          name: 'Week',
          timezone: 'Europe/London',
          rules: [{ id: 'r1', content: { kind: 'playlist', id: playlist.id }, priority: 1, start: '07:00', end: '11:00' }],
          fallback: null,
        },
      }),
    )
  ).data
  const creative = (await ok(api.POST('/v1/creatives', { body: { name: 'Sale' } }))).data
  const layout = (await ok(api.POST('/v1/layouts', { body: { name: 'Split' } }))).data
  const banner = (await ok(api.POST('/v1/banners', { body: { name: 'Ticker', text: 'Welcome' } }))).data
  const signage = (await ok(api.POST('/v1/signage-templates', { body: { name: 'Menu' } }))).data
  const app = (await ok(api.POST('/v1/app-instances', { body: { name: 'Clock', appKey: 'clock' } }))).data
  const celebration = (await ok(api.POST('/v1/celebration-entries', { body: { name: 'Ann', person: 'Ann', date: '2026-12-01' } }))).data
  const ids = {
    media: media.id,
    'media-folders': folder.id,
    playlists: playlist.id,
    schedules: schedule.id,
    creatives: creative.id,
    layouts: layout.id,
    banners: banner.id,
    'signage-templates': signage.id,
    'app-instances': app.id,
    'celebration-entries': celebration.id,
  }
  await ok(api.POST('/v1/playlists/{id}/shares', { params: { path: { id: playlist.id } }, body: { nodeId: node.id } }))

  const assigned = (
    await ok(api.POST('/v1/screens/{id}/assign', { params: { path: { id: screen.id } }, body: { contentKind: 'playlist', contentId: playlist.id } }))
  ).data
  t.equal(assigned.contentId, playlist.id)
  const cast = (await ok(api.POST('/v1/casts', { body: { contentKind: 'media', contentId: media.id, scopeKind: 'screens', screenIds: [other.screenId] } })))
    .data
  const emergency = (await ok(api.POST('/v1/emergencies', { body: { contentKind: 'media', contentId: media.id } }))).data
  const template = (await ok(api.POST('/v1/serial-templates', { body: { name: 'MDC', items: [{ name: 'on', value: 'AA 11 01 01 01 14', encoding: 'hex' }] } })))
    .data
  const job = (
    await ok(api.POST('/v1/screens/{id}/serial', { params: { path: { id: screen.id } }, body: { templateId: template.id, itemId: template.items[0]!.id } }))
  ).data
  await ok(api.PATCH('/v1/screens/{id}/panel', { params: { path: { id: screen.id } }, body: { protocol: 'samsung-mdc', setId: 1 } }))
  const hook = (await ok(api.POST('/v1/webhooks', { body: { url: 'https://hooks.example.com/signage', events: ['screen.offline'] } }))).data
  const rule = (
    await ok(api.POST('/v1/alert-rules', { body: { name: 'Panel off', config: { codes: ['display-off'], scopeKind: 'screen', scopeId: screen.id } } }))
  ).data
  await servicesOf(h.app).alerts.panelPowerReported(workspaceId, { id: screen.id, name: 'Door', nodeId: null }, 'off', true)

  // --- every read operation ---
  const path = (id: string) => ({ params: { path: { id } } })
  t.match((await ok(api.GET('/v1/me'))).data, { workspace: { id: workspaceId } })
  await ok(api.GET('/v1/api-keys', { params: { query: { limit: '10', count: '1' } } }))
  await ok(api.GET('/v1/api-keys/{id}', path(key.id)))
  await ok(api.GET('/v1/nodes'))
  await ok(api.GET('/v1/nodes/{id}', path(node.id)))
  await ok(api.GET('/v1/account'))
  t.ok((await ok(api.GET('/v1/account/limits'))).data)
  await ok(anon.GET('/v1/status'))
  called.add('get /v1/status')
  await ok(anon.GET('/v1/status/deprecations'))
  called.add('get /v1/status/deprecations')
  const screens = (await ok(api.GET('/v1/screens', { params: { query: { limit: '500' } } }))).data
  t.equal(screens.length, 2)
  t.equal((await ok(api.GET('/v1/screens/{id}', path(screen.id)))).data.contentId, playlist.id)
  t.equal((await ok(api.GET('/v1/screens/{id}/operating-hours', path(screen.id)))).data.effective, null)
  await ok(api.GET('/v1/nodes/{id}/operating-hours', path(node.id)))
  t.match((await ok(api.GET('/v1/screens/{id}/timeline', path(screen.id)))).data.segments[0], { source: 'emergency', emergencyId: emergency.id })
  // Tags and groups: the screen tagged, a dynamic group on the tag, read back through the client.
  await ok(api.PATCH('/v1/screens/{id}', { params: { path: { id: screen.id } }, body: { tags: ['floor:2'] } }))
  t.same((await ok(api.GET('/v1/tags'))).data, [{ tag: 'floor:2', count: 1 }])
  const group = (await ok(api.POST('/v1/groups', { body: { name: 'Second floor', kind: 'dynamic', rule: { all: [{ tag: 'floor:2' }] } } }))).data
  t.equal((await ok(api.GET('/v1/groups'))).data.length, 1)
  t.equal((await ok(api.GET('/v1/groups/{id}', path(group.id)))).data.memberCount, 1)
  t.same(
    (await ok(api.GET('/v1/groups/{id}/members', path(group.id)))).data.map((m) => m.id),
    [screen.id],
  )
  const polled = (await ok(device.GET('/v1/devices/register/{id}', path(reg.registrationId)))).data
  t.equal(polled.state, 'paired')
  await ok(api.GET('/v1/casts', { params: { query: { status: 'active' } } }))
  await ok(api.GET('/v1/casts/{id}', path(cast.id)))
  await ok(api.GET('/v1/casts/{id}/screens', path(cast.id)))
  await ok(api.GET('/v1/emergencies'))
  await ok(api.GET('/v1/emergencies/{id}', path(emergency.id)))
  t.match((await ok(api.GET('/v1/emergencies/{id}/screens', path(emergency.id)))).data[0], { state: 'unreachable' }, 'no device is connected')
  const capFeed = (await ok(api.POST('/v1/cap-feeds', { body: { name: 'Weather', contentKind: 'media', contentId: media.id } }))).data
  t.match(capFeed.pushSecret, /^capk_/)
  t.equal((await ok(api.GET('/v1/cap-feeds'))).data.length, 1)
  await ok(api.GET('/v1/cap-feeds/{id}', path(capFeed.id)))
  t.same((await ok(api.GET('/v1/cap-feeds/{id}/alerts', path(capFeed.id)))).data, [])
  await ok(api.GET('/v1/serial-templates'))
  await ok(api.GET('/v1/serial-templates/{id}', path(template.id)))
  await ok(api.GET('/v1/serial-jobs/{id}', path(job.id)))
  await ok(api.GET('/v1/screens/{id}/serial-jobs', path(screen.id)))
  t.match((await ok(api.GET('/v1/screens/{id}/panel', path(screen.id)))).data, { protocol: 'samsung-mdc' })
  for (const kind of [
    'media-folders',
    'playlists',
    'schedules',
    'creatives',
    'layouts',
    'banners',
    'signage-templates',
    'app-instances',
    'celebration-entries',
  ] as const) {
    await ok(api.GET(`/v1/${kind}`, { params: { query: { limit: '5' } } }))
    await ok(api.GET(`/v1/${kind}/{id}`, path(ids[kind])))
    await ok(api.GET(`/v1/${kind}/{id}/shares`, path(ids[kind])))
  }
  await ok(api.GET('/v1/media/{id}/shares', path(media.id)))
  t.ok((await ok(api.GET('/v1/apps/catalog'))).data.length > 0)
  const presets = (await ok(api.GET('/v1/serial-presets', { params: { query: { protocol: 'samsung-mdc', setId: '1' } } }))).data
  t.equal(presets[0]?.commands.find((c) => c.key === 'power.on')?.hexPreview, 'AA 11 01 01 01 14', 'a preset through the typed client')
  await ok(api.GET('/v1/media/upload/multipart/{id}', path(upload.id)))
  await ok(api.GET('/v1/media', { params: { query: { kind: 'image', count: '1' } } }))
  await ok(api.GET('/v1/media/{id}', path(media.id)))
  const whole = await api.GET('/v1/media/{id}/content', { ...path(media.id), parseAs: 'arrayBuffer' })
  t.equal(whole.response.status, 200)
  t.same(Buffer.from(whole.data as ArrayBuffer), PNG_1x1, 'the bytes uploaded come back')
  const range = await api.GET('/v1/media/{id}/content', { params: { path: { id: media.id }, header: { Range: 'bytes=0-7' } }, parseAs: 'arrayBuffer' })
  t.equal(range.response.status, 206)
  t.same(Buffer.from(range.data as ArrayBuffer), PNG_1x1.subarray(0, 8))
  const pictureForm = new FormData()
  pictureForm.append('file', new Blob([png(16, 9)], { type: 'image/png' }), 'picture.png')
  const picture = (await ok(api.POST('/v1/media/upload', { body: { file: new Blob([png(16, 9)]) }, bodySerializer: () => pictureForm }))).data
  await servicesOf(h.app).media.processPending()
  const thumb = await api.GET('/v1/media/{id}/thumbnail', { ...path(picture.id), parseAs: 'arrayBuffer' })
  t.equal(thumb.response.headers.get('content-type'), 'image/webp', "a file's thumbnail, made by the background probe")
  await ok(api.GET('/v1/webhooks'))
  await ok(api.GET('/v1/webhooks/events'))
  await ok(api.GET('/v1/webhooks/deliveries', { params: { query: { limit: '200' } } }))
  await ok(api.GET('/v1/webhooks/{id}', path(hook.id)))
  await ok(api.GET('/v1/alert-rules'))
  await ok(api.GET('/v1/alert-rules/{id}', path(rule.id)))
  const events = (await ok(api.GET('/v1/alert-events', { params: { query: { screenId: screen.id } } }))).data
  t.equal(events.length, 1, 'the panel-off report raised an alert event')
  await ok(api.GET('/v1/alert-events/{id}', path(events[0]!.id)))
  await ok(api.GET('/v1/serial-presets'))
  const invited = (await ok(api.POST('/v1/users', { body: { email: 'ada@example.com', name: 'Ada', role: 'viewer' } }))).data
  t.match(invited.sessionToken, /^ust_/)
  t.match(invited.inviteUrl, /\/console\/welcome#token=inv_/)
  // The invited user's session reads itself (the console uses a cookie; a bearer works too).
  const ada = createApiClient(base, invited.sessionToken, {
    middleware: [{ onResponse: ({ request, response, schemaPath }) => void (response.ok && called.add(`${request.method.toLowerCase()} ${schemaPath}`)) }],
  })
  t.equal((await ok(ada.GET('/v1/session'))).data.user.email, 'ada@example.com')
  // The live event stream answers text/event-stream; its first message is `ready`.
  const live = await api.GET('/v1/events/stream', { parseAs: 'stream' })
  t.match(live.response.headers.get('content-type'), /^text\/event-stream/)
  const reader = (live.data as ReadableStream<Uint8Array>).getReader()
  t.match(new TextDecoder().decode((await reader.read()).value), /retry: 3000/)
  await reader.cancel()
  await ok(api.GET('/v1/users', { params: { query: { limit: '10' } } }))
  t.equal((await ok(api.GET('/v1/users/{id}', path(invited.id)))).data.email, 'ada@example.com')
  t.equal((await ok(api.PATCH('/v1/users/{id}', { ...path(invited.id), body: { role: 'editor' } }))).data.role, 'editor')
  const issued = await ok(anon.POST('/v1/oauth/token', { body: { grant_type: 'client_credentials', client_id: key.id, client_secret: key.secret } }))
  t.equal(issued.token_type, 'Bearer')
  t.equal((await ok(createApiClient(base, issued.access_token).GET('/v1/me'))).data.actor.id, key.id, 'the OAuth token acts as its key')
  t.equal((await ok(anon.GET('/.well-known/oauth-authorization-server'))).grant_types_supported[0], 'client_credentials')
  called.add('get /.well-known/oauth-authorization-server')
  await ok(anon.GET('/.well-known/oauth-protected-resource'))
  called.add('get /.well-known/oauth-protected-resource')
  const plays = await ok(api.GET('/v1/screens/{id}/play-log', { params: { path: { id: screen.id }, query: { from: '2026-01-01T00:00:00Z', limit: '10' } } }))
  t.same(plays.data, [], 'no plays reported yet')
  const csv = await api.GET('/v1/play-log.csv', {
    params: { query: { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z', screenIds: screen.id } },
    parseAs: 'text',
  })
  t.equal(csv.response.status, 200)
  t.match(csv.data, /^screenId,startedAt,/, 'the CSV header line')
  const summary = (await ok(api.GET('/v1/play-log/summary', { params: { query: { from: '2026-01-01T00:00:00Z', to: '2026-03-01T00:00:00Z' } } }))) as {
    data: unknown[]
  }
  t.same(summary.data, [], 'no plays to sum yet')
  const availability = (await ok(
    api.GET('/v1/reports/availability', { params: { query: { from: '2026-05-01T00:00:00Z', to: '2026-06-01T00:00:00Z', groupBy: 'node' } } }),
  )) as { data: { groupBy: string } }
  t.equal(availability.data.groupBy, 'node')
  const subscription = (
    await ok(
      api.POST('/v1/report-subscriptions', {
        body: { report: 'proof-of-play', params: { groupBy: 'day' }, cadence: 'monthly', recipients: ['ops@example.com'] },
      }),
    )
  ).data
  t.same(
    (await ok(api.GET('/v1/report-subscriptions'))).data.map((s) => s.id),
    [subscription.id],
  )
  t.equal((await ok(api.GET('/v1/report-subscriptions/{id}', path(subscription.id)))).data.cadence, 'monthly')
  const policy = (await ok(api.PUT('/v1/nodes/{id}/approval-policy', { ...path(node.id), body: { required: true, approvers: [invited.id] } }))).data
  t.equal(policy.effective.required, true)
  t.same((await ok(api.GET('/v1/nodes/{id}/approval-policy', path(node.id)))).data.approvers, [invited.id])
  const editorKey = (await ok(api.POST('/v1/api-keys', { body: { name: 'editor', permissions: ['playlist.edit', 'approval.request'] } }))).data
  const held = (await ok(createApiClient(base, editorKey.secret).POST('/v1/playlists', { body: { name: 'Held', nodeId: node.id } }))).data
  const requestId = (held as { approval?: { requestId: string } }).approval!.requestId
  t.same(
    (await ok(api.GET('/v1/approvals', { params: { query: { state: 'pending', limit: '10' } } }))).data.map((r) => r.id),
    [requestId],
  )
  t.equal((await ok(api.GET('/v1/approvals/{id}', path(requestId)))).data.contentName, 'Held')
  t.equal((await ok(api.POST('/v1/approvals/{id}/approve', { ...path(requestId), body: {} }))).data.state, 'approved')

  // --- the MCP endpoint: initialize, a tool call, the session's event stream, its end ---
  const accept = { accept: 'application/json, text/event-stream' }
  const init = await api.POST('/v1/mcp', {
    headers: accept,
    body: {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'typed', version: '1' } },
    },
  })
  t.equal(init.response.status, 200)
  const session = { 'mcp-session-id': init.response.headers.get('mcp-session-id') ?? '', 'mcp-protocol-version': '2025-11-25' }
  const toolCall = await ok(
    api.POST('/v1/mcp', {
      headers: accept,
      params: { header: session },
      body: { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'getScreen', arguments: { id: screen.id } } },
    }),
  )
  t.match(toolCall, { id: 2, result: { structuredContent: { data: { id: screen.id } } } }, 'a tool answers the route’s JSON')
  const stream = await api.GET('/v1/mcp', { headers: { accept: 'text/event-stream' }, params: { header: session }, parseAs: 'stream' })
  t.equal(stream.response.status, 200)
  t.match(live.response.headers.get('content-type'), /^text\/event-stream/)
  await stream.response.body?.cancel()
  t.equal((await api.DELETE('/v1/mcp', { params: { header: session } })).response.status, 200)

  // A screenshot of the other screen, uploaded as its agent would (device credential, PNG).
  const shot = (await ok(api.POST('/v1/screens/{id}/screenshot', path(other.screenId)))).data
  t.equal(shot.status, 'queued')
  const pngHead = png(16, 9)
  const uploaded = await fetch(`${base}/v1/devices/screenshots/${shot.id}`, {
    method: 'PUT',
    headers: { 'content-type': 'image/png', authorization: `Basic ${Buffer.from(`${other.screenId}:${other.deviceSecret}`).toString('base64')}` },
    body: pngHead,
  })
  t.equal(uploaded.status, 200)
  t.match((await ok(api.GET('/v1/screenshots/{id}', path(shot.id)))).data, { status: 'ok', width: 16, height: 9 })
  const pngBack = await api.GET('/v1/screenshots/{id}/image', { ...path(shot.id), parseAs: 'arrayBuffer' })
  t.same(Buffer.from(pngBack.data as ArrayBuffer), pngHead, 'the PNG back')
  const shotThumb = await api.GET('/v1/screenshots/{id}/thumbnail', { ...path(shot.id), parseAs: 'arrayBuffer' })
  t.equal(shotThumb.response.headers.get('content-type'), 'image/webp', 'its thumbnail')

  // The other screen's recent log lines, uploaded as its agent would (device credential, JSON).
  const logs = (await ok(api.POST('/v1/screens/{id}/logs', { ...path(other.screenId), body: { lines: 10 } }))).data
  t.match(logs, { state: 'pending', maxLines: 10, lines: [] })
  const logLine = { at: '2026-06-01T11:59:00.000Z', level: 'warn' as const, source: 'agent' as const, message: 'link lost' }
  const sentLogs = await fetch(`${base}/v1/devices/agent-logs/${logs.id}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${other.screenId}:${other.deviceSecret}`).toString('base64')}` },
    body: JSON.stringify({ lines: [logLine] }),
  })
  t.equal(sentLogs.status, 200)
  t.match((await ok(api.GET('/v1/agent-logs/{id}', path(logs.id)))).data, { state: 'done', lineCount: 1, lines: [logLine] })
  t.same(
    (await ok(api.GET('/v1/screens/{id}/agent-logs', { params: { path: { id: other.screenId }, query: { limit: '5' } } }))).data.map((x) => x.id),
    [logs.id],
  )

  // The audit log: the device's upload is in it, as the device's; the chain verifies.
  const audited = (await ok(api.GET('/v1/audit-log', { params: { query: { resourceId: logs.id, limit: '10' } } }))) as { data: unknown[] }
  t.match(audited.data[0], { action: 'device.agent-logs.update', via: 'device', actor: { kind: 'device', id: other.screenId } })
  t.match(await ok(api.GET('/v1/audit-log/verify')), { ok: true, firstBroken: null })

  // An agent release and a rollout to the other screen, which reports its architecture as its
  // agent would (in-process through the broker), then downloads the tarball it was sent.
  const fake = await fakeRelease(t, { version: '9.1.0' })
  const release = (
    await ok(api.POST('/v1/agent-releases', { body: { file: new Blob([fake.bytes]), signature: fake.signature }, bodySerializer: () => releaseForm(fake) }))
  ).data
  t.match(release, { version: '9.1.0', arch: 'x64' })
  t.equal((await ok(api.GET('/v1/agent-releases/{id}', path(release.id)))).data.sha256, fake.sha256)
  t.equal((await ok(api.GET('/v1/agent-releases', { params: { query: { version: '9.1.0' } } }))).data.length, 1)
  const { broker, presence } = servicesOf(h.app)
  const reportedNow = {
    version: 0,
    playing: { source: 'none', contentKind: null, contentId: null },
    agentVersion: '9.0.0',
    agentArch: 'x64',
    at: new Date().toISOString(),
  }
  await new Promise<void>((resolve, reject) =>
    broker.aedes.publish(
      {
        cmd: 'publish',
        topic: `svc/v1/screens/${other.screenId}/reported`,
        payload: Buffer.from(JSON.stringify(reportedNow)),
        qos: 1,
        retain: false,
        dup: false,
      },
      (err?: Error) => (err ? reject(err) : resolve()),
    ),
  )
  await presence.idle()
  const rollout = (await ok(api.POST('/v1/agent-rollouts', { body: { version: '9.1.0', screenIds: [other.screenId], stages: [100] } }))).data
  t.match(rollout, { state: 'running', counts: { screens: 1, pending: 1 } })
  t.equal((await ok(api.GET('/v1/agent-rollouts/{id}', path(rollout.id)))).data.id, rollout.id)
  t.equal((await ok(api.GET('/v1/agent-rollouts', {}))).data[0]?.id, rollout.id)
  t.match((await ok(api.GET('/v1/agent-rollouts/{id}/screens', path(rollout.id)))).data, [{ screenId: other.screenId, releaseId: release.id }])
  const deviceApi = createApiClient(base, null, {
    headers: { authorization: `Basic ${Buffer.from(`${other.screenId}:${other.deviceSecret}`).toString('base64')}` },
    middleware: [{ onResponse: ({ request, response, schemaPath }) => void (response.ok && called.add(`${request.method.toLowerCase()} ${schemaPath}`)) }],
  })
  const tarball = await deviceApi.GET('/v1/devices/agent-releases/{id}/tarball', { ...path(release.id), parseAs: 'arrayBuffer' })
  t.same(Buffer.from(tarball.data as ArrayBuffer), fake.bytes, 'the tarball, downloaded with the device credential')
  t.equal((await ok(api.POST('/v1/agent-rollouts/{id}/abort', path(rollout.id)))).data.state, 'aborted')

  // --- single sign-on: settings, the e-mail lookup, and a browser's sign-in through a real OpenID provider ---
  const idp = await startOidcProvider({ redirectUris: [`${base}/v1/sso/oidc/callback`] })
  t.after(() => idp.close())
  idp.accounts.set('ada', { email: 'ada@sso.example' })
  const sso = (
    await ok(
      api.PUT('/v1/sso', {
        body: { protocol: 'oidc', issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, emailDomains: ['sso.example'] },
      }),
    )
  ).data
  if (sso.protocol !== 'oidc') throw new Error('the answer is an OIDC provider')
  t.equal(sso.redirectUri, `${base}/v1/sso/oidc/callback`)
  const readBack = (await ok(api.GET('/v1/sso'))).data
  t.equal(readBack.protocol === 'oidc' ? readBack.issuer : null, idp.issuer)
  t.equal((await ok(api.GET('/v1/sso/lookup', { params: { query: { email: 'ada@sso.example' } } }))).data.sso, true)
  const started = await api.GET('/v1/sso/start', { params: { query: { email: 'ada@sso.example' } } })
  const stateCookie = started.response.headers
    .getSetCookie()
    .find((c) => c.startsWith('svc_sso_state='))!
    .split(';')[0]!
  const back = await idp.signIn(started.data!.data.url, 'ada')
  const landed = await api.GET('/v1/sso/oidc/callback', {
    params: { query: Object.fromEntries(back.searchParams) },
    headers: { cookie: stateCookie },
    parseAs: 'text',
  })
  t.equal(landed.response.status, 200, 'signed in through the provider')
  t.match(landed.response.headers.getSetCookie().join(), /svc_session=ust_/)

  // --- SAML: the workspace's SP metadata; SCIM: the token (made, then whether there is one) ---
  const saml = (await ok(api.PUT('/v1/sso', { body: { protocol: 'saml', idpMetadataXml: idpMetadata(), emailDomains: ['sso.example'] } }))).data
  if (saml.protocol !== 'saml') throw new Error('the answer is a SAML provider')
  const metadata = await api.GET('/v1/sso/saml/metadata', {
    params: { query: { workspace: new URL(saml.metadataUrl).searchParams.get('workspace')! } },
    parseAs: 'text',
  })
  t.equal(metadata.response.status, 200, 'the SP metadata')
  t.match((await ok(api.POST('/v1/sso/scim-token'))).data.token, /^scim_/)
  t.ok((await ok(api.GET('/v1/sso/scim-token'))).data.createdAt, 'a SCIM token exists')

  // --- update, clear, delete ---
  t.equal((await ok(api.PATCH('/v1/screens/{id}', { ...path(screen.id), body: { name: 'Front door' } }))).data.name, 'Front door')
  t.equal((await ok(api.POST('/v1/casts/{id}/clear', path(cast.id)))).data.status, 'cleared')
  await ok(api.POST('/v1/emergencies/{id}/clear', path(emergency.id)))
  const again = await api.POST('/v1/casts/{id}/clear', path(cast.id))
  t.equal(again.response.status, 409)
  t.equal(again.error?.error, 'already_inactive', 'a documented error answer is typed too')
  await ok(api.DELETE('/v1/webhooks/{id}', path(hook.id)))
  await ok(api.DELETE('/v1/screens/{id}', path(other.screenId)))
  await ok(api.DELETE('/v1/api-keys/{id}', path(key.id)))
  await ok(api.DELETE('/v1/users/{id}', path(invited.id)))

  // every read operation of the document was called, and answered 2xx
  const reads = Object.entries(doc.paths).flatMap(([p, item]) =>
    Object.keys(item)
      .filter((m) => m === 'get')
      .map((m) => `${m} ${p}`),
  )
  t.same(
    reads.filter((r) => !called.has(r)),
    [],
    `all ${reads.length} read operations called`,
  )
  t.ok(reads.length >= 60)
  await h.app.close()
})
