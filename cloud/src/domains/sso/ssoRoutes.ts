// /v1/sso: a workspace's identity provider and the sign-in through it.
//   GET|PUT|DELETE /v1/sso      the provider's settings (user.manage, workspace-wide credentials)
//   POST   /v1/sso/test         reads the provider's discovery document and keys
//   GET    /v1/sso/lookup       whether an address signs in through a provider (no credential)
//   GET    /v1/sso/start        where to send the browser: the provider of the address's claimed domain (no credential)
//   GET    /v1/sso/oidc/callback  back from the provider: sets the session cookie, forwards to the console
//   GET    /v1/sso/saml/metadata  the workspace's SAML service-provider metadata (no credential)
//   POST   /v1/sso/saml/acs       the SAML provider's answer (HTTP-POST binding): sets the session cookie, forwards to the console
//   GET|POST|DELETE /v1/sso/scim-token  the workspace's SCIM token: whether there is one, a new one (shown once), none
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { principalOf } from '../../platform/http/Principal.js'
import { rateHeaders } from '../../platform/http/rateLimit.js'
import { Data, ErrorBody, errorResponses, Nullable, StringEnum, Timestamp } from '../../platform/contract.js'
import { ApiError, isApiError } from '../../platform/errors.js'
import { SESSION_COOKIE } from '../access/index.js'
import type { Provisions } from '../../platform/provisions.js'
import { FLOW_TTL_MS, STATE_COOKIE } from './OidcSignIn.js'
import { SAML_COOKIE } from './SamlSignIn.js'
import { SsoSettings, SsoSettingsBody } from './SsoService.js'

const FORM = 'application/x-www-form-urlencoded'
/** This machine's own address: localhost, 127.x, ::1. */
const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[?::1\]?)$/i

/** Sign-ins started per IP address: each writes a row (a flow or an AuthnRequest) and may ask the provider. */
export const START_RATE = { limit: 20, windowSeconds: 60 }
/** Addresses looked up per IP address (the console asks each time the typing of an address stops). */
export const LOOKUP_RATE = { limit: 60, windowSeconds: 60 }

/** An onRequest hook counting requests per remote address under `key`: over `rate`, 429 with Retry-After. */
function perAddress(key: string, rate: { limit: number; windowSeconds: number }, what: string, d: { rateLimiter: Provisions['rateLimiter'] }) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const r = await d.rateLimiter.hit(`${key}:${req.ip}`, rate.limit, rate.windowSeconds)
    reply.headers(rateHeaders(r))
    if (!r.allowed)
      throw new ApiError(
        'rate_limited',
        `Over the limit of ${r.limit} ${what} per ${r.windowSeconds} seconds from this address; retry after ${r.resetSeconds} s.`,
        {
          extra: { limit: r.limit, windowSeconds: r.windowSeconds, retryAfterSeconds: r.resetSeconds },
          headers: { 'retry-after': String(r.resetSeconds) },
        },
      )
  }
}
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
  (d: Pick<Provisions, 'sso' | 'oidcSignIn' | 'samlSignIn' | 'scim' | 'config' | 'rateLimiter'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { sso, oidcSignIn, samlSignIn, scim } = d
    const secure = d.config.publicUrl?.startsWith('https://') ?? false
    const manage = { permission: 'user.manage', rootOnly: true } as const
    const tags = ['sso']
    // The SAML request cookie must come back on the provider's cross-site POST: SameSite=None,
    // which browsers take only with Secure: on https, and on plain http to this machine's own
    // loopback address (browsers keep Secure cookies of http://localhost and 127.0.0.1), where
    // a default (Lax) cookie would be left out of that POST and every sign-in refused.
    const samlCookie = (req: FastifyRequest) => ({
      httpOnly: true,
      path: '/v1/sso/saml',
      ...(secure || LOOPBACK.test(req.hostname) ? { secure: true, sameSite: 'none' as const } : {}),
    })
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
      async (req) => {
        const ws = principalOf(req).workspaceId
        const saml = await sso.samlProvider(ws)
        // SAML: what the provider's settings say (its sign-in URL, issuer, certificates still valid).
        if (saml) return { data: { ok: true as const, ...samlSignIn.test(saml) } }
        return { data: { ok: true as const, ...(await oidcSignIn.test(ws)) } }
      },
    )

    app.get(
      '/sso/lookup',
      {
        config: { auth: 'none' },
        // Counted per address before the address is looked up: without a limit, asking about
        // address after address would say which of them have accounts behind a provider.
        onRequest: perAddress('sso-lookup', LOOKUP_RATE, 'addresses looked up', d),
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
        // Counted per address before anything is looked up, as the other doors without a credential are.
        onRequest: perAddress('sso-start', START_RATE, 'single sign-ons started', d),
        schema: {
          tags,
          summary:
            "Continue with SSO: the identity provider's sign-in address for the address's claimed domain, and the browser's state cookie (404 when no workspace claims the domain)",
          querystring: EmailQuery,
          response: {
            200: Data(
              Type.Object({
                url: Type.String({ description: "Send the browser here: the provider's authorization endpoint." }),
                protocol: StringEnum(['oidc', 'saml'] as const),
              }),
            ),
            502: ErrorBody,
            ...errorResponses,
          },
        },
      },
      async (req, reply) => {
        const ws = await sso.workspaceOfEmail(req.query.email)
        if (ws !== undefined && (await sso.samlProvider(ws))) {
          // SAML: the AuthnRequest's ID, answered once, ties the answer to this sign-in, and its
          // cookie to this browser. The provider posts the answer from its own site: on https the
          // cookie is SameSite=None (Secure) so that cross-site POST carries it; on plain http
          // (development) it has no SameSite, the browser's default.
          const { url, requestId } = await samlSignIn.start(ws, req.query.email, origin(req))
          reply.setCookie(SAML_COOKIE, requestId, { ...samlCookie(req), maxAge: FLOW_TTL_MS / 1000 })
          return { data: { url, protocol: 'saml' as const } }
        }
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
        return forward(reply)
      },
    )

    app.get(
      '/sso/saml/metadata',
      {
        config: { auth: 'none' },
        schema: {
          tags,
          summary: "The workspace's SAML service-provider metadata: entity ID (the audience), ACS URL, signed assertions wanted (404 without a SAML provider)",
          querystring: Type.Object({ workspace: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false }),
          response: {
            200: { description: 'The metadata document.', content: { 'application/samlmetadata+xml': { schema: Type.String() } } },
            ...errorResponses,
          },
        },
      },
      async (req, reply) => reply.type('application/samlmetadata+xml; charset=utf-8').send(await samlSignIn.metadata(req.query.workspace, origin(req))),
    )

    // The ACS takes the provider's form post (HTTP-POST binding).
    app.addContentTypeParser(FORM, { parseAs: 'string' }, (_req, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)))
    })

    app.post(
      '/sso/saml/acs',
      {
        // The sign-in is recorded by the SAML sign-in itself (sso.saml), good or refused.
        config: { auth: 'none', audit: 'self' },
        schema: {
          tags,
          summary:
            "The SAML provider's answer (HTTP-POST binding): checks the signature, audience, recipient, time window and InResponseTo, signs the user in and forwards to the console",
          consumes: [FORM],
          security: [],
          querystring: Type.Object({ workspace: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false }),
          body: Type.Object(
            {
              SAMLResponse: Type.String({ minLength: 1, maxLength: 1_000_000 }),
              RelayState: Type.Optional(Type.String({ maxLength: 2000 })),
            },
            { additionalProperties: false },
          ),
          response: {
            200: {
              description: 'Signed in (the session cookie is set): a page that forwards the browser to the console.',
              content: { 'text/html': { schema: Type.String() } },
            },
            ...errorResponses,
            400: Refusal('The answer could not be read.'),
            401: Refusal(
              "The provider's answer was refused (unsigned, altered, another audience or recipient, expired, replayed, or not of the sign-in started in this browser).",
            ),
            404: Refusal('Not found.'),
          },
        },
      },
      async (req, reply) => {
        const bound = req.cookies[SAML_COOKIE]
        reply.clearCookie(SAML_COOKIE, samlCookie(req))
        let s: Awaited<ReturnType<typeof samlSignIn.acs>>
        try {
          s = await samlSignIn.acs(req.query.workspace, req.body.SAMLResponse, bound, origin(req), req.ip, req.id)
        } catch (e) {
          // The provider's page posted the browser here: it is told in words, with the way back.
          if (!isApiError(e) || !(req.headers.accept ?? '').includes('text/html')) throw e
          return reply.code(e.status).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(refusalPage(e.message))
        }
        reply.setCookie(SESSION_COOKIE, s.session.token, { httpOnly: true, sameSite: 'strict', secure, path: '/', expires: new Date(s.session.expiresAt) })
        return forward(reply)
      },
    )

    const ScimToken = Type.Object({
      token: Type.String({ description: 'The bearer token for the identity provider: shown once, only its hash is kept.' }),
      createdAt: Timestamp,
      baseUrl: Type.String({ description: 'The SCIM base URL to give the identity provider (`…/scim/v2`).' }),
    })

    app.get(
      '/sso/scim-token',
      {
        config: manage,
        schema: {
          tags,
          summary: 'Whether the workspace has a SCIM token (never the token itself), and the SCIM base URL',
          response: { 200: Data(Type.Object({ createdAt: Nullable(Timestamp), baseUrl: Type.String() })), ...errorResponses },
        },
      },
      async (req) => ({ data: { createdAt: await scim.tokenCreatedAt(principalOf(req).workspaceId), baseUrl: scimBase(req) } }),
    )

    app.post(
      '/sso/scim-token',
      {
        config: manage,
        schema: {
          tags,
          summary: 'A new SCIM token for the workspace (shown once; the earlier one stops working at once)',
          response: { 201: Data(ScimToken), ...errorResponses },
        },
      },
      async (req, reply) => {
        const t = await scim.newToken(principalOf(req).workspaceId)
        return reply.code(201).send({ data: { ...t, baseUrl: scimBase(req) } })
      },
    )

    app.delete(
      '/sso/scim-token',
      {
        config: manage,
        schema: {
          tags,
          summary: "Revoke the workspace's SCIM token: provisioning stops until a new one is made",
          response: { 200: Data(Type.Object({ deleted: Type.Literal(true) })), ...errorResponses },
        },
      },
      async (req) => {
        if (!(await scim.deleteToken(principalOf(req).workspaceId))) throw new ApiError('not_found', 'This workspace has no SCIM token.')
        return { data: { deleted: true as const } }
      },
    )

    function scimBase(req: FastifyRequest): string {
      return `${d.config.publicUrl ?? origin(req)}/scim/v2`
    }
  }

/** A page of this site that forwards to the console: a navigation it starts is same-site, so the
 * SameSite=Strict session cookie goes with it (after a redirect or a form post from the
 * provider's site it would not). */
function forward(reply: FastifyReply) {
  return reply
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(
      '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=/console/"><title>Signed in</title></head>' +
        '<body><p>Signed in. <a href="/console/">Continue to the console</a>.</p></body></html>',
    )
}
export default ssoRoutes
