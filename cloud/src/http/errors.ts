// The error envelope: every failure answers {error, message} (+ requestId on 5xx, never
// a stack). Fastify's own errors (validation, body parsing, size) are mapped here.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError, DatabaseBusyError, isApiError } from '../errors.js'
import { PATTERN_MESSAGES } from './schemas.js'

interface Envelope {
  error: string
  message?: string
  requestId?: string
  [k: string]: unknown
}

function send(reply: FastifyReply, status: number, body: Envelope, headers?: Record<string, string>): FastifyReply {
  if (status >= 500) body.requestId = String(reply.request.id)
  if (headers) reply.headers(headers)
  return reply.code(status).type('application/json; charset=utf-8').send(body)
}

function fromFastify(err: FastifyError, req: FastifyRequest): { status: number; body: Envelope } | null {
  if (err.validation) {
    const v = req.routeOptions.config?.validationError
    const where = err.validationContext ?? 'request'
    const first = err.validation[0]
    const field = `${where}${(first?.instancePath ?? '').replace(/\//g, '.')}`
    const missing = first?.keyword === 'required' ? ` ${String((first.params as { missingProperty?: string }).missingProperty)} is required.` : ''
    const unknown = first?.keyword === 'additionalProperties' ? String((first.params as { additionalProperty?: string }).additionalProperty) : null
    const friendly = first?.keyword === 'pattern' ? PATTERN_MESSAGES.get(String((first.params as { pattern?: string }).pattern)) : undefined
    const message = friendly ? `${field} ${friendly}.` : unknown !== null ? `${field}.${unknown} is not a field of this operation.` : missing ? `${field}:${missing}` : `${field} ${first?.message ?? 'is invalid'}.`
    return { status: v?.status ?? 422, body: { error: v?.code ?? 'validation_error', message } }
  }
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
      return { status: 413, body: { error: 'too_large', message: 'The body is over the size limit.' } }
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, body: { error: 'unsupported_type', message: `Content-Type ${req.headers['content-type'] ?? '(none)'} is not accepted here; send application/json.` } }
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, body: { error: 'bad_request', message: 'The body is empty but Content-Type says JSON.' } }
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { status: 400, body: { error: 'bad_request', message: 'The body is not valid JSON.' } }
  }
  if (err instanceof SyntaxError || (err.statusCode === 400 && /JSON/i.test(err.message))) {
    return { status: 400, body: { error: 'bad_request', message: 'The body is not valid JSON.' } }
  }
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
    return { status: err.statusCode, body: { error: err.statusCode === 413 ? 'too_large' : 'bad_request', message: err.message } }
  }
  return null
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | ApiError | Error, req, reply) => {
    if (isApiError(err)) {
      return send(reply, err.status, { error: err.code, message: err.message, ...(err.extra ?? {}) }, err.headers)
    }
    if (err instanceof DatabaseBusyError || (err as { cause?: unknown }).cause instanceof DatabaseBusyError) {
      req.log.warn({ err }, 'database busy')
      return send(reply, 503, { error: 'database_busy', message: 'The database is busy; retry after the Retry-After interval.' }, { 'retry-after': '2' })
    }
    const mapped = fromFastify(err as FastifyError, req)
    if (mapped) return send(reply, mapped.status, mapped.body)
    req.log.error({ err }, 'unhandled error')
    return send(reply, 500, { error: 'internal_error', message: 'Something went wrong on our side.' })
  })

  app.setNotFoundHandler((_req, reply) => send(reply, 404, { error: 'not_found', message: 'No route here.' }))
}
