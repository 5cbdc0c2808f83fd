// Which of a target's screens are inside a CAP alert's area (areaMatch "geo"). A screen takes
// the point and the geocodes of its nearest location that has them; it is inside when its
// point is in a <polygon> (Turf's point-in-polygon; a polygon crossing the antimeridian is
// read with its western longitudes shifted by 360°) or within a <circle>'s radius (Turf's
// great-circle distance, in kilometres: right near the poles too), or when one of its
// geocodes is among the area's.
import booleanPointInPolygon from '@turf/boolean-point-in-polygon'
import distance from '@turf/distance'
import { point, polygon } from '@turf/helpers'
import type { Principal } from '../../platform/http/Principal.js'
import type { NodeService } from '../nodes/index.js'
import { resolveSelection, type GroupConditions, type ScreenRecords, type TargetScope } from '../screens/index.js'
import type { CapArea } from './capXml.js'
import type { GeoMatcher } from './geo.js'

type LatLon = { lat: number; lon: number }

/** True when the [lat, lon] ring crosses the antimeridian (a step of more than 180° in longitude). */
function crossesAntimeridian(ring: [number, number][]): boolean {
  for (let i = 1; i < ring.length; i++) if (Math.abs(ring[i]![1] - ring[i - 1]![1]) > 180) return true
  return false
}

export function inPolygon(p: LatLon, ring: [number, number][]): boolean {
  const shift = crossesAntimeridian(ring)
  const lon = (x: number) => (shift && x < 0 ? x + 360 : x)
  return booleanPointInPolygon(point([lon(p.lon), p.lat]), polygon([ring.map(([la, lo]) => [lon(lo), la])]))
}

export function inCircle(p: LatLon, c: { lat: number; lon: number; radiusKm: number }): boolean {
  return distance(point([p.lon, p.lat]), point([c.lon, c.lat]), { units: 'kilometers' }) <= c.radiusKm
}

export function inside(p: LatLon | null, geocodes: readonly string[], areas: readonly CapArea[]): boolean {
  for (const a of areas) {
    if (p && a.polygons.some((ring) => inPolygon(p, ring))) return true
    if (p && a.circles.some((c) => inCircle(p, c))) return true
    if (geocodes.some((g) => a.geocodes.includes(g))) return true
  }
  return false
}

export class ScreenGeo implements GeoMatcher {
  constructor(
    private readonly nodes: NodeService,
    private readonly screens: ScreenRecords,
    private readonly groups: GroupConditions,
  ) {}

  async inside(p: Principal, target: TargetScope, areas: CapArea[]): Promise<string[]> {
    const selection = await resolveSelection(this.nodes, p, target, { groups: this.groups })
    const screens = await this.screens.targets(p.workspaceId, selection.filter)
    const geo = await this.nodes.geoOf(p.workspaceId)
    // The nearest location (itself, then up) with a point, and the nearest with geocodes.
    const pointOf = (nodeId: string | null): LatLon | null => {
      for (let id = nodeId, hops = 0; id && hops < 100; id = geo.get(id)?.parentId ?? null, hops++) {
        const g = geo.get(id)?.geo
        if (g) return g
      }
      return null
    }
    const codesOf = (nodeId: string | null): string[] => {
      for (let id = nodeId, hops = 0; id && hops < 100; id = geo.get(id)?.parentId ?? null, hops++) {
        const g = geo.get(id)?.geocodes
        if (g?.length) return g
      }
      return []
    }
    return screens.filter((s) => inside(pointOf(s.node_id), codesOf(s.node_id), areas)).map((s) => s.id)
  }
}
