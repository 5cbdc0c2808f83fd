// /v1/users: list, invite (answers the invite link for the console and a first session
// token, both shown once; the link is also mailed), send a new invite link, get, change role
// or name (a role change ends their sessions), remove (their sessions end at once). The workspace always keeps an owner (409).
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ROLES } from '@svc/shared'
import { principalOf, type Principal } from '../../platform/http/Principal.js'
import { User } from './UserService.js'
import { bearerOrCookieToken } from './authentication.js'
import { parsePage, PageQuery } from '../../platform/paging.js'
import { Data, Deleted, ErrorBody, IdParams, Nullable, Paged, StringEnum, Timestamp, errorResponses } from '../../platform/contract.js'
import type { Provisions } from '../../platform/provisions.js'

const InviteMail = Type.Object(
  {
    state: StringEnum(['sent', 'failed', 'unsent'] as const, {
      description:
        '`sent`: the mail server took the invite mail; `failed`: it refused it (`error`); `unsent`: no mail server is set up (SVC_SMTP_URL), the mail stays in the outbox: pass the link on yourself.',
    }),
    error: Nullable(Type.String()),
  },
  { description: 'Whether the invite mail left.' },
)

const Invited = Type.Intersect([
  User,
  Type.Object({
    sessionToken: Type.String({ description: 'A session token for the new user (`ust_…`). Shown only in this answer.' }),
    sessionExpiresAt: Timestamp,
    inviteUrl: Type.String({
      description: 'The console link where the user sets a password (`…/console/welcome#token=inv_…`): one use, 7 days; also mailed to them.',
    }),
    inviteExpiresAt: Timestamp,
    inviteMail: InviteMail,
  }),
])

const InviteLink = Type.Object({
  inviteUrl: Type.String({ description: 'One use, 7 days; earlier unused links of the user stop working. Also mailed to them.' }),
  expiresAt: Timestamp,
  inviteMail: InviteMail,
})

const InviteBody = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 254 }),
    name: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
    role: StringEnum(ROLES),
  },
  { additionalProperties: false },
)
const UpdateBody = Type.Object(
  {
    name: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
    role: Type.Optional(StringEnum(ROLES)),
  },
  { additionalProperties: false },
)

const userRoutes =
  (d: Pick<Provisions, 'users' | 'signIns' | 'workspaces'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { users, signIns } = d

    /** Sends `user` a new invite link, mailed in the workspace's name. */
    async function inviteLink(p: Principal, user: Parameters<typeof signIns.invite>[0]) {
      const ws = await d.workspaces.require(p.workspaceId)
      return signIns.invite(user, { workspaceName: ws.name, invitedBy: p.actor.name ?? ('email' in p.actor ? p.actor.email : null) ?? null })
    }

    app.get(
      '/users',
      {
        config: { permission: 'user.view', rootOnly: true },
        schema: {
          tags: ['users'],
          summary: "List the workspace's users (oldest first)",
          querystring: PageQuery,
          response: { 200: Paged(User), ...errorResponses },
        },
      },
      async (req) => users.list(principalOf(req), parsePage(req.query, { defaultLimit: null, max: 500 })),
    )

    app.post(
      '/users',
      {
        config: { permission: 'user.manage', rootOnly: true },
        schema: {
          tags: ['users'],
          summary: 'Invite a user: answers the console invite link (also mailed) and a first session token, shown once',
          body: InviteBody,
          response: { 201: Data(Invited), 409: ErrorBody, ...errorResponses },
        },
      },
      async (req, reply) => {
        const p = principalOf(req)
        const { user, row, sessionToken, sessionExpiresAt } = await users.invite(p, req.body)
        const link = await inviteLink(p, row)
        return reply
          .code(201)
          .send({ data: { ...user, sessionToken, sessionExpiresAt, inviteUrl: link.inviteUrl, inviteExpiresAt: link.expiresAt, inviteMail: link.mail } })
      },
    )

    app.post(
      '/users/:id/invite',
      {
        config: { permission: 'user.manage', rootOnly: true },
        schema: {
          tags: ['users'],
          summary: 'Send a user a new invite link (also mailed); accepting it sets a new password, so it is how a forgotten password is reset',
          params: IdParams,
          response: { 201: Data(InviteLink), ...errorResponses },
        },
      },
      async (req, reply) => {
        const p = principalOf(req)
        const link = await inviteLink(p, await users.invitable(p, req.params.id))
        return reply.code(201).send({ data: { inviteUrl: link.inviteUrl, expiresAt: link.expiresAt, inviteMail: link.mail } })
      },
    )

    app.get(
      '/users/:id',
      {
        config: { permission: 'user.view', rootOnly: true },
        schema: { tags: ['users'], summary: 'Get a user', params: IdParams, response: { 200: Data(User), ...errorResponses } },
      },
      async (req) => ({ data: await users.view(principalOf(req), req.params.id) }),
    )

    app.patch(
      '/users/:id',
      {
        config: { permission: 'user.manage', rootOnly: true },
        schema: {
          tags: ['users'],
          summary: "Change a user's role or name; a role change ends the user's sessions (409 conflict when it would leave no owner)",
          params: IdParams,
          body: UpdateBody,
          response: { 200: Data(User), 409: ErrorBody, ...errorResponses },
        },
      },
      async (req) => ({ data: await users.update(principalOf(req), req.params.id, req.body, bearerOrCookieToken(req)) }),
    )

    app.delete(
      '/users/:id',
      {
        config: { permission: 'user.manage', rootOnly: true },
        schema: {
          tags: ['users'],
          summary: 'Remove a user; their session tokens stop working at once (409 conflict for the last owner)',
          params: IdParams,
          response: { 200: Data(Deleted), 409: ErrorBody, ...errorResponses },
        },
      },
      async (req) => {
        const u = await users.remove(principalOf(req), req.params.id)
        return { data: { id: u.id, deleted: true as const } }
      },
    )
  }
export default userRoutes
