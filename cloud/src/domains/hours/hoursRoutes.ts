// Operating hours, on locations and on screens:
//   GET|PUT|DELETE /v1/nodes/:id/operating-hours      (node.view / node.edit)
//   GET|PUT|DELETE /v1/screens/:id/operating-hours    (screen.view / screen.edit)
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { OperatingHoursSchema } from '@svc/shared/schedule/index'
import { Data, IdParams, errorResponses } from '../../platform/contract.js'
import { principalOf } from '../../platform/http/Principal.js'
import type { Provisions } from '../../platform/provisions.js'
import { HoursView } from './OperatingHoursService.js'

const hoursRoutes =
  (d: Pick<Provisions, 'operatingHours'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const hours = d.operatingHours
    for (const [kind, base, tag, view, edit, what] of [
      ['node', '/nodes/:id/operating-hours', 'nodes', 'node.view', 'node.edit', 'location'],
      ['screen', '/screens/:id/operating-hours', 'screens', 'screen.view', 'screen.edit', 'screen'],
    ] as const) {
      const Op = kind === 'node' ? 'Node' : 'Screen'
      app.get(
        base,
        {
          config: { permission: view },
          schema: {
            tags: [tag],
            operationId: `get${Op}OperatingHours`,
            summary: `The ${what}'s operating hours (its own) and the effective ones with their source`,
            params: IdParams,
            response: { 200: Data(HoursView), ...errorResponses },
          },
        },
        async (req) => ({ data: await hours.get(principalOf(req), kind, req.params.id) }),
      )
      app.put(
        base,
        {
          config: { permission: edit },
          schema: {
            tags: [tag],
            operationId: `put${Op}OperatingHours`,
            summary: `Set the ${what}'s operating hours: weekly windows (local time) and exceptions by date; its screens get them in their desired state`,
            params: IdParams,
            body: OperatingHoursSchema,
            response: { 200: Data(HoursView), ...errorResponses },
          },
        },
        async (req) => ({ data: await hours.put(principalOf(req), kind, req.params.id, req.body) }),
      )
      app.delete(
        base,
        {
          config: { permission: edit },
          schema: {
            tags: [tag],
            operationId: `delete${Op}OperatingHours`,
            summary: `Remove the ${what}'s own operating hours (it inherits again)`,
            params: IdParams,
            response: { 200: Data(HoursView), ...errorResponses },
          },
        },
        async (req) => ({ data: await hours.remove(principalOf(req), kind, req.params.id) }),
      )
    }
  }

export default hoursRoutes
