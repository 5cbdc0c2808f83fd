// /v1/sso: a workspace's identity provider and the sign-in through it.
//   GET|PUT|DELETE /v1/sso      the provider's settings (user.manage, workspace-wide credentials)
//   POST   /v1/sso/test         reads the provider's discovery document and keys
//   GET    /v1/sso/lookup       whether an address signs in through a provider (no credential)
//   GET    /v1/sso/start        where to send the browser: the provider of the address's claimed domain (no credential)
//   GET    /v1/sso/oidc/callback  back from the provider: sets the session cookie, forwards to the console
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { principalOf } from '../../platform/http/Principal.js'
import { Data, ErrorBody, errorResponses } from '../../platform/contract.js'
import { isApiError } from '../../platform/errors.js'
import { SESSION_COOKIE } from '../access/index.js'
import type { Provisions } from '../../platform/provisions.js'
import { FLOW_TTL_MS, STATE_COOKIE } from './OidcSignIn.js'
import { SsoSettings, SsoSettingsBody } from './SsoService.js'

const EmailQuery = Type.Object({ email: Type.String({ minLength: 3, maxLength: 254 }) }, { additionalProperties: false })
const CallbackQuery = Type.Object(
  {
    code: Type.Optional(Type.String({ maxLength: 4096 })),
    state: Type.Optional(Type.String({ maxLength: 200 })),
    iss: Type.Optional(Type.String({ maxLength: 2000 })),
    session_state: Type.Optional(Type.String({ maxLength: 2000 })),
    error: Type.Optional(Type.String({ maxLength: 200 })),
    error_description: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: false },
)

/** A refusal of the callback: the API's envelope, or for a browser (it asks for HTML) a page saying it in words. */
const Refusal = (description: string) => ({
  description,
  content: { 'application/json': { schema: ErrorBody }, 'text/html': { schema: Type.String() } },
})

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** The page a browser is shown when the provider's answer is refused: what went wrong, and the way back to the sign-in page. */
function refusalPage(message: string): string {
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">' +
    '<title>Single sign-on refused</title></head><body><main><h1>Single sign-on did not sign you in</h1>' +
    `<p role="alert">${escapeHtml(message)}</p>` +
    '<p><a href="/console/">Back to the sign-in page</a></p></main></body></html>'
  )
}

const ssoRoutes =
  (d: Pick<Provisions, 'sso' | 'oidcSignIn' | 'config'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { sso, oidcSignIn } = d
    const secure = d.config.publicUrl?.startsWith('https://') ?? false
    const manage = { permission: 'user.manage', rootOnly: true } as const
    const tags = ['sso']
    const origin = (req: FastifyRequest) => `${req.protocol}://${req.host}`

    app.get(
      '/sso',
      {
        config: manage,
        schema: {
          tags,
          summary: "The workspace's identity provider (the client secret is never answered)",
          response: { 200: Data(SsoSettings), ...errorResponses },
        },
      },
      async (req) => ({ data: await sso.get(principalOf(req), origin(req)) }),
    )

    app.put(
      '/sso',
      {
        config: manage,
        schema: {
          tags,
          summary:
            'Set up or change the identity provider: OIDC issuer and client, claimed e-mail domains, role mapping, who may still sign in with a password',
          body: SsoSettingsBody,
          response: { 200: Data(SsoSettings), 201: Data(SsoSettings), 409: ErrorBody, ...errorResponses },
        },
      },
      async (req, reply) => {
        const { view, created } = await sso.put(principalOf(req), req.body, origin(req))
        return reply.code(created ? 201 : 200).send({ data: view })
      },
    )

    app.delete(
      '/sso',
      {
        config: manage,
        schema: {
          tags,
          summary: 'Remove the identity provider: its domains are released and everyone signs in with a password again',
          response: { 200: Data(Type.Object({ deleted: Type.Literal(true) })), ...errorResponses },
        },
      },
      async (req) => {
        await sso.remove(principalOf(req))
        return { data: { deleted: true as const } }
      },
    )

    app.post(
      '/sso/test',
      {
        config: manage,
        schema: {
          tags,
          summary: "Test the connection: reads the provider's discovery document and keys (422 with what failed)",
          response: {
            200: Data(Type.Object({ ok: Type.Literal(true), issuer: Type.String(), authorizationEndpoint: Type.String(), keys: Type.Integer() })),
            ...errorResponses,
          },
        },
      },
      async (req) => ({ data: { ok: true as const, ...(await oidcSignIn.test(principalOf(req).workspaceId)) } }),
    )

    app.get(
      '/sso/lookup',
      {
        config: { auth: 'none' },
        schema: {
          tags,
          summary: "Whether an address signs in through its workspace's identity provider (the console's e-mail-first sign-in)",
          querystring: EmailQuery,
          response: {
            200: Data(
              Type.Object({
                sso: Type.Boolean(),
                passwordSignIn: Type.Boolean({ description: 'False when the provider is the only way in for this domain.' }),
              }),
            ),
            ...errorResponses,
          },
        },
      },
      async (req) => {
        const ws = await sso.workspaceOfEmail(req.query.email)
        const p = ws === undefined ? undefined : await sso.provider(ws)
        return { data: { sso: !!p, passwordSignIn: p?.passwordSignIn !== 'none' } }
      },
    )

    app.get(
      '/sso/start',
      {
        config: { auth: 'none' },
        schema: {
          tags,
          summary:
            "Continue with SSO: the identity provider's sign-in address for the address's claimed domain, and the browser's state cookie (404 when no workspace claims the domain)",
          querystring: EmailQuery,
          response: {
            200: Data(
              Type.Object({
                url: Type.String({ description: "Send the browser here: the provider's authorization endpoint." }),
                protocol: Type.Literal('oidc'),
              }),
            ),
            502: ErrorBody,
            ...errorResponses,
          },
        },
      },
      async (req, reply) => {
        const { url, state } = await oidcSignIn.start(req.query.email, origin(req))
        // Lax: the provider sends the browser back with a top-level GET from its own site.
        reply.setCookie(STATE_COOKIE, state, { httpOnly: true, sameSite: 'lax', secure, path: '/v1/sso', maxAge: FLOW_TTL_MS / 1000 })
        return { data: { url, protocol: 'oidc' as const } }
      },
    )

    app.get(
      '/sso/oidc/callback',
      {
        config: { auth: 'none' },
        schema: {
          tags,
          summary: 'Back from the OIDC provider: checks state, nonce, PKCE and the ID token, signs the user in and redirects to the console',
          querystring: CallbackQuery,
          response: {
            200: {
              description: 'Signed in (the session cookie is set): a page that forwards the browser to the console.',
              content: { 'text/html': { schema: Type.String() } },
            },
            ...errorResponses,
            400: Refusal('The callback belongs to no sign-in started in this browser (unknown, used or expired state).'),
            401: Refusal("The provider's answer was refused (its error, the ID token, or an address this workspace does not claim)."),
            404: Refusal('Not found.'),
            502: Refusal('The identity provider could not be reached.'),
          },
        },
      },
      async (req, reply) => {
        const cookie = req.cookies[STATE_COOKIE]
        reply.clearCookie(STATE_COOKIE, { httpOnly: true, sameSite: 'lax', secure, path: '/v1/sso' })
        let s: Awaited<ReturnType<typeof oidcSignIn.callback>>
        try {
          s = await oidcSignIn.callback(req.query as Record<string, string>, cookie, req.ip)
        } catch (e) {
          // A browser comes here from the provider: it is told in words, with the way back.
          if (!isApiError(e) || !(req.headers.accept ?? '').includes('text/html')) throw e
          return reply.code(e.status).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(refusalPage(e.message))
        }
        reply.setCookie(SESSION_COOKIE, s.session.token, { httpOnly: true, sameSite: 'strict', secure, path: '/', expires: new Date(s.session.expiresAt) })
        // A page of this site forwards to the console: a navigation it starts is same-site, so the
        // SameSite=Strict session cookie goes with it (after a redirect from the provider's site it would not).
        return reply
          .type('text/html; charset=utf-8')
          .header('cache-control', 'no-store')
          .send(
            '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=/console/"><title>Signed in</title></head>' +
              '<body><p>Signed in. <a href="/console/">Continue to the console</a>.</p></body></html>',
          )
      },
    )
  }
export default ssoRoutes
