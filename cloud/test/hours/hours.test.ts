// Operating hours through the API: set on a location, inherited by the screens at or under
// it (GET shows the effective hours and their source), a screen's own win, removing them
// inherits again; the effective hours travel in the screen's desired state, republished on
// each change; bad bodies name the field; tenancy and permissions.
import t, { type Test } from 'tap'
import { servicesOf } from '../../src/app.js'
import { build, makeKey } from '../helpers.js'
import { pairScreen } from '../screenHelpers.js'

const HOURS = { weekly: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], on: '07:00', off: '22:00' }], exceptions: [{ date: '2026-12-25', off: true }] }
const LATE = { weekly: [{ days: ['sat', 'sun'], on: '10:00', off: '18:00' }], exceptions: [] }

async function setup(t: Test) {
  const h = await build(t)
  const { apiKey, workspaceId } = await h.workspace()
  const node = async (name: string, parentId: string | null) => (await h.req('POST', '/v1/nodes', apiKey, { name, parentId })).json().data.id as string
  const region = await node('North', null)
  const store = await node('Store 12', region)
  const screen = await pairScreen(h, apiKey, 'Window', store)
  const desired = async () => (await servicesOf(h.app).desiredState.build(workspaceId, screen.screenId))!
  return { h, apiKey, workspaceId, region, store, screenId: screen.screenId, desired }
}

t.test('a location’s hours are inherited down the tree; a screen’s own win; removing them inherits again; the desired state carries them', async (t) => {
  const { h, apiKey, region, store, screenId, desired } = await setup(t)
  const get = async (path: string) => (await h.req('GET', path, apiKey)).json().data
  t.same(await get(`/v1/screens/${screenId}/operating-hours`), { ownerKind: 'screen', ownerId: screenId, hours: null, effective: null })
  t.equal((await desired()).operatingHours, undefined, 'none travel')

  const before = (await get(`/v1/screens/${screenId}`)).desiredVersion
  const put = await h.req('PUT', `/v1/nodes/${region}/operating-hours`, apiKey, HOURS)
  t.equal(put.statusCode, 200, put.body)
  t.same(put.json().data, { ownerKind: 'node', ownerId: region, hours: HOURS, effective: { hours: HOURS, source: { kind: 'node', id: region } } })
  await servicesOf(h.app).desiredPublisher.idle()
  t.ok((await get(`/v1/screens/${screenId}`)).desiredVersion > before, 'the screens under it were republished')
  t.same(await get(`/v1/screens/${screenId}/operating-hours`), {
    ownerKind: 'screen',
    ownerId: screenId,
    hours: null,
    effective: { hours: HOURS, source: { kind: 'node', id: region } },
  })
  t.same(await get(`/v1/nodes/${store}/operating-hours`), {
    ownerKind: 'node',
    ownerId: store,
    hours: null,
    effective: { hours: HOURS, source: { kind: 'node', id: region } },
  })
  t.same((await desired()).operatingHours, HOURS)

  t.equal((await h.req('PUT', `/v1/screens/${screenId}/operating-hours`, apiKey, LATE)).statusCode, 200)
  t.same((await get(`/v1/screens/${screenId}/operating-hours`)).effective, { hours: LATE, source: { kind: 'screen', id: screenId } }, 'its own win')
  t.same((await desired()).operatingHours, LATE)

  const removed = await h.req('DELETE', `/v1/screens/${screenId}/operating-hours`, apiKey)
  t.equal(removed.statusCode, 200)
  t.same(removed.json().data.effective, { hours: HOURS, source: { kind: 'node', id: region } }, 'inherits again')
  t.same((await desired()).operatingHours, HOURS)
})

t.test('bad bodies name the field and change nothing; tenancy and permissions', async (t) => {
  const { h, apiKey, region, screenId } = await setup(t)
  const bad = await h.req('PUT', `/v1/nodes/${region}/operating-hours`, apiKey, { weekly: [{ days: ['mon'], on: '7am', off: '22:00' }], exceptions: [] })
  t.equal(bad.statusCode, 422)
  t.equal(bad.json().error, 'validation_error')
  t.match(bad.json().message, /weekly/)
  const badDate = await h.req('PUT', `/v1/nodes/${region}/operating-hours`, apiKey, { weekly: [], exceptions: [{ date: '2026-02-30', off: true }] })
  t.same(badDate.json(), { error: 'validation_error', message: 'exceptions[0].date: "2026-02-30" is not a date; use YYYY-MM-DD' })
  t.equal((await h.req('GET', `/v1/nodes/${region}/operating-hours`, apiKey)).json().data.hours, null, 'nothing stored')

  const other = await h.workspace('Other')
  t.equal((await h.req('GET', `/v1/screens/${screenId}/operating-hours`, other.apiKey)).statusCode, 404)
  t.equal((await h.req('PUT', `/v1/nodes/${region}/operating-hours`, other.apiKey, HOURS)).statusCode, 404)
  const viewer = await makeKey(h, apiKey, ['screen.view', 'node.view'])
  t.equal((await h.req('GET', `/v1/screens/${screenId}/operating-hours`, viewer.secret)).statusCode, 200)
  t.equal((await h.req('PUT', `/v1/screens/${screenId}/operating-hours`, viewer.secret, HOURS)).statusCode, 403)
  t.equal((await h.req('DELETE', `/v1/nodes/${region}/operating-hours`, viewer.secret)).statusCode, 403)
})
