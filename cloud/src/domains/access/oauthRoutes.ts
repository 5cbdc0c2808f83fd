// OAuth 2.0 client credentials (RFC 6749 section 4.4) and the discovery documents.
//
// POST /v1/oauth/token takes `grant_type=client_credentials` as a form
// (application/x-www-form-urlencoded, the RFC's encoding) or as JSON; the client is an API
// key: `client_id` = the key's id, `client_secret` = the key, in the body or as HTTP Basic.
// Answers, success and failure alike, are in the RFC's shape rather than the API's
// {error, message} envelope, since OAuth clients parse them: {access_token, token_type,
// expires_in} or {error, error_description} with error `invalid_request`,
// `invalid_client` (401 with WWW-Authenticate), `unsupported_grant_type`. 30 requests per
// 5 minutes per IP address, counted before the body is read (429 `rate_limited`).
//
// GET /.well-known/oauth-authorization-server (RFC 8414) and
// GET /.well-known/oauth-protected-resource (RFC 9728) need no credential.
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError, DatabaseBusyError, isApiError } from '../../platform/errors.js'
import { ErrorBody } from '../../platform/contract.js'
import type { Provisions } from '../../platform/provisions.js'

export const TOKEN_RATE = { limit: 30, windowSeconds: 300 }
const FORM = 'application/x-www-form-urlencoded'
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' }

class OAuthError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message)
  }
}

const invalidClient = (message: string) => new OAuthError(401, 'invalid_client', message, {}, { 'www-authenticate': 'Basic realm="oauth", charset="UTF-8"' })
const invalidRequest = (message: string) => new OAuthError(400, 'invalid_request', message)

const OAuthErrorBody = Type.Object(
  {
    error: Type.String({ description: 'RFC 6749 error code: `invalid_request`, `invalid_client`, `unsupported_grant_type`; `rate_limited` on 429.' }),
    error_description: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
)
const TokenBody = Type.Object(
  {
    grant_type: Type.String({ maxLength: 100, description: 'Only `client_credentials`.' }),
    client_id: Type.Optional(Type.String({ maxLength: 200, description: 'The API key id (or send HTTP Basic).' })),
    client_secret: Type.Optional(Type.String({ maxLength: 200, description: 'The API key (or send HTTP Basic).' })),
    scope: Type.Optional(Type.String({ maxLength: 1000, description: "Ignored: a token holds exactly its key's permissions." })),
  },
  // RFC 6749 section 3.2: parameters the server does not know are ignored.
  { additionalProperties: true },
)
const TokenAnswer = Type.Object({
  access_token: Type.String({ description: '`oat_…`: send as `Authorization: Bearer <token>`; acts as its key.' }),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'Seconds the token lives (3600).' }),
})

/** HTTP Basic client credentials (RFC 6749 section 2.3.1: each part form-encoded). */
function basicCredentials(header: string | undefined): { id: string; secret: string } | null {
  if (!header || !/^Basic\s/i.test(header)) return null
  const raw = Buffer.from(header.replace(/^Basic\s+/i, '').trim(), 'base64').toString('utf8')
  const colon = raw.indexOf(':')
  if (colon < 0) throw invalidClient('The Basic credentials are not client_id:client_secret.')
  try {
    const dec = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '))
    return { id: dec(raw.slice(0, colon)), secret: dec(raw.slice(colon + 1)) }
  } catch {
    throw invalidClient('The Basic credentials are not form-encoded.')
  }
}

function sendError(reply: FastifyReply, e: OAuthError): FastifyReply {
  return reply
    .code(e.status)
    .headers({ ...NO_STORE, ...e.headers })
    .type('application/json; charset=utf-8')
    .send({ error: e.code, error_description: e.message, ...e.extra })
}

/** Any failure on the token route, in RFC 6749's shape. */
function toOAuthError(err: FastifyError | ApiError | Error, req: FastifyRequest): OAuthError {
  if (err instanceof OAuthError) return err
  if (isApiError(err)) {
    if (err.code === 'rate_limited') return new OAuthError(429, 'rate_limited', err.message, { message: err.message, ...err.extra }, err.headers ?? {})
    if (err.status >= 500) return new OAuthError(err.status, 'server_error', err.message, {}, err.headers ?? {})
    return new OAuthError(err.status === 413 ? 413 : 400, 'invalid_request', err.message)
  }
  if (err instanceof DatabaseBusyError || (err as { cause?: unknown }).cause instanceof DatabaseBusyError) {
    return new OAuthError(503, 'temporarily_unavailable', 'The database is busy; retry after the Retry-After interval.', {}, { 'retry-after': '2' })
  }
  const f = err as FastifyError
  if (f.validation) {
    const first = f.validation[0]
    const missing = first?.keyword === 'required' ? String((first.params as { missingProperty?: string }).missingProperty) : null
    return invalidRequest(missing ? `${missing} is required.` : `body${(first?.instancePath ?? '').replace(/\//g, '.')} ${first?.message ?? 'is invalid'}.`)
  }
  if (f.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new OAuthError(413, 'invalid_request', 'The body is over the size limit.')
  if (f.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return invalidRequest(`Content-Type ${req.headers['content-type'] ?? '(none)'} is not accepted; send ${FORM} or application/json.`)
  if (f.statusCode && f.statusCode >= 400 && f.statusCode < 500)
    return invalidRequest(
      f.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || f.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err instanceof SyntaxError
        ? 'The body is not valid JSON.'
        : err.message,
    )
  if (err instanceof SyntaxError) return invalidRequest('The body is not valid JSON.')
  req.log.error({ err }, 'unhandled error on the token endpoint')
  return new OAuthError(500, 'server_error', 'Something went wrong on our side.', { requestId: String(req.id) })
}

/** The address clients reach this server at: SVC_PUBLIC_URL, else the request's own. */
function baseUrl(publicUrl: string | null, req: FastifyRequest): string {
  if (publicUrl) return publicUrl.replace(/\/+$/, '')
  return `${req.protocol}://${req.host}`
}

const oauthRoutes =
  (d: Pick<Provisions, 'config' | 'oauth' | 'rateLimiter'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { oauth, rateLimiter } = d

    // This plugin's scope only: the token route reads forms, and fails in the RFC's shape.
    app.addContentTypeParser(FORM, { parseAs: 'string' }, (_req, body, done) => {
      const params = new URLSearchParams(body as string)
      const out: Record<string, string> = {}
      for (const [k, v] of params) {
        // RFC 6749 section 3.2: a parameter sent twice is an invalid request.
        if (Object.hasOwn(out, k)) return done(invalidRequest(`${k} is sent more than once.`), undefined)
        Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true })
      }
      done(null, out)
    })
    app.setErrorHandler((err, req, reply) => sendError(reply, toOAuthError(err as Error, req)))

    app.post(
      '/oauth/token',
      {
        config: { auth: 'none' },
        onRequest: async (req) => {
          const d = await rateLimiter.hit(`oauth-token:${req.ip}`, TOKEN_RATE.limit, TOKEN_RATE.windowSeconds)
          if (!d.allowed) {
            throw new ApiError(
              'rate_limited',
              `Over the rate limit of ${d.limit} token requests per ${d.windowSeconds} seconds from this address; retry after ${d.resetSeconds} s.`,
              {
                extra: { limit: d.limit, windowSeconds: d.windowSeconds, retryAfterSeconds: d.resetSeconds },
                headers: { 'retry-after': String(d.resetSeconds) },
              },
            )
          }
        },
        schema: {
          tags: ['oauth'],
          summary: 'Trade an API key for an access token (OAuth 2.0 client credentials)',
          description:
            'RFC 6749 section 4.4. The client is an API key: `client_id` = its id, `client_secret` = the key, in the body or as HTTP Basic. ' +
            'The token acts as its key (same permissions and pin) and stops working when the key is revoked, rotated or expires, or after `expires_in` seconds. ' +
            "Answers (errors too) are in the RFC's shape, not the API's {error, message} envelope. 30 requests per 5 minutes per IP address.",
          consumes: [FORM, 'application/json'],
          security: [],
          body: TokenBody,
          response: {
            200: TokenAnswer,
            400: OAuthErrorBody,
            401: OAuthErrorBody,
            413: OAuthErrorBody,
            415: OAuthErrorBody,
            429: OAuthErrorBody,
            500: OAuthErrorBody,
            503: OAuthErrorBody,
          },
        },
      },
      async (req, reply) => {
        const body = req.body
        if (body.grant_type !== 'client_credentials') {
          throw new OAuthError(
            400,
            'unsupported_grant_type',
            `grant_type ${JSON.stringify(body.grant_type).slice(0, 60)} is not supported; use client_credentials.`,
          )
        }
        const basic = basicCredentials(req.headers.authorization)
        if (basic && (body.client_id !== undefined || body.client_secret !== undefined)) {
          throw invalidRequest('Send the client credentials once: HTTP Basic or the body, not both.')
        }
        const id = basic?.id ?? body.client_id
        const secret = basic?.secret ?? body.client_secret
        if (!id || !secret) throw invalidClient('Send client_id (the API key id) and client_secret (the key), in the body or as HTTP Basic.')
        const issued = await oauth.issue(id, secret)
        if (!issued) throw invalidClient('The client credentials are unknown, revoked or expired.')
        // The key is known from here on: the audit log records the exchange as the key's.
        req.principal = issued.principal
        return reply.headers(NO_STORE).send({ access_token: issued.accessToken, token_type: 'Bearer' as const, expires_in: issued.expiresIn })
      },
    )
  }

/**
 * The two discovery documents (RFC 8414, RFC 9728). They sit at the root of the host, outside
 * /v1, so app.ts registers this plugin beside the /v1 scope rather than inside it.
 */
export const oauthMetadataRoutes =
  (d: Pick<Provisions, 'config'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { config } = d

    const ServerMetadata = Type.Object(
      {
        issuer: Type.String(),
        token_endpoint: Type.String(),
        grant_types_supported: Type.Array(Type.String()),
        token_endpoint_auth_methods_supported: Type.Array(Type.String()),
        response_types_supported: Type.Array(Type.String()),
      },
      { additionalProperties: true },
    )
    app.get(
      '/.well-known/oauth-authorization-server',
      {
        config: { auth: 'none' },
        schema: { tags: ['oauth'], summary: 'OAuth authorization server metadata (RFC 8414)', security: [], response: { 200: ServerMetadata, 400: ErrorBody } },
      },
      async (req) => {
        const base = baseUrl(config.publicUrl, req)
        return {
          issuer: base,
          token_endpoint: `${base}/v1/oauth/token`,
          grant_types_supported: ['client_credentials'],
          token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
          // No authorization endpoint: client credentials only.
          response_types_supported: [],
          service_documentation: `${base}/v1/docs`,
        }
      },
    )

    const ResourceMetadata = Type.Object(
      {
        resource: Type.String(),
        authorization_servers: Type.Array(Type.String()),
        bearer_methods_supported: Type.Array(Type.String()),
      },
      { additionalProperties: true },
    )
    app.get(
      '/.well-known/oauth-protected-resource',
      {
        config: { auth: 'none' },
        schema: { tags: ['oauth'], summary: 'Protected resource metadata (RFC 9728)', security: [], response: { 200: ResourceMetadata, 400: ErrorBody } },
      },
      async (req) => {
        const base = baseUrl(config.publicUrl, req)
        return {
          resource: base,
          authorization_servers: [base],
          bearer_methods_supported: ['header'],
          resource_name: 'Signage control API',
          resource_documentation: `${base}/v1/docs`,
        }
      },
    )
  }
export default oauthRoutes
