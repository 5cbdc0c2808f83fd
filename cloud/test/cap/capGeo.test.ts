// areaMatch "geo": locations carry a point and geocodes (PATCH /v1/nodes/<id>), a screen takes
// its nearest location's, and a CAP alert reaches only the target screens inside its
// <polygon> or <circle> (radius in km) or sharing a <geocode>. The geometry is checked at the
// antimeridian and near a pole.
import t from 'tap'
import { inCircle, inPolygon } from '../../src/domains/cap/ScreenGeo.js'
import { startCloud } from '../devicelink/link.js'
import { capDoc } from './capDocs.js'

t.test('a polygon crossing the antimeridian and a circle near the pole', async (t) => {
  // Around Fiji/Tonga: from 178°E to 178°W, as CAP writes it (lat,lon pairs).
  const ring: [number, number][] = [
    [-15, 178],
    [-15, -178],
    [-20, -178],
    [-20, 178],
    [-15, 178],
  ]
  t.ok(inPolygon({ lat: -17, lon: 179.5 }, ring), 'east of the line, inside')
  t.ok(inPolygon({ lat: -17, lon: -179.5 }, ring), 'west of the line, inside')
  t.notOk(inPolygon({ lat: -17, lon: 170 }, ring), 'far west of it: outside')
  t.notOk(inPolygon({ lat: -17, lon: -170 }, ring), 'far east of it: outside')
  t.notOk(inPolygon({ lat: -17, lon: 0 }, ring), 'the other side of the world')
  // Near the North Pole, meridians converge: 89.9°N 0° and 89.9°N 180° are 22 km apart.
  const pole = { lat: 89.9, lon: 0, radiusKm: 25 }
  t.ok(inCircle({ lat: 89.9, lon: 180 }, pole), 'across the pole, within 25 km')
  t.ok(inCircle({ lat: 90, lon: 45 }, pole), 'the pole itself')
  t.notOk(inCircle({ lat: 89.5, lon: 180 }, pole), '66 km away across the pole')
  t.ok(inCircle({ lat: 38.5, lon: -120 }, { lat: 38.5, lon: -120.1, radiusKm: 9 }), 'kilometres, not metres: 8.7 km inside 9')
  t.notOk(inCircle({ lat: 38.5, lon: -120 }, { lat: 38.5, lon: -120.1, radiusKm: 8 }))
})

t.test('areaMatch geo reaches only the screens inside the polygon, the circle or a shared geocode', async (t) => {
  const c = await startCloud(t)
  c.content.add(c.workspaceId, { kind: 'media', id: 'med_map' })
  const loc = async (name: string, patch: object, parentId?: string) => {
    const id = (await c.call('POST', '/v1/nodes', { name, kind: 'location', ...(parentId ? { parentId } : {}) })).body.data.id as string
    const res = await c.call('PATCH', `/v1/nodes/${id}`, patch)
    t.equal(res.status, 200, res.body.message)
    return id
  }
  // Inside the standard's example polygon (Tuolumne/Calaveras/Alpine), outside it, and a county by geocode.
  const sonora = await loc('Sonora campus', { geo: { lat: 38.47, lon: -119.9 } })
  const sacramento = await loc('Sacramento office', { geo: { lat: 38.58, lon: -121.49 } })
  const county = await loc('Alpine county', { geocodes: ['SAME:006003'] })
  const room = await loc('Room 2', {}, sonora)
  t.match((await c.call('GET', `/v1/nodes/${sonora}`)).body.data, { geo: { lat: 38.47, lon: -119.9 }, geocodes: [] })
  t.equal((await c.call('PATCH', `/v1/nodes/${county}`, { geocodes: ['no colon'] })).status, 422)
  t.equal((await c.call('PATCH', `/v1/nodes/${county}`, { geo: { lat: 91, lon: 0 } })).status, 422)
  const screens: Record<string, string> = {}
  for (const [name, nodeId] of [
    ['in room', room],
    ['sacramento', sacramento],
    ['county', county],
    ['nowhere', null],
  ] as const) {
    const s = await c.pair(name)
    if (nodeId) t.equal((await c.call('PATCH', `/v1/screens/${s.screenId}`, { nodeId })).status, 200)
    screens[name] = s.screenId
  }
  const feed = (await c.call('POST', '/v1/cap-feeds', { name: 'Geo', areaMatch: 'geo', contentKind: 'media', contentId: 'med_map' })).body.data
  const area =
    '<areaDesc>TUOLUMNE AND ALPINE</areaDesc><polygon>38.47,-120.14 38.34,-119.95 38.52,-119.74 38.62,-119.89 38.47,-120.14</polygon><geocode><valueName>SAME</valueName><value>006003</value></geocode>'
  const pushed = async (identifier: string, areaXml: string) => {
    const res = await fetch(`http://127.0.0.1:${c.running.httpPort}/v1/cap-feeds/${feed.id}/alerts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${feed.pushSecret}`, 'content-type': 'application/cap+xml' },
      body: capDoc({ identifier, area: areaXml }),
    })
    return ((await res.json()) as any).data
  }
  let r = await pushed('GEO1', area)
  t.equal(r.state, 'started')
  const reached = async (emergencyId: string) =>
    ((await c.call('GET', `/v1/emergencies/${emergencyId}/screens?limit=100`)).body.data as { screenId: string }[]).map((x) => x.screenId).sort()
  t.same(await reached(r.emergencyId), [screens['in room'], screens.county].sort(), 'the room takes its campus point; the county its geocode')
  t.match((await c.call('GET', `/v1/cap-feeds/${feed.id}/alerts`)).body.data[0], { screensTargeted: 2 })

  // A circle around Sacramento (radius in km) reaches that office only.
  r = await pushed('GEO2', '<areaDesc>SACRAMENTO</areaDesc><circle>38.58,-121.40 10</circle>')
  t.same(await reached(r.emergencyId), [screens.sacramento])
  // An area containing no target screen starts nothing.
  r = await pushed('GEO3', '<areaDesc>ELSEWHERE</areaDesc><circle>0,0 1</circle>')
  t.match(r, { state: 'ignored', emergencyId: null })
})
