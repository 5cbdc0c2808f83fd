// SCIM 2.0 (RFC 7643/7644) at /scim/v2, for the workspace's identity provider (Okta, Entra ID):
//   GET  /ServiceProviderConfig, /ResourceTypes, /Schemas    what this server supports
//   GET|POST /Users, GET|PUT|PATCH|DELETE /Users/:id        users (ScimService)
//   GET|POST /Groups, GET|PUT|PATCH|DELETE /Groups/:id      groups, mapped to roles
// Authenticated by the workspace's SCIM bearer token (POST /v1/sso/scim-token); a resource of
// another workspace is 404. Bodies are `application/scim+json` (or JSON) and so are answers;
// errors are in SCIM's own shape (RFC 7644 §3.12), not the API's `{error, message}`: the
// provider's client reads `status`, `scimType` and `detail`. Every write is recorded in the
// audit log by the HTTP edge (via `scim`, the actor the SCIM token). The routes are outside the
// OpenAPI document: SCIM's own discovery endpoints describe them.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { type Static, Type } from '@sinclair/typebox'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { isApiError } from '../../platform/errors.js'
import type { Principal } from '../../platform/http/Principal.js'
import type { Provisions } from '../../platform/provisions.js'
import { SCIM_GROUP, SCIM_LIST, SCIM_MAX_COUNT, SCIM_USER, ScimError, type ScimPage } from './ScimService.js'

const SCIM_TYPE = 'application/scim+json'
const SCHEMA_DOC = 'urn:ietf:params:scim:schemas:core:2.0:Schema'
const RESOURCE_TYPE = 'urn:ietf:params:scim:schemas:core:2.0:ResourceType'
const SPC = 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'

const ListQuery = Type.Object(
  {
    filter: Type.Optional(Type.String({ maxLength: 2000 })),
    startIndex: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$' })),
    count: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$' })),
  },
  { additionalProperties: true },
)
/** The query's paging as numbers (a query string carries text). */
function pageOf(q: Static<typeof ListQuery>): ScimPage {
  return {
    filter: q.filter,
    startIndex: q.startIndex === undefined ? undefined : Number(q.startIndex),
    count: q.count === undefined ? undefined : Number(q.count),
  }
}
const Id = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) })
const Body = Type.Object({}, { additionalProperties: true })

function toScimError(err: Error, req: FastifyRequest): ScimError {
  if (err instanceof ScimError) return err
  if (isApiError(err)) return new ScimError(err.status, err.message)
  const f = err as FastifyError
  if (f.validation) {
    const first = f.validation[0]
    return new ScimError(
      400,
      `${f.validationContext ?? 'request'}${(first?.instancePath ?? '').replace(/\//g, '.')} ${first?.message ?? 'is invalid'}.`,
      'invalidValue',
    )
  }
  if (f.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new ScimError(413, 'The body is over the size limit.')
  if (f.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return new ScimError(415, `Content-Type ${req.headers['content-type'] ?? '(none)'} is not accepted; send ${SCIM_TYPE}.`)
  if (err instanceof SyntaxError || f.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || f.code === 'FST_ERR_CTP_EMPTY_JSON_BODY')
    return new ScimError(400, 'The body is not valid JSON.', 'invalidSyntax')
  if (f.statusCode && f.statusCode >= 400 && f.statusCode < 500) return new ScimError(f.statusCode, err.message)
  req.log.error({ err }, 'unhandled error on a SCIM route')
  return new ScimError(500, 'Something went wrong on our side.')
}

const scimRoutes =
  (d: Pick<Provisions, 'scim' | 'config'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { scim } = d
    const hide = { hide: true, tags: ['scim'] }
    const base = (req: FastifyRequest) => `${d.config.publicUrl ?? `${req.protocol}://${req.host}`}/scim/v2`
    const ws = (req: FastifyRequest) => (req.principal as Principal).workspaceId
    const send = (reply: FastifyReply, status: number, body: unknown) => reply.code(status).type(`${SCIM_TYPE}; charset=utf-8`).send(body)

    app.addContentTypeParser(SCIM_TYPE, { parseAs: 'string' }, app.getDefaultJsonParser('error', 'error'))
    app.setErrorHandler((err, req, reply) => {
      const e = toScimError(err as Error, req)
      if (e.status === 401) reply.header('www-authenticate', 'Bearer realm="scim"')
      return send(reply, e.status, e.body())
    })
    app.setNotFoundHandler((req, reply) => send(reply, 404, new ScimError(404, `No SCIM endpoint ${req.method} ${req.url.split('?')[0]}.`).body()))

    // The workspace's SCIM token, in constant time (ScimService.workspaceOfToken).
    app.addHook('onRequest', async (req) => {
      const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')
      const workspaceId = m ? await scim.workspaceOfToken(m[1]!) : null
      if (!workspaceId) throw new ScimError(401, 'A valid SCIM bearer token is required (POST /v1/sso/scim-token makes one).')
      const principal: Principal = {
        actor: { kind: 'key', id: 'scim', name: 'SCIM provisioning', nodeId: null },
        workspaceId,
        grant: ['user.view', 'user.manage'],
        nodeId: null,
      }
      req.principal = principal
    })

    app.get('/ServiceProviderConfig', { schema: hide }, async (req, reply) =>
      send(reply, 200, {
        schemas: [SPC],
        documentationUri: 'https://example.invalid/docs/operator-guide#scim',
        patch: { supported: true },
        bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
        filter: { supported: true, maxResults: SCIM_MAX_COUNT },
        changePassword: { supported: false },
        sort: { supported: false },
        etag: { supported: false },
        authenticationSchemes: [{ type: 'oauthbearertoken', name: 'Bearer token', description: "The workspace's SCIM token.", primary: true }],
        meta: { resourceType: 'ServiceProviderConfig', location: `${base(req)}/ServiceProviderConfig` },
      }),
    )

    const resourceTypes = (req: FastifyRequest) => [
      {
        schemas: [RESOURCE_TYPE],
        id: 'User',
        name: 'User',
        endpoint: '/Users',
        schema: SCIM_USER,
        meta: { resourceType: 'ResourceType', location: `${base(req)}/ResourceTypes/User` },
      },
      {
        schemas: [RESOURCE_TYPE],
        id: 'Group',
        name: 'Group',
        endpoint: '/Groups',
        schema: SCIM_GROUP,
        meta: { resourceType: 'ResourceType', location: `${base(req)}/ResourceTypes/Group` },
      },
    ]
    app.get('/ResourceTypes', { schema: hide }, async (req, reply) => {
      const all = resourceTypes(req)
      return send(reply, 200, { schemas: [SCIM_LIST], totalResults: all.length, startIndex: 1, itemsPerPage: all.length, Resources: all })
    })

    const attr = (name: string, type: string, extra: Record<string, unknown> = {}) => ({
      name,
      type,
      multiValued: false,
      required: false,
      caseExact: false,
      mutability: 'readWrite',
      returned: 'default',
      uniqueness: 'none',
      ...extra,
    })
    const schemas = (req: FastifyRequest) => [
      {
        schemas: [SCHEMA_DOC],
        id: SCIM_USER,
        name: 'User',
        description: 'A person of the workspace; userName is their e-mail address.',
        attributes: [
          attr('userName', 'string', { required: true, uniqueness: 'server', mutability: 'immutable' }),
          attr('name', 'complex', { subAttributes: [attr('formatted', 'string'), attr('givenName', 'string'), attr('familyName', 'string')] }),
          attr('displayName', 'string'),
          attr('emails', 'complex', { multiValued: true, subAttributes: [attr('value', 'string'), attr('type', 'string'), attr('primary', 'boolean')] }),
          attr('active', 'boolean'),
          attr('externalId', 'string', { caseExact: true }),
          attr('groups', 'complex', { multiValued: true, mutability: 'readOnly', subAttributes: [attr('value', 'string'), attr('display', 'string')] }),
        ],
        meta: { resourceType: 'Schema', location: `${base(req)}/Schemas/${SCIM_USER}` },
      },
      {
        schemas: [SCHEMA_DOC],
        id: SCIM_GROUP,
        name: 'Group',
        description: "A group; its displayName maps to a role through the workspace's roleMap.",
        attributes: [
          attr('displayName', 'string', { required: true, uniqueness: 'server' }),
          attr('externalId', 'string', { caseExact: true }),
          attr('members', 'complex', { multiValued: true, subAttributes: [attr('value', 'string'), attr('display', 'string')] }),
        ],
        meta: { resourceType: 'Schema', location: `${base(req)}/Schemas/${SCIM_GROUP}` },
      },
    ]
    app.get('/Schemas', { schema: hide }, async (req, reply) => {
      const all = schemas(req)
      return send(reply, 200, { schemas: [SCIM_LIST], totalResults: all.length, startIndex: 1, itemsPerPage: all.length, Resources: all })
    })

    // ——— Users ———
    app.get('/Users', { schema: { ...hide, querystring: ListQuery } }, async (req, reply) =>
      send(reply, 200, await scim.listUsers(ws(req), pageOf(req.query), base(req))),
    )
    app.post('/Users', { schema: { ...hide, body: Body } }, async (req, reply) => send(reply, 201, await scim.createUser(ws(req), req.body, base(req))))
    app.get('/Users/:id', { schema: { ...hide, params: Id } }, async (req, reply) => send(reply, 200, await scim.getUser(ws(req), req.params.id, base(req))))
    app.put('/Users/:id', { schema: { ...hide, params: Id, body: Body } }, async (req, reply) =>
      send(reply, 200, await scim.replaceUser(ws(req), req.params.id, req.body, base(req))),
    )
    app.patch('/Users/:id', { schema: { ...hide, params: Id, body: Body } }, async (req, reply) =>
      send(reply, 200, await scim.patchUser(ws(req), req.params.id, req.body, base(req))),
    )
    app.delete('/Users/:id', { schema: { ...hide, params: Id } }, async (req, reply) => {
      await scim.deleteUser(ws(req), req.params.id)
      return reply.code(204).send()
    })

    // ——— Groups ———
    app.get('/Groups', { schema: { ...hide, querystring: ListQuery } }, async (req, reply) =>
      send(reply, 200, await scim.listGroups(ws(req), pageOf(req.query), base(req))),
    )
    app.post('/Groups', { schema: { ...hide, body: Body } }, async (req, reply) => send(reply, 201, await scim.createGroup(ws(req), req.body, base(req))))
    app.get('/Groups/:id', { schema: { ...hide, params: Id } }, async (req, reply) => send(reply, 200, await scim.getGroup(ws(req), req.params.id, base(req))))
    app.put('/Groups/:id', { schema: { ...hide, params: Id, body: Body } }, async (req, reply) =>
      send(reply, 200, await scim.replaceGroup(ws(req), req.params.id, req.body, base(req))),
    )
    app.patch('/Groups/:id', { schema: { ...hide, params: Id, body: Body } }, async (req, reply) =>
      send(reply, 200, await scim.patchGroup(ws(req), req.params.id, req.body, base(req))),
    )
    app.delete('/Groups/:id', { schema: { ...hide, params: Id } }, async (req, reply) => {
      await scim.deleteGroup(ws(req), req.params.id)
      return reply.code(204).send()
    })
  }
export default scimRoutes
