// The console's sign-in, as routes every browser (and API caller) can use:
//   POST   /v1/session          sign in with email and password (no credential needed)
//   GET    /v1/session          the signed-in user, workspace, expiry and CSRF token
//   DELETE /v1/session          sign out (the session ends; the cookie is cleared)
//   POST   /v1/invites/accept   set the password of an invite link and sign in
// Signing in sets the session cookie (`svc_session`: the session token, HttpOnly,
// SameSite=Strict, Secure when the public URL is https) and, for a browser new to the
// account, a device cookie (`svc_device`, 90 days, sent only to /v1/session) that keeps its
// failed sign-ins to that account apart from everyone else's (SignInLimits.ts). The token itself is never
// in an answer body: script in the page cannot read it.
import { Type } from '@sinclair/typebox'
import type {} from '@fastify/cookie'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { principalOf } from '../../platform/http/Principal.js'
import { ApiError } from '../../platform/errors.js'
import { Data, Timestamp, errorResponses } from '../../platform/contract.js'
import type { Provisions } from '../../platform/provisions.js'
import { bearerOrCookieToken, DEVICE_COOKIE, SESSION_COOKIE } from './authentication.js'
import { csrfFor, type SignedIn } from './SignInService.js'
import { User, UserService } from './UserService.js'
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from './passwords.js'

const Session = Type.Object({
  user: User,
  workspace: Type.Object({ id: Type.String(), name: Type.String() }),
  expiresAt: Timestamp,
  csrfToken: Type.String({ description: 'Send it as the `x-svc-csrf` header on every write made with the session cookie.' }),
})

const SignInBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: 4096 }),
    workspaceId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description:
          "Checks only this workspace's user of the address. Without it, the sign-in goes to the user whose password fits (when several fit, the one whose password was set last).",
      }),
    ),
  },
  { additionalProperties: false },
)

const AcceptBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 100, description: 'The `token` of the invite link (`inv_…`).' }),
    password: Type.String({
      minLength: PASSWORD_MIN_LENGTH,
      maxLength: PASSWORD_MAX_LENGTH,
      description: `The new password, ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters.`,
    }),
  },
  { additionalProperties: false },
)

const sessionRoutes =
  (d: Pick<Provisions, 'signIns' | 'users' | 'workspaces' | 'config'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { signIns } = d
    const secure = d.config.publicUrl?.startsWith('https://') ?? false

    function signedIn(reply: FastifyReply, s: SignedIn) {
      reply.setCookie(SESSION_COOKIE, s.session.token, { httpOnly: true, sameSite: 'strict', secure, path: '/', expires: new Date(s.session.expiresAt) })
      if (s.device)
        reply.setCookie(DEVICE_COOKIE, s.device.token, {
          httpOnly: true,
          sameSite: 'strict',
          secure,
          path: '/v1/session',
          expires: new Date(s.device.expiresAt),
        })
      return {
        data: { user: UserService.view(s.user), workspace: s.workspace, expiresAt: s.session.expiresAt, csrfToken: csrfFor(s.session.token) },
      }
    }

    app.post(
      '/session',
      {
        // Sign-ins and refused ones are recorded by the sign-in service (AuditTrail.recordSignIn).
        config: { auth: 'none', audit: 'self' },
        schema: {
          tags: ['session'],
          summary: 'Sign in with email and password: sets the session cookie (and answers its CSRF token); failed attempts are limited',
          body: SignInBody,
          response: { 200: Data(Session), ...errorResponses },
        },
      },
      async (req, reply) => signedIn(reply, await signIns.signIn(req.body, req.ip, req.cookies[DEVICE_COOKIE], req.id)),
    )

    app.post(
      '/invites/accept',
      {
        config: { auth: 'none', audit: 'self' },
        schema: {
          tags: ['session'],
          summary: 'Set the password of an invite link (at least 12 characters) and sign in; the link works once',
          body: AcceptBody,
          response: { 200: Data(Session), ...errorResponses },
        },
      },
      async (req, reply) => signedIn(reply, await signIns.acceptInvite(req.body, { ip: req.ip, requestId: req.id })),
    )

    /** The session token the request came with, when its credential is a user session. */
    function sessionToken(req: FastifyRequest): string {
      const token = bearerOrCookieToken(req)
      if (!token?.startsWith('ust_') || principalOf(req).actor.kind !== 'user')
        throw new ApiError('not_found', 'No session: this credential is not a user session.')
      return token
    }

    app.get(
      '/session',
      {
        schema: {
          tags: ['session'],
          summary: 'The signed-in user, their workspace, when the session ends and its CSRF token',
          response: { 200: Data(Session), ...errorResponses },
        },
      },
      async (req) => {
        const token = sessionToken(req)
        const p = principalOf(req)
        const [user, ws, expiresAt] = await Promise.all([d.users.view(p, p.actor.id!), d.workspaces.require(p.workspaceId), signIns.expiresAt(token)])
        return { data: { user, workspace: { id: ws.id, name: ws.name }, expiresAt: expiresAt!, csrfToken: csrfFor(token) } }
      },
    )

    app.delete(
      '/session',
      {
        schema: {
          tags: ['session'],
          summary: 'Sign out: the session ends at once and the cookie is cleared',
          response: { 200: Data(Type.Object({ signedOut: Type.Literal(true) })), ...errorResponses },
        },
      },
      async (req, reply) => {
        await signIns.signOut(sessionToken(req))
        reply.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'strict', secure })
        return { data: { signedOut: true as const } }
      },
    )
  }
export default sessionRoutes
