// /v1/nodes: the location tree (create, list, get, rename/move, delete).
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { principalOf } from '../../platform/http/Principal.js'
import { parsePage, PageQuery } from '../../platform/paging.js'
import { Data, Deleted, IdParams, Nullable, Paged, errorResponses } from '../../platform/contract.js'
import { Node, NodeKindSchema as Kind } from './NodeService.js'
import type { Provisions } from '../../platform/provisions.js'

const nodeRoutes =
  (d: Pick<Provisions, 'nodes'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { nodes } = d

    app.post(
      '/nodes',
      {
        config: { permission: 'node.edit', idempotent: true },
        schema: {
          tags: ['locations'],
          summary: 'Create a location',
          body: Type.Object(
            {
              name: Type.String({ minLength: 1, maxLength: 200 }),
              kind: Type.Optional(Kind),
              parentId: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
            },
            { additionalProperties: false },
          ),
          response: { 201: Data(Node), ...errorResponses },
        },
      },
      async (req, reply) => reply.code(201).send({ data: await nodes.create(principalOf(req), { ...req.body, kind: req.body.kind ?? 'location' }) }),
    )

    app.get(
      '/nodes',
      {
        config: { permission: 'node.view' },
        schema: {
          tags: ['locations'],
          summary: 'List locations (newest first)',
          querystring: Type.Intersect([
            PageQuery,
            Type.Object({ parentId: Type.Optional(Type.String({ maxLength: 100 })), search: Type.Optional(Type.String({ maxLength: 200 })) }),
          ]),
          response: { 200: Paged(Node), ...errorResponses },
        },
      },
      async (req) =>
        nodes.list(principalOf(req), parsePage(req.query, { defaultLimit: null, max: 500 }), { parentId: req.query.parentId, search: req.query.search }),
    )

    app.get(
      '/nodes/:id',
      {
        config: { permission: 'node.view' },
        schema: { tags: ['locations'], summary: 'Get a location', params: IdParams, response: { 200: Data(Node), ...errorResponses } },
      },
      async (req) => ({ data: await nodes.get(principalOf(req), req.params.id) }),
    )

    app.patch(
      '/nodes/:id',
      {
        config: { permission: 'node.edit' },
        schema: {
          tags: ['locations'],
          summary: 'Rename or move a location, or set its point and geocodes',
          params: IdParams,
          body: Type.Object(
            {
              name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
              kind: Type.Optional(Kind),
              parentId: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
              geo: Type.Optional(
                Nullable(
                  Type.Object(
                    { lat: Type.Number({ minimum: -90, maximum: 90 }), lon: Type.Number({ minimum: -180, maximum: 180 }) },
                    { additionalProperties: false, description: 'The location\'s point (WGS 84), for CAP feeds with areaMatch "geo"; null removes it.' },
                  ),
                ),
              ),
              geocodes: Type.Optional(
                Type.Array(Type.String({ minLength: 3, maxLength: 101 }), {
                  maxItems: 50,
                  description: 'Geocodes as `valueName:value` (e.g. `SAME:006037`); [] removes them.',
                }),
              ),
            },
            { additionalProperties: false },
          ),
          response: { 200: Data(Node), ...errorResponses },
        },
      },
      async (req) => ({ data: await nodes.update(principalOf(req), req.params.id, req.body) }),
    )

    app.delete(
      '/nodes/:id',
      {
        config: { permission: 'node.edit' },
        schema: {
          tags: ['locations'],
          summary: 'Delete an empty location (409 node_not_empty otherwise)',
          params: IdParams,
          response: { 200: Data(Deleted), 409: errorResponses[404], ...errorResponses },
        },
      },
      async (req) => ({ data: await nodes.remove(principalOf(req), req.params.id) }),
    )
  }
export default nodeRoutes
