// What a screen will play, and why:
//   GET /v1/screens/:id/timeline     segments over a window (default the next 24 h, at most 31 days)
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Data, IdParams, errorResponses } from '../../platform/contract.js'
import { principalOf } from '../../platform/http/Principal.js'
import type { Provisions } from '../provisions.js'
import { Timeline } from './TimelineService.js'

const timelineRoutes =
  (d: Pick<Provisions, 'timeline'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/screens/:id/timeline',
      {
        config: { permission: 'screen.view' },
        schema: {
          tags: ['screens'],
          operationId: 'getScreenTimeline',
          summary: 'What the screen will play and why: segments with the winning emergency, cast or schedule rule, what it overrides, and a reason',
          description:
            "Computed from the screen's desired state with the decision its player makes (emergency, then the newest cast, then the assignment or its schedule), in the screen's time zone and across DST changes. Default window: the next 24 hours; at most 31 days.",
          params: IdParams,
          querystring: Type.Object(
            {
              from: Type.Optional(Type.String({ maxLength: 64, description: 'Window start, ISO 8601 (default: now, or 24 h before `to`).' })),
              to: Type.Optional(Type.String({ maxLength: 64, description: 'Window end, exclusive (default: 24 h after `from`).' })),
            },
            { additionalProperties: false },
          ),
          response: { 200: Data(Timeline), ...errorResponses },
        },
      },
      async (req) => ({ data: await d.timeline.forScreen(principalOf(req), req.params.id, req.query) }),
    )
  }

export default timelineRoutes
