// /v1/alert-rules (CRUD, soft delete) and /v1/alert-events (what fired, open and closed).
// Rules: alert.view / alert.edit; events: alert.view. Lists page newest first (default
// 100, max 500). Webhook and chat URLs in a rule's config are masked in every answer.
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { principalOf } from '../../platform/http/Principal.js'
import { parsePage, PageQuery } from '../../platform/paging.js'
import { Data, Deleted, ErrorBody, IdParams, Nullable, Paged, errorResponses } from '../../platform/contract.js'
import { AlertRule, CreatedRule } from './AlertRuleService.js'
import { AlertEvent } from './AlertEventView.js'
import type { Provisions } from '../../platform/provisions.js'

const RuleBody = {
  name: Type.String({ maxLength: 500 }),
  trigger: Type.Optional(Type.String({ maxLength: 100 })),
  config: Type.Object({}, { additionalProperties: true }),
  enabled: Type.Optional(Type.Boolean()),
  nodeId: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
}

const alertRoutes =
  (d: Pick<Provisions, 'alertRules' | 'alerts'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { alertRules, alerts } = d
    const tags = ['alerts']

    app.get(
      '/alert-rules',
      {
        config: { permission: 'alert.view' },
        schema: {
          tags,
          summary: 'List alert rules (newest first)',
          querystring: Type.Intersect([PageQuery, Type.Object({ search: Type.Optional(Type.String({ maxLength: 200 })) })]),
          response: { 200: Paged(AlertRule), ...errorResponses },
        },
      },
      async (req) => alertRules.list(principalOf(req), parsePage(req.query, { defaultLimit: 100, max: 500 }), req.query.search),
    )

    app.post(
      '/alert-rules',
      {
        config: { permission: 'alert.edit' },
        schema: { tags, summary: 'Create an alert rule', body: Type.Object(RuleBody), response: { 201: Data(CreatedRule), 400: ErrorBody, ...errorResponses } },
      },
      async (req, reply) => reply.code(201).send({ data: await alertRules.create(principalOf(req), req.body) }),
    )

    app.get(
      '/alert-rules/:id',
      {
        config: { permission: 'alert.view' },
        schema: { tags, summary: 'Get an alert rule', params: IdParams, response: { 200: Data(AlertRule), ...errorResponses } },
      },
      async (req) => ({
        data: await alertRules.get(principalOf(req), req.params.id),
      }),
    )

    app.patch(
      '/alert-rules/:id',
      {
        config: { permission: 'alert.edit' },
        schema: {
          tags,
          summary: 'Change an alert rule (masked URLs sent back unchanged are kept)',
          params: IdParams,
          body: Type.Object({
            name: Type.Optional(RuleBody.name),
            trigger: RuleBody.trigger,
            config: Type.Optional(RuleBody.config),
            enabled: RuleBody.enabled,
            nodeId: RuleBody.nodeId,
          }),
          response: { 200: Data(AlertRule), 400: ErrorBody, ...errorResponses },
        },
      },
      async (req) => ({ data: await alertRules.update(principalOf(req), req.params.id, req.body) }),
    )

    app.delete(
      '/alert-rules/:id',
      {
        config: { permission: 'alert.edit' },
        schema: { tags, summary: 'Delete an alert rule (soft delete)', params: IdParams, response: { 200: Data(Deleted), ...errorResponses } },
      },
      async (req) => ({
        data: await alertRules.remove(principalOf(req), req.params.id),
      }),
    )

    app.get(
      '/alert-events',
      {
        config: { permission: 'alert.view' },
        schema: {
          tags,
          summary: 'Alert events (newest first)',
          querystring: Type.Intersect([
            PageQuery,
            Type.Object({
              state: Type.Optional(Type.String({ description: '`open` or `closed`; another value is ignored.' })),
              screenId: Type.Optional(Type.String({ maxLength: 100 })),
              code: Type.Optional(Type.String({ maxLength: 100 })),
              ruleId: Type.Optional(Type.String({ maxLength: 100 })),
            }),
          ]),
          response: { 200: Paged(AlertEvent), ...errorResponses },
        },
      },
      async (req) => alerts.list(principalOf(req), parsePage(req.query, { defaultLimit: 100, max: 500 }), req.query),
    )

    app.get(
      '/alert-events/:id',
      {
        config: { permission: 'alert.view' },
        schema: { tags, summary: 'Get an alert event', params: IdParams, response: { 200: Data(AlertEvent), ...errorResponses } },
      },
      async (req) => ({
        data: await alerts.get(principalOf(req), req.params.id),
      }),
    )
  }
export default alertRoutes
