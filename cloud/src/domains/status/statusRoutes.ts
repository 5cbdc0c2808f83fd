// Platform status (Auth: none): GET /v1/status (JSON or ?format=text) and the
// deprecation list. Both answer 200 even during an outage.
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Data, ErrorBody, Nullable, StringEnum, Timestamp } from '../../platform/contract.js'
import { DEPRECATION_POLICY, NOTICE_DAYS, deprecationEntry, type Deprecation } from '../../platform/http/deprecations.js'
import { DAY_STATES, Incident, PLATFORM_STATES, statusText } from './StatusService.js'
import type { Provisions } from '../../platform/provisions.js'

const Status = Type.Object({
  state: StringEnum(PLATFORM_STATES),
  computedAt: Nullable(Timestamp),
  stale: Type.Boolean(),
  latency: Nullable(Type.Object({ databaseMs: Nullable(Type.Number()), brokerMs: Nullable(Type.Number()) })),
  incidents: Type.Array(Incident),
  recent: Type.Array(Incident),
  days: Type.Array(Type.Object({ date: Type.String(), state: StringEnum(DAY_STATES) })),
})

export default function statusRoutes(d: Pick<Provisions, 'status'>, deprecations: Deprecation[]): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/status',
      {
        config: { auth: 'none' },
        schema: {
          tags: ['status'],
          summary: 'Platform status',
          querystring: Type.Object({ format: Type.Optional(Type.Literal('text', { description: '`text`: a plain-text summary instead of JSON.' })) }),
          response: {
            200: {
              description: 'The status: JSON, or with `?format=text` a plain-text summary.',
              content: { 'application/json': { schema: Data(Status) }, 'text/plain': { schema: Type.String() } },
            },
            422: ErrorBody,
          },
        },
      },
      async (req, reply) => {
        let current
        try {
          // Computed when a measurement or an incident changes it; both renderings come ready-made.
          current = await d.status.current()
        } catch (err) {
          // 200 even during an outage: a database that cannot be read is reported, not thrown.
          req.log.error({ err }, 'status view failed; answering from memory')
          const view = d.status.unavailableView(err)
          if (req.query.format === 'text') return reply.type('text/plain; charset=utf-8').send(statusText(view))
          return { data: view }
        }
        if (req.query.format === 'text') return reply.type('text/plain; charset=utf-8').send(current.text)
        return reply.type('application/json; charset=utf-8').send(current.json)
      },
    )

    app.get(
      '/status/deprecations',
      {
        config: { auth: 'none' },
        schema: {
          tags: ['status'],
          summary: 'Retiring routes',
          response: {
            200: Data(
              Type.Object({
                noticeDays: Type.Integer(),
                policy: Type.String(),
                deprecations: Type.Array(
                  Type.Object({
                    route: Type.String(),
                    announced: Type.String(),
                    sunset: Type.String(),
                    replacement: Nullable(Type.String()),
                    why: Type.String(),
                    noticeDays: Type.Integer(),
                  }),
                ),
              }),
            ),
          },
        },
      },
      async () => ({ data: { noticeDays: NOTICE_DAYS, policy: DEPRECATION_POLICY, deprecations: deprecations.map(deprecationEntry) } }),
    )
  }
}
