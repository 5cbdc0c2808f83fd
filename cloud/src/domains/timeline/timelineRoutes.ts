// What a screen will play, and why, and what a write would change:
//   GET  /v1/screens/:id/timeline     segments over a window (default the next 24 h, at most 31 days)
//   POST /v1/timeline/preview         every screen a write would touch, before and after (nothing is written)
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Data, IdParams, errorResponses } from '../../platform/contract.js'
import { INNER_REQUEST_HEADER, openInnerRequest } from '../../platform/http/innerRequests.js'
import { principalOf } from '../../platform/http/Principal.js'
import { REQUEST_ID_HEADER } from '../../platform/http/requestId.js'
import { DateTimeField } from '../../platform/timeRange.js'
import { PREVIEW_MAX_DAYS, PreviewAnswer, PreviewBody } from './PreviewService.js'
import type { Provisions } from '../../platform/provisions.js'
import { Timeline } from './TimelineService.js'

const timelineRoutes =
  (d: Pick<Provisions, 'timeline' | 'timelinePreview'>): FastifyPluginAsyncTypebox =>
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
              from: Type.Optional(DateTimeField('Window start, an ISO 8601 date-time with a zone (default: now, or 24 h before `to`).')),
              to: Type.Optional(DateTimeField('Window end, exclusive (default: 24 h after `from`).')),
            },
            { additionalProperties: false },
          ),
          response: { 200: Data(Timeline), ...errorResponses },
        },
      },
      async (req) => ({ data: await d.timeline.forScreen(principalOf(req), req.params.id, req.query) }),
    )

    app.post(
      '/timeline/preview',
      {
        // Stores nothing (the write it previews runs as a dry run): not an audit log entry.
        config: { permission: 'screen.view', audit: false },
        schema: {
          tags: ['screens'],
          operationId: 'previewTimeline',
          summary: 'What a write would change: every screen it would touch, with its timeline before and after; nothing is written',
          description:
            'Takes an assignment, a bulk assignment, a schedule create or update, a cast or an emergency as `request` (method, path, body). ' +
            "The write is checked exactly as if it were sent (the caller's permissions, pins and the body), and answers the same error when it would be refused; " +
            `nothing is stored, published, announced or counted against idempotency. Window: default the next 24 hours, at most ${PREVIEW_MAX_DAYS} days; screens are paged.`,
          body: PreviewBody,
          response: { 200: PreviewAnswer, ...errorResponses },
        },
      },
      async (req, reply) => {
        const preview = d.timelinePreview
        const { method, path } = preview.check(req.body)
        preview.window(req.body)
        const inner = openInnerRequest({ dryRun: true })
        try {
          const body = req.body.request.body
          const res = await app.inject({
            method: method as 'POST',
            url: path,
            remoteAddress: req.ip,
            headers: {
              ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
              ...(req.headers.cookie ? { cookie: req.headers.cookie } : {}),
              [INNER_REQUEST_HEADER]: inner.ticket,
              [REQUEST_ID_HEADER]: req.id,
              ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
            },
            ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
          })
          // Refused: the same answer the write would get.
          if (res.statusCode >= 400)
            return reply
              .code(res.statusCode)
              .type('application/json')
              .send(res.body as never)
          if (res.statusCode !== 204 || inner.dryRun?.plan == null) throw new Error(`preview: ${method} ${path} answered ${res.statusCode} without a plan`)
          // JSON text built by the service (the schema above documents it).
          return reply.type('application/json; charset=utf-8').send((await preview.preview(principalOf(req), inner.dryRun.plan, req.body)) as never)
        } finally {
          inner.close()
        }
      },
    )
  }

export default timelineRoutes
