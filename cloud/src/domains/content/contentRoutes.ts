// Routes of every generic content kind (media folders, playlists, schedules, creatives,
// layouts, banners, signage templates, app instances, celebration entries), generated
// from the definition table in domains/content/kinds.ts; plus what all kinds share,
// media included: /shares and /recall|/restore. GET /v1/apps/catalog lists the app types.
import { OptionalKind, Type, type TProperties, type TSchema } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Permission } from '@svc/shared'
import { dryRan } from '../../platform/http/innerRequests.js'
import { principalOf } from '../../platform/http/Principal.js'
import { optionalPage, PageQuery } from '../../platform/paging.js'
import { Data, Deleted, IdParams, Nullable, Paged, Timestamp, errorResponses } from '../../platform/contract.js'
import { KINDS, RECALLABLE, type Body, type ContentKind } from './kinds.js'
import { APP_CATALOG } from './appCatalog.js'
import type { Provisions } from '../../platform/provisions.js'

/** Common fields of every content item; kind-specific fields ride along (objects are open). */
export const ContentItem = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    nodeId: Nullable(Type.String({ description: 'Home location; null = workspace root.' })),
    sharedWith: Type.Array(Type.String(), { description: 'Locations the item is shared with beyond its home subtree.' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { additionalProperties: true },
)

const Share = Type.Object({ nodeId: Type.String(), createdAt: Timestamp })
const ShareParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }), nodeId: Type.String({ minLength: 1, maxLength: 100 }) })
const Recalled = Type.Object({ id: Type.String(), kind: Type.String(), name: Type.String(), recalledAt: Nullable(Timestamp) }, { additionalProperties: true })
const ListQuery = Type.Intersect([PageQuery, Type.Object({ search: Type.Optional(Type.String({ maxLength: 200 })) })])

/** The schema without TypeBox's optional marker: a required property. */
function withoutOptional(s: TSchema): TSchema {
  const { [OptionalKind]: _optional, ...required } = s as TSchema & { [OptionalKind]?: unknown }
  return required as TSchema
}

/** Paths and permissions of the shared routes (shares, recall) per kind. */
const SHARED: { kind: ContentKind; path: string; tag: string; view: Permission; edit: Permission }[] = [
  { kind: 'media', path: 'media', tag: 'media', view: 'media.view', edit: 'media.edit' },
  ...KINDS.map((d) => ({ kind: d.kind, path: d.path, tag: d.tag, view: d.view, edit: d.edit })),
]

const contentRoutes =
  (d: Pick<Provisions, 'content' | 'contentSharing' | 'contentRecall'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { content, contentSharing, contentRecall } = d

    for (const def of KINDS) {
      const base = `/${def.path}`
      const label = def.label.toLowerCase()
      const createProps: TProperties = {
        name: Type.String({ minLength: 1, maxLength: 200 }),
        nodeId: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
      }
      const updateProps: TProperties = {
        name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        nodeId: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
      }
      for (const [k, s] of Object.entries(def.fields)) {
        // a field a create needs is required in the create schema (the document says so too)
        createProps[k] = def.required?.includes(k) ? withoutOptional(s) : s
        updateProps[k] = s
      }

      app.get(
        base,
        {
          config: { permission: def.view },
          schema: {
            tags: [def.tag],
            summary: def.paged ? `List ${label}s (newest first; limit 1–500, default 100 with a cursor)` : `List every ${label} (full list, not paged)`,
            querystring: ListQuery,
            response: { 200: Paged(ContentItem), ...errorResponses },
          },
        },
        async (req) => {
          const q = req.query
          const page = def.paged ? optionalPage(q) : { limit: null, after: null, count: q.count === '1' }
          return content.list(def, principalOf(req), page, { search: q.search })
        },
      )

      app.post(
        base,
        {
          config: { permission: def.edit, idempotent: true },
          schema: { tags: [def.tag], summary: `Create a ${label}`, body: Type.Object(createProps), response: { 201: Data(ContentItem), ...errorResponses } },
        },
        async (req, reply) =>
          (await dryRan(req, reply, () => content.planCreate(def, principalOf(req), req.body as Body & { name: string })))
            ? reply
            : reply.code(201).send({ data: await content.create(def, principalOf(req), req.body as Body & { name: string }) }),
      )

      app.get(
        `${base}/:id`,
        {
          config: { permission: def.view },
          schema: { tags: [def.tag], summary: `Get a ${label}`, params: IdParams, response: { 200: Data(ContentItem), ...errorResponses } },
        },
        async (req) => ({ data: await content.get(def, principalOf(req), req.params.id) }),
      )

      app.patch(
        `${base}/:id`,
        {
          config: { permission: def.edit },
          schema: {
            tags: [def.tag],
            summary: `Change a ${label}`,
            params: IdParams,
            body: Type.Object(updateProps),
            response: { 200: Data(ContentItem), ...errorResponses },
          },
        },
        async (req, reply) =>
          (await dryRan(req, reply, () => content.planUpdate(def, principalOf(req), req.params.id, req.body as Body)))
            ? reply
            : { data: await content.update(def, principalOf(req), req.params.id, req.body as Body) },
      )

      app.delete(
        `${base}/:id`,
        {
          config: { permission: def.edit },
          schema: {
            tags: [def.tag],
            summary: `Delete a ${label} (409 conflict while other content or screens use it)`,
            params: IdParams,
            response: { 200: Data(Deleted), 409: errorResponses[404], ...errorResponses },
          },
        },
        async (req) => ({ data: await content.remove(def, principalOf(req), req.params.id) }),
      )
    }

    for (const s of SHARED) {
      const base = `/${s.path}/:id`
      app.get(
        `${base}/shares`,
        {
          config: { permission: s.view },
          schema: {
            tags: [s.tag],
            summary: `Locations a ${s.kind} item is shared with`,
            params: IdParams,
            response: { 200: Data(Type.Array(Share)), ...errorResponses },
          },
        },
        async (req) => ({ data: await contentSharing.listShares(principalOf(req), s.kind, req.params.id) }),
      )
      app.post(
        `${base}/shares`,
        {
          config: { permission: s.edit },
          schema: {
            tags: [s.tag],
            summary: `Share a ${s.kind} item with a location (screens there and below may play it)`,
            params: IdParams,
            body: Type.Object({ nodeId: Type.String({ minLength: 1, maxLength: 100 }) }),
            response: { 200: Data(Type.Array(Share)), ...errorResponses },
          },
        },
        async (req) => ({ data: await contentSharing.share(principalOf(req), s.kind, req.params.id, req.body.nodeId) }),
      )
      app.delete(
        `${base}/shares/:nodeId`,
        {
          config: { permission: s.edit },
          schema: {
            tags: [s.tag],
            summary: `Stop sharing a ${s.kind} item with a location`,
            params: ShareParams,
            response: { 200: Data(Type.Object({ nodeId: Type.String(), deleted: Type.Literal(true) })), ...errorResponses },
          },
        },
        async (req) => ({ data: await contentSharing.unshare(principalOf(req), s.kind, req.params.id, req.params.nodeId) }),
      )

      const recall = RECALLABLE[s.kind]
      if (!recall) continue
      app.post(
        `${base}/recall`,
        {
          config: { permission: 'content.recall' },
          // The body is optional: no body at all means no reason. A JSON `null` is a body, and
          // not an object: refused (422) like any other body that is not one.
          preValidation: async (req) => {
            if (req.body === undefined) req.body = {}
          },
          schema: {
            tags: [s.tag],
            summary: `Recall a ${recall.label.toLowerCase()}: pull it from every screen (sends content.recalled; 409 conflict when already recalled)`,
            params: IdParams,
            body: Type.Object({ reason: Type.Optional(Nullable(Type.String({ maxLength: 500 }))) }),
            response: { 200: Data(Recalled), 409: errorResponses[404], ...errorResponses },
          },
        },
        async (req) => {
          const it = await contentRecall.recall(principalOf(req), s.kind, req.params.id, req.body.reason?.trim() || null)
          return { data: { id: it.id, kind: it.kind, name: it.name, recalledAt: it.recalledAt, recallReason: it.recallReason } }
        },
      )
      app.post(
        `${base}/restore`,
        {
          config: { permission: 'content.recall' },
          schema: {
            tags: [s.tag],
            summary: `Restore a recalled ${recall.label.toLowerCase()} (sends content.restored; 409 conflict when not recalled)`,
            params: IdParams,
            response: { 200: Data(Recalled), 409: errorResponses[404], ...errorResponses },
          },
        },
        async (req) => {
          const it = await contentRecall.restore(principalOf(req), s.kind, req.params.id)
          return { data: { id: it.id, kind: it.kind, name: it.name, recalledAt: it.recalledAt } }
        },
      )
    }

    app.get(
      '/apps/catalog',
      {
        config: { permission: 'content.view' },
        schema: {
          tags: ['apps'],
          summary: 'App types an app instance can be made of, each with the JSON Schema of its config',
          response: {
            200: Data(
              Type.Array(
                Type.Object({
                  key: Type.String(),
                  name: Type.String(),
                  description: Type.String(),
                  configSchema: Type.Object({}, { additionalProperties: true }),
                }),
              ),
            ),
            ...errorResponses,
          },
        },
      },
      async () => ({
        data: APP_CATALOG.map((a) => ({
          key: a.key,
          name: a.name,
          description: a.description,
          configSchema: JSON.parse(JSON.stringify(a.configSchema)) as Record<string, unknown>,
        })),
      }),
    )
  }
export default contentRoutes
