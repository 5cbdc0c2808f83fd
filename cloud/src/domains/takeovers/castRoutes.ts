// /v1/casts: create (screen.cast), list newest first (status filter,
// limit default 200 max 500, no cursor), get, clear. Emergencies are domains/takeovers/emergencyRoutes.ts.
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { dryRan } from '../../platform/http/innerRequests.js'
import { principalOf } from '../../platform/http/Principal.js'
import { Data, IdParams, LimitParam, Paged, errorResponses } from '../../platform/contract.js'
import { pageQuery, parsePage } from '../../platform/paging.js'
import { ScreenReach } from './ReachReceipts.js'
import { validation } from '../../platform/errors.js'
import { CAST_STATUS_FILTERS, Cast } from './CastService.js'
import { SCOPE_KINDS, TAKEOVER_CONTENT_KINDS } from './Takeover.js'
import type { Provisions } from '../../platform/provisions.js'

const lit = <T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)))

/** Content and scope, shared with emergencies. */
export const TakeoverTarget = {
  contentKind: lit(TAKEOVER_CONTENT_KINDS),
  contentId: Type.String({ minLength: 1, maxLength: 100 }),
  scopeKind: Type.Optional(lit(SCOPE_KINDS)),
  screenIds: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 1000 })),
  scopeNodeId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  groupId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'scopeKind `group`: the group whose members it aims at.' })),
  contentName: Type.Optional(Type.String({ maxLength: 200 })),
}

export function parseListLimit(raw: string | undefined, def: number, max: number): number {
  if (raw === undefined) return def
  const n = Number(raw)
  if (!/^[0-9]{1,6}$/.test(raw) || n < 1 || n > max) throw validation(`limit must be an integer from 1 to ${max}.`)
  return n
}

const castRoutes =
  (d: Pick<Provisions, 'casts'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { casts } = d

    app.post(
      '/casts',
      {
        config: { permission: 'screen.cast' },
        schema: {
          tags: ['casts'],
          summary: 'Cast content to screens now (above their assignment, until cleared or expiresAt)',
          body: Type.Object(
            {
              ...TakeoverTarget,
              expiresAt: Type.Optional(
                Type.Union([Type.String({ maxLength: 40 }), Type.Integer({ minimum: 0 })], {
                  description: 'ISO 8601 date-time or epoch milliseconds; in the future.',
                }),
              ),
            },
            { additionalProperties: false },
          ),
          response: { 201: Data(Cast), ...errorResponses },
        },
      },
      async (req, reply) =>
        (await dryRan(req, reply, () => casts.plan(principalOf(req), req.body)))
          ? reply
          : reply.code(201).send({ data: await casts.create(principalOf(req), req.body) }),
    )

    app.get(
      '/casts',
      {
        config: { permission: 'screen.view' },
        schema: {
          tags: ['casts'],
          summary: 'List casts, newest first (no cursor)',
          querystring: Type.Object({
            status: Type.Optional(lit(CAST_STATUS_FILTERS)),
            limit: Type.Optional(LimitParam(500, 'How many, newest first: 1 to 500, default 200.')),
          }),
          response: { 200: Type.Object({ data: Type.Array(Cast) }), ...errorResponses },
        },
      },
      async (req) => ({ data: await casts.list(principalOf(req), { status: req.query.status, limit: parseListLimit(req.query.limit, 200, 500) }) }),
    )

    app.get(
      '/casts/:id',
      {
        config: { permission: 'screen.view' },
        schema: { tags: ['casts'], summary: 'Get a cast', params: IdParams, response: { 200: Data(Cast), ...errorResponses } },
      },
      async (req) => ({ data: await casts.get(principalOf(req), req.params.id) }),
    )

    app.get(
      '/casts/:id/screens',
      {
        config: { permission: 'screen.view' },
        schema: {
          tags: ['casts'],
          operationId: 'listCastScreens',
          summary:
            'Reach receipts: each screen the cast targeted and how far it got there (targeted, published, applied, displayed or unreachable), 100 per page unless limit says otherwise',
          params: IdParams,
          querystring: pageQuery(500),
          response: { 200: Paged(ScreenReach), ...errorResponses },
        },
      },
      async (req) => casts.screens(principalOf(req), req.params.id, parsePage(req.query, { defaultLimit: 100, max: 500 })),
    )

    app.post(
      '/casts/:id/clear',
      {
        config: { permission: 'screen.cast' },
        schema: {
          tags: ['casts'],
          summary: 'End a cast now; 409 already_inactive if it has ended',
          params: IdParams,
          response: { 200: Data(Cast), 409: errorResponses[404], ...errorResponses },
        },
      },
      async (req) => ({ data: await casts.clear(principalOf(req), req.params.id) }),
    )
  }
export default castRoutes
