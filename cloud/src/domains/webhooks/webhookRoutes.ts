// /v1/webhooks: endpoints, the delivery log, test and replay, the event catalogue.
// Workspace root only (pinned keys refused); validation failures answer 400 bad_request.
// Reads need integration.view; changes, test and replay need integration.edit.
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { principalOf } from '../../platform/http/Principal.js'
import { parsePage } from '../../platform/paging.js'
import { ApiError, isApiError } from '../../platform/errors.js'
import { Data, ErrorBody, IdParams, LimitParam, Nullable, errorResponses } from '../../platform/contract.js'
import { EVENT_NAMES } from '../events/index.js'
import { EVENT_CATALOG } from './catalog.js'
import { CreatedEndpoint, WebhookDelivery, WebhookEndpoint } from './model.js'
import type { Provisions } from '../../platform/provisions.js'

const SendResult = Type.Object({
  deliveryId: Type.String(),
  ok: Type.Boolean({ description: 'The receiver answered 2xx.' }),
  status: Nullable(Type.Integer()),
  error: Nullable(Type.String({ description: 'For example `http 500`, a timeout, an unsafe address.' })),
})

const EventNameSchema = Type.String({ maxLength: 100, description: `One of ${EVENT_NAMES.join(', ')}.` })
const UrlSchema = Type.String({ minLength: 1, maxLength: 2000 })
const errors400 = { 400: ErrorBody, ...errorResponses }
const asBadRequest = (e: unknown): never => {
  if (isApiError(e) && e.code === 'validation_error') throw new ApiError('bad_request', e.message)
  throw e
}

const webhookRoutes =
  (d: Pick<Provisions, 'webhookEndpoints' | 'webhookQueue' | 'webhookSender'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { webhookEndpoints, webhookQueue, webhookSender } = d
    const view = { permission: 'integration.view', rootOnly: true, validationError: { status: 400, code: 'bad_request' } } as const
    const edit = { ...view, permission: 'integration.edit' } as const
    const tags = ['webhooks']

    app.get(
      '/webhooks',
      { config: view, schema: { tags, summary: 'List webhook endpoints', response: { 200: Data(Type.Array(WebhookEndpoint)), ...errors400 } } },
      async (req) => ({
        data: await webhookEndpoints.list(principalOf(req)),
      }),
    )

    app.post(
      '/webhooks',
      {
        config: edit,
        schema: {
          tags,
          summary: 'Create a webhook endpoint (the secret is shown once)',
          body: Type.Object({
            url: UrlSchema,
            events: Type.Optional(Type.Array(EventNameSchema, { maxItems: 50 })),
            description: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
          }),
          response: { 201: Data(CreatedEndpoint), ...errors400 },
        },
      },
      async (req, reply) => reply.code(201).send({ data: await webhookEndpoints.create(principalOf(req), req.body) }),
    )

    app.get(
      '/webhooks/events',
      {
        config: view,
        schema: {
          tags,
          summary: 'The events an endpoint can subscribe to',
          response: { 200: Data(Type.Array(Type.Object({ event: Type.String(), label: Type.String(), what: Type.String() }))), ...errors400 },
        },
      },
      async () => ({
        data: EVENT_CATALOG,
      }),
    )

    app.get(
      '/webhooks/deliveries',
      {
        config: view,
        schema: {
          tags,
          summary: 'The delivery log, newest first, always paged (kept 30 days)',
          querystring: Type.Object({
            limit: Type.Optional(LimitParam(200, 'Page size, 1 to 200, default 50.')),
            cursor: Type.Optional(Type.String({ maxLength: 400 })),
            endpointId: Type.Optional(Type.String({ maxLength: 100 })),
            status: Type.Optional(Type.String({ maxLength: 50, description: '`pending`, `delivered`, `failed` or `abandoned`; another value is ignored.' })),
          }),
          response: { 200: Type.Object({ data: Type.Array(WebhookDelivery), nextCursor: Nullable(Type.String()) }), ...errors400 },
        },
      },
      async (req) => {
        let page
        try {
          page = parsePage(req.query, { defaultLimit: 50, max: 200 })
        } catch (e) {
          asBadRequest(e)
        }
        const out = await webhookQueue.listDeliveries(principalOf(req), page!, { endpointId: req.query.endpointId, status: req.query.status })
        return { data: out.data, nextCursor: out.nextCursor ?? null }
      },
    )

    app.post(
      '/webhooks/deliveries/:id/replay',
      {
        config: edit,
        schema: { tags, summary: 'Resend a delivery as a new one (replayOf set)', params: IdParams, response: { 200: Data(SendResult), ...errors400 } },
      },
      async (req) => ({ data: await webhookSender.replay(principalOf(req), req.params.id) }),
    )

    app.get(
      '/webhooks/:id',
      { config: view, schema: { tags, summary: 'Get a webhook endpoint', params: IdParams, response: { 200: Data(WebhookEndpoint), ...errors400 } } },
      async (req) => ({
        data: await webhookEndpoints.get(principalOf(req), req.params.id),
      }),
    )

    app.patch(
      '/webhooks/:id',
      {
        config: edit,
        schema: {
          tags,
          summary: 'Change a webhook endpoint (enabled: true also clears an automatic switch-off)',
          params: IdParams,
          body: Type.Object({
            url: Type.Optional(UrlSchema),
            events: Type.Optional(Type.Array(EventNameSchema, { maxItems: 50 })),
            description: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
            enabled: Type.Optional(Type.Boolean()),
          }),
          response: { 200: Data(WebhookEndpoint), ...errors400 },
        },
      },
      async (req) => ({ data: await webhookEndpoints.update(principalOf(req), req.params.id, req.body) }),
    )

    app.delete(
      '/webhooks/:id',
      {
        config: edit,
        schema: {
          tags,
          summary: 'Delete a webhook endpoint (pending deliveries are abandoned)',
          params: IdParams,
          response: { 200: Data(Type.Object({ id: Type.String() })), ...errors400 },
        },
      },
      async (req) => ({ data: await webhookEndpoints.remove(principalOf(req), req.params.id) }),
    )

    app.post(
      '/webhooks/:id/test',
      {
        config: edit,
        schema: {
          tags,
          summary: 'Send a signed test screen.offline delivery now',
          params: IdParams,
          response: { 200: Data(SendResult), 409: ErrorBody, ...errors400 },
        },
      },
      async (req) => ({ data: await webhookSender.test(principalOf(req), req.params.id) }),
    )
  }
export default webhookRoutes
