// Agent updates and location pins, through the HTTP interface on both engines: a key pinned
// to a location sees and acts on the rollouts whose screens are all within it (any other
// is 404 to it, as another workspace's would be, and the one-open-rollout conflict does
// not name it); releases belong to the whole workspace and refuse pinned keys (403).
import t from 'tap'
import { forEngines } from '../db/engines.js'
import { makeKey } from '../helpers.js'
import { pairScreen } from '../screenHelpers.js'
import { fakeRelease, releaseMultipart } from '../fixtures/agentRelease.js'

forEngines(t, (t, build) => {
  t.test(
    'a pinned key: rollouts reaching outside its location are invisible (404), its own are its to run; releases are for workspace-wide keys',
    async (t) => {
      const h = await build(t)
      const { apiKey } = await h.workspace()
      const node = async (name: string) => (await h.req('POST', '/v1/nodes', apiKey, { name })).json().data.id as string
      const north = await node('North')
      const south = await node('South')
      const n1 = await pairScreen(h, apiKey, 'N1', north)
      const s1 = await pairScreen(h, apiKey, 'S1', south)
      const pinned = (await makeKey(h, apiKey, ['account.edit', 'screen.view'], north)).secret
      const rel = await fakeRelease(t, { version: '2.0.0' })
      const form = releaseMultipart(rel)
      const uploaded = await h.req('POST', '/v1/agent-releases', apiKey, form.body, { 'content-type': form.contentType })
      t.equal(uploaded.statusCode, 201)
      const releaseId = uploaded.json().data.id

      // The owner's rollout to the other location: invisible to the pinned key.
      const rollout = (body: object, key = apiKey) =>
        h.req('POST', '/v1/agent-rollouts', key, { version: '2.0.0', abortIf: { unhealthyPercent: 100 }, ...body })
      const southward = await rollout({ nodeId: south })
      t.equal(southward.statusCode, 201)
      const sid = southward.json().data.id
      t.same((await h.req('GET', '/v1/agent-rollouts', pinned)).json().data, [], 'not listed')
      t.equal((await h.req('GET', '/v1/agent-rollouts?count=1&limit=10', pinned)).json().total, 0, 'not counted')
      for (const [method, path] of [
        ['GET', ''],
        ['GET', '/screens'],
        ['POST', '/pause'],
        ['POST', '/resume'],
        ['POST', '/abort'],
      ] as const) {
        const res = await h.req(method, `/v1/agent-rollouts/${sid}${path}`, pinned)
        t.equal(res.statusCode, 404, `${method} ${path || '/'}: 404`)
        t.match(res.json(), { error: 'not_found', message: 'No such agent rollout.' })
      }
      t.equal((await h.req('GET', `/v1/agent-rollouts/${sid}`, apiKey)).json().data.state, 'running', 'still running: the pinned key changed nothing')
      const busy = await rollout({}, pinned)
      t.equal(busy.statusCode, 409)
      t.notMatch(busy.json().message, sid, 'the conflict does not name a rollout the key cannot see')
      t.equal((await h.req('POST', `/v1/agent-rollouts/${sid}/abort`, apiKey)).statusCode, 200)

      // A rollout over every screen reaches both locations: invisible too.
      const everywhere = (await rollout({})).json().data
      t.equal(everywhere.counts.screens, 2)
      t.equal((await h.req('GET', `/v1/agent-rollouts/${everywhere.id}`, pinned)).statusCode, 404)
      t.equal((await h.req('POST', `/v1/agent-rollouts/${everywhere.id}/pause`, pinned)).statusCode, 404)
      t.equal((await h.req('POST', `/v1/agent-rollouts/${everywhere.id}/abort`, apiKey)).statusCode, 200)

      // The pinned key's own rollout (every screen it reaches: North's) is its to see and run; the owner sees it too.
      const own = await rollout({}, pinned)
      t.equal(own.statusCode, 201)
      const oid = own.json().data.id
      t.equal(own.json().data.counts.screens, 1)
      t.same(
        (await h.req('GET', `/v1/agent-rollouts/${oid}/screens`, pinned)).json().data.map((s: { screenId: string }) => s.screenId),
        [n1.screenId],
      )
      t.same(
        (await h.req('GET', '/v1/agent-rollouts', pinned)).json().data.map((r: { id: string }) => r.id),
        [oid],
        'only its own is listed',
      )
      t.equal((await h.req('POST', `/v1/agent-rollouts/${oid}/pause`, pinned)).json().data.state, 'paused')
      t.equal((await h.req('POST', `/v1/agent-rollouts/${oid}/resume`, pinned)).json().data.state, 'running')
      t.equal((await h.req('GET', '/v1/agent-rollouts', apiKey)).json().data.length, 3, 'the owner sees every rollout')

      // A screen moved out of the location takes the rollout out of the key's sight.
      t.equal((await h.req('PATCH', `/v1/screens/${n1.screenId}`, apiKey, { nodeId: south })).statusCode, 200)
      t.equal((await h.req('GET', `/v1/agent-rollouts/${oid}`, pinned)).statusCode, 404)
      t.equal((await h.req('POST', `/v1/agent-rollouts/${oid}/abort`, pinned)).statusCode, 404)
      t.equal((await h.req('POST', `/v1/agent-rollouts/${oid}/abort`, apiKey)).json().data.state, 'aborted')
      t.ok(s1.screenId)

      // Releases: workspace-wide credentials only.
      const other = releaseMultipart(await fakeRelease(t, { version: '2.0.1' }))
      const up = await h.req('POST', '/v1/agent-releases', pinned, other.body, { 'content-type': other.contentType })
      t.equal(up.statusCode, 403, 'a pinned key cannot upload')
      t.match(up.json(), { error: 'forbidden', message: /workspace-wide credential/ })
      t.equal((await h.req('DELETE', `/v1/agent-releases/${releaseId}`, pinned)).statusCode, 403, 'nor delete')
      t.equal((await h.req('GET', '/v1/agent-releases', pinned)).statusCode, 403, 'nor list')
      t.equal((await h.req('GET', `/v1/agent-releases/${releaseId}`, pinned)).statusCode, 403, 'nor read')
      t.equal((await h.req('GET', '/v1/agent-releases', apiKey)).json().data.length, 1, 'the release is still there')
    },
  )
})
