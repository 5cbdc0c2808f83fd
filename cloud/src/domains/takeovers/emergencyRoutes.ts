// /v1/emergencies: start (emergency.manage), list, get and the reach receipts of its screens
// (emergency.view), clear (→ screensReleased; again → 409 already_inactive).
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { dryRan } from '../../platform/http/innerRequests.js'
import { principalOf } from '../../platform/http/Principal.js'
import { Data, IdParams, LimitParam, Paged, StringEnum, errorResponses } from '../../platform/contract.js'
import { PRESENTATIONS } from './takeoverSchemas.js'
import { pageQuery, parsePage } from '../../platform/paging.js'
import { ScreenReach } from './ReachReceipts.js'
import { EMERGENCY_STATUSES, Emergency } from './EmergencyService.js'
import { TakeoverTarget, parseListLimit } from './castRoutes.js'
import type { Provisions } from '../../platform/provisions.js'

const emergencyRoutes =
  (d: Pick<Provisions, 'emergencies'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { emergencies } = d

    app.post(
      '/emergencies',
      {
        config: { permission: 'emergency.manage' },
        schema: {
          tags: ['emergencies'],
          summary: 'Start an emergency: content above everything on the target screens until cleared',
          body: Type.Object(
            {
              ...TakeoverTarget,
              message: Type.Optional(Type.String({ maxLength: 1000 })),
              presentation: Type.Optional(
                StringEnum(PRESENTATIONS, { description: '`fullscreen` (default) or `banner`: the message in a band over the running content.' }),
              ),
            },
            { additionalProperties: false },
          ),
          response: { 201: Data(Emergency), ...errorResponses },
        },
      },
      async (req, reply) =>
        (await dryRan(req, reply, () => emergencies.plan(principalOf(req), req.body)))
          ? reply
          : reply.code(201).send({ data: await emergencies.start(principalOf(req), req.body) }),
    )

    app.get(
      '/emergencies',
      {
        config: { permission: 'emergency.view' },
        schema: {
          tags: ['emergencies'],
          summary: 'List emergencies, newest first',
          querystring: Type.Object({
            status: Type.Optional(Type.Union(EMERGENCY_STATUSES.map((s) => Type.Literal(s)))),
            limit: Type.Optional(LimitParam(500, 'How many, newest first: 1 to 500, default 200.')),
          }),
          response: { 200: Type.Object({ data: Type.Array(Emergency) }), ...errorResponses },
        },
      },
      async (req) => ({ data: await emergencies.list(principalOf(req), { status: req.query.status, limit: parseListLimit(req.query.limit, 200, 500) }) }),
    )

    app.get(
      '/emergencies/:id',
      {
        config: { permission: 'emergency.view' },
        schema: { tags: ['emergencies'], summary: 'Get an emergency', params: IdParams, response: { 200: Data(Emergency), ...errorResponses } },
      },
      async (req) => ({ data: await emergencies.get(principalOf(req), req.params.id) }),
    )

    app.get(
      '/emergencies/:id/screens',
      {
        config: { permission: 'emergency.view' },
        schema: {
          tags: ['emergencies'],
          operationId: 'listEmergencyScreens',
          summary:
            'Reach receipts: each screen the emergency targeted and how far it got there (targeted, published, applied, displayed or unreachable), 100 per page unless limit says otherwise',
          params: IdParams,
          querystring: pageQuery(500),
          response: { 200: Paged(ScreenReach), ...errorResponses },
        },
      },
      async (req) => emergencies.screens(principalOf(req), req.params.id, parsePage(req.query, { defaultLimit: 100, max: 500 })),
    )

    app.post(
      '/emergencies/:id/clear',
      {
        config: { permission: 'emergency.manage' },
        schema: {
          tags: ['emergencies'],
          summary: 'Clear an emergency; 409 already_inactive if it was cleared',
          params: IdParams,
          response: { 200: Data(Emergency), 409: errorResponses[404], ...errorResponses },
        },
      },
      async (req) => ({ data: await emergencies.clear(principalOf(req), req.params.id) }),
    )
  }
export default emergencyRoutes
