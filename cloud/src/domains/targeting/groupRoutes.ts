// /v1/groups: named sets of screens beside the location tree: static (a list of screens)
// or dynamic (a rule, resolved whenever the group is used). List, create, get, PATCH,
// DELETE, the members (paged) and a preview of a rule that stores nothing.
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { principalOf } from '../../platform/http/Principal.js'
import { Data, Deleted, IdParams, Nullable, Paged, StringEnum, Timestamp, errorResponses } from '../../platform/contract.js'
import { PageQuery, parsePage } from '../../platform/paging.js'
import type { Provisions } from '../../platform/provisions.js'
import { GROUP_KINDS, PREVIEW_SCREENS, STATIC_GROUP_MAX } from './GroupService.js'
import type { Rule } from './rules.js'

const RuleSchema = Type.Unsafe<Rule>({
  type: 'object',
  additionalProperties: true,
  description:
    '`{all: [cond, …]}` or `{any: [cond, …]}`; a condition is `{tag}`, `{tagPrefix}`, `{name}` (a glob with `*`, any case), `{nodeId}` (that location and below), `{panelProtocol}`, `{agentVersion: {lt | lte | gt | gte: "x.y.z"}}`, `{group: "grp_…"}`, `{not: cond}`, or a nested `{all}` / `{any}` (docs/api-guide.md, "Tags and groups").',
})

const Member = Type.Object({
  id: Type.String(),
  name: Type.String(),
  nodeId: Nullable(Type.String()),
  status: Type.String(),
  agentVersion: Nullable(Type.String()),
})

const Group = Type.Object({
  id: Type.String({ description: 'Prefix `grp_`.' }),
  name: Type.String(),
  nodeId: Nullable(Type.String({ description: 'Home location; null = workspace root.' })),
  kind: StringEnum(GROUP_KINDS),
  screenIds: Nullable(Type.Array(Type.String(), { description: "A static group's screens this credential reaches; null for a dynamic group." })),
  rule: Nullable(RuleSchema),
  memberCount: Type.Integer({ description: 'Members this credential reaches, now.' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
})

const ScreenIds = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: STATIC_GROUP_MAX })

const groupRoutes =
  (d: Pick<Provisions, 'groups'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { groups } = d

    app.get(
      '/groups',
      {
        config: { permission: 'screen.view' },
        schema: {
          tags: ['groups'],
          summary: 'List the groups homed where this credential reaches (by id; without limit the whole list)',
          querystring: PageQuery,
          response: { 200: Paged(Group), ...errorResponses },
        },
      },
      async (req) => groups.list(principalOf(req), parsePage(req.query, { defaultLimit: null, max: 500 })),
    )

    app.post(
      '/groups',
      {
        config: { permission: 'screen.edit', idempotent: true },
        schema: {
          tags: ['groups'],
          summary: 'Create a group: static (screenIds) or dynamic (rule)',
          body: Type.Object(
            {
              name: Type.String({ minLength: 1, maxLength: 200 }),
              nodeId: Type.Optional(Nullable(Type.String({ maxLength: 100, description: "Home location; default the credential's own top." }))),
              kind: StringEnum(GROUP_KINDS),
              screenIds: Type.Optional(ScreenIds),
              rule: Type.Optional(RuleSchema),
            },
            { additionalProperties: false },
          ),
          response: { 201: Data(Group), ...errorResponses },
        },
      },
      async (req, reply) => reply.code(201).send({ data: await groups.create(principalOf(req), req.body) }),
    )

    app.post(
      '/groups/preview',
      {
        // Stores nothing: not an audit log entry.
        config: { permission: 'screen.view', audit: false },
        schema: {
          tags: ['groups'],
          summary: `What a rule selects now, of the screens this credential reaches: the count and the first ${PREVIEW_SCREENS}; nothing is stored`,
          body: Type.Object({ rule: RuleSchema }, { additionalProperties: false }),
          response: { 200: Data(Type.Object({ count: Type.Integer(), screens: Type.Array(Member) })), ...errorResponses },
        },
      },
      async (req) => ({ data: await groups.preview(principalOf(req), req.body.rule) }),
    )

    app.get(
      '/groups/:id',
      {
        config: { permission: 'screen.view' },
        schema: { tags: ['groups'], summary: 'Get a group', params: IdParams, response: { 200: Data(Group), ...errorResponses } },
      },
      async (req) => ({ data: await groups.get(principalOf(req), req.params.id) }),
    )

    app.get(
      '/groups/:id/members',
      {
        config: { permission: 'screen.view' },
        schema: {
          tags: ['groups'],
          summary: "A group's members this credential reaches, now (by id; without limit the whole list)",
          params: IdParams,
          querystring: PageQuery,
          response: { 200: Paged(Member), ...errorResponses },
        },
      },
      async (req) => groups.members(principalOf(req), req.params.id, parsePage(req.query, { defaultLimit: null, max: 500 })),
    )

    app.patch(
      '/groups/:id',
      {
        config: { permission: 'screen.edit' },
        schema: {
          tags: ['groups'],
          summary: 'Rename, move, or change the screens or the rule of a group (a static group keeps the members this credential does not reach)',
          params: IdParams,
          body: Type.Object(
            {
              name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
              nodeId: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
              kind: Type.Optional(StringEnum(GROUP_KINDS)),
              screenIds: Type.Optional(ScreenIds),
              rule: Type.Optional(RuleSchema),
            },
            { additionalProperties: false },
          ),
          response: { 200: Data(Group), ...errorResponses },
        },
      },
      async (req) => ({ data: await groups.update(principalOf(req), req.params.id, req.body) }),
    )

    app.delete(
      '/groups/:id',
      {
        config: { permission: 'screen.edit' },
        schema: {
          tags: ['groups'],
          summary: "Delete a group (409 conflict while another group's rule names it)",
          params: IdParams,
          response: { 200: Data(Deleted), ...errorResponses },
        },
      },
      async (req) => ({ data: await groups.remove(principalOf(req), req.params.id) }),
    )
  }
export default groupRoutes
