// /v1/api-keys: create (secret shown once), list, get, rotate (new secret shown once), revoke.
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { principalOf } from '../../platform/http/Principal.js'
import { parsePage, PageQuery } from '../../platform/paging.js'
import { Data, ErrorBody, IdParams, Nullable, Paged, errorResponses } from '../../platform/contract.js'
import { ApiKey } from './ApiKeyService.js'
import type { Provisions } from '../../platform/provisions.js'

const ApiKeyWithSecret = Type.Intersect([ApiKey, Type.Object({ secret: Type.String({ description: 'The full key. Shown only in this answer.' }) })])

const CreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    permissions: Type.Union([Type.Literal('all'), Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100 })]),
    nodeId: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
    expiresAt: Type.Optional(Nullable(Type.String({ maxLength: 40 }))),
  },
  { additionalProperties: false },
)

const apiKeyRoutes =
  (d: Pick<Provisions, 'apiKeys' | 'workspaces'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { apiKeys, workspaces } = d
    const regionOf = async (workspaceId: string) => (await workspaces.require(workspaceId)).region

    app.post(
      '/api-keys',
      {
        config: { permission: 'api-key.create' },
        schema: { tags: ['api-keys'], summary: 'Create an API key', body: CreateBody, response: { 201: Data(ApiKeyWithSecret), ...errorResponses } },
      },
      async (req, reply) => {
        const p = principalOf(req)
        const { key, secret } = await apiKeys.create(p, await regionOf(p.workspaceId), req.body)
        return reply.code(201).send({ data: { ...key, secret } })
      },
    )

    app.get(
      '/api-keys',
      {
        config: { permission: 'api-key.view' },
        schema: { tags: ['api-keys'], summary: 'List API keys (newest first)', querystring: PageQuery, response: { 200: Paged(ApiKey), ...errorResponses } },
      },
      async (req) => apiKeys.list(principalOf(req), parsePage(req.query, { defaultLimit: null, max: 500 })),
    )

    app.get(
      '/api-keys/:id',
      {
        config: { permission: 'api-key.view' },
        schema: { tags: ['api-keys'], summary: 'Get an API key', params: IdParams, response: { 200: Data(ApiKey), ...errorResponses } },
      },
      async (req) => ({ data: await apiKeys.get(principalOf(req), req.params.id) }),
    )

    app.post(
      '/api-keys/:id/rotate',
      {
        config: { permission: 'api-key.create' },
        schema: {
          tags: ['api-keys'],
          summary: 'Replace the secret (the old one stops working at once)',
          params: IdParams,
          response: { 200: Data(ApiKeyWithSecret), 409: ErrorBody, ...errorResponses },
        },
      },
      async (req) => {
        const p = principalOf(req)
        const { key, secret } = await apiKeys.rotate(p, req.params.id, await regionOf(p.workspaceId))
        return { data: { ...key, secret } }
      },
    )

    app.post(
      '/api-keys/:id/revoke',
      {
        config: { permission: 'api-key.revoke' },
        schema: {
          tags: ['api-keys'],
          summary: 'Revoke an API key (409 revoked if it already is)',
          params: IdParams,
          response: { 200: Data(ApiKey), 409: ErrorBody, ...errorResponses },
        },
      },
      async (req) => ({ data: await apiKeys.revoke(principalOf(req), req.params.id) }),
    )

    app.delete(
      '/api-keys/:id',
      {
        config: { permission: 'api-key.revoke' },
        schema: {
          tags: ['api-keys'],
          summary: 'Revoke an API key (same as POST …/revoke)',
          params: IdParams,
          response: { 200: Data(ApiKey), 409: ErrorBody, ...errorResponses },
        },
      },
      async (req) => ({ data: await apiKeys.revoke(principalOf(req), req.params.id) }),
    )
  }
export default apiKeyRoutes
