// The error envelope: every failure answers {error, message} (+ requestId on 5xx, never
// a stack). Fastify's own errors (validation, body parsing, size) are mapped here.
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { type ApiError, DatabaseBusyError, isApiError } from '../errors.js'
import { genRequestId, REQUEST_ID_HEADER } from './requestId.js'
import { PATTERN_MESSAGES } from '../contract.js'
import { DATE_TIME_HINT } from '../timeRange.js'

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

/** Sent on every answer: the Content-Type is the type, never a hint to sniff past. */
export const NOSNIFF = ['x-content-type-options', 'nosniff'] as const

/** Longest path parameter the router takes (Fastify's maxParamLength); longer answers 414. */
export const MAX_PATH_SEGMENT = 100

/** "must be one of a, b, c" for a short list of allowed values (Ajv says "the allowed values"). */
function oneOf(values: unknown[] | undefined): string | undefined {
  if (!values || values.length === 0 || values.length > 20) return undefined
  return `must be one of ${values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ')}`
}

function fromFastify(err: FastifyError, req: FastifyRequest): { status: number; body: Envelope } | null {
  if (err.validation) {
    const v = req.routeOptions.config?.validationError
    const where = err.validationContext ?? 'request'
    const first = err.validation[0]
    const field = `${where}${(first?.instancePath ?? '').replace(/\//g, '.')}`
    const missing = first?.keyword === 'required' ? ` ${String((first.params as { missingProperty?: string }).missingProperty)} is required.` : ''
    const unknown = first?.keyword === 'additionalProperties' ? String((first.params as { additionalProperty?: string }).additionalProperty) : null
    const friendly =
      first?.keyword === 'pattern'
        ? PATTERN_MESSAGES.get(String((first.params as { pattern?: string }).pattern))
        : first?.keyword === 'enum'
          ? oneOf((first.params as { allowedValues?: unknown[] }).allowedValues)
          : first?.keyword === 'minLength' || first?.keyword === 'maxLength'
            ? `must be at ${first.keyword === 'minLength' ? 'least' : 'most'} ${String((first.params as { limit?: number }).limit)} characters`
            : first?.keyword === 'format' && (first.params as { format?: string }).format === 'date-time'
              ? DATE_TIME_HINT
              : undefined
    const message = friendly
      ? `${field} ${friendly}.`
      : unknown !== null
        ? `${field}.${unknown} is not a field of this operation.`
        : missing
          ? `${field}:${missing}`
          : `${field} ${first?.message ?? 'is invalid'}.`
    return { status: v?.status ?? 422, body: { error: v?.code ?? 'validation_error', message } }
  }
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
      return { status: 413, body: { error: 'too_large', message: 'The body is over the size limit.' } }
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return {
        status: 415,
        body: { error: 'unsupported_type', message: `Content-Type ${req.headers['content-type'] ?? '(none)'} is not accepted here; send application/json.` },
      }
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, body: { error: 'bad_request', message: 'The body is empty but Content-Type says JSON.' } }
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { status: 400, body: { error: 'bad_request', message: 'The body is not valid JSON.' } }
    // Multipart forms (@fastify/multipart): one file, a few small fields.
    case 'FST_FILES_LIMIT':
      return { status: 422, body: { error: 'validation_error', message: 'Only one file, in the part named "file", is accepted.' } }
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return {
        status: 422,
        body: { error: 'validation_error', message: 'The form has too many parts; send one "file" part and at most a few fields (name, folderId, nodeId).' },
      }
    case 'FST_PROTO_VIOLATION':
      return { status: 400, body: { error: 'bad_request', message: 'A form field is named __proto__ or constructor.' } }
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return { status: 415, body: { error: 'unsupported_type', message: 'Send the file as multipart/form-data with a `file` part.' } }
    case 'FST_ERR_BAD_URL':
      return { status: 400, body: { error: 'bad_request', message: 'The URL path is not valid (a malformed %-escape?).' } }
    // The router refuses a path segment over its limit (no id is that long); the path is not echoed.
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return {
        status: 414,
        body: { error: 'too_large', message: `A path segment is over ${MAX_PATH_SEGMENT} characters; no id is that long.` },
      }
  }
  // The multipart parser: a form whose bytes end before its closing boundary.
  if (/unexpected end of multipart data/i.test(err.message)) {
    return { status: 400, body: { error: 'bad_request', message: 'The form ends before its closing boundary (a cut-off upload?); send the whole form.' } }
  }
  if (/prototype property/i.test(err.message)) {
    return { status: 400, body: { error: 'bad_request', message: 'The body holds a forbidden key (__proto__ or constructor.prototype).' } }
  }
  if (err instanceof SyntaxError || (err.statusCode === 400 && /JSON/i.test(err.message))) {
    return { status: 400, body: { error: 'bad_request', message: 'The body is not valid JSON.' } }
  }
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
    return { status: err.statusCode, body: { error: err.statusCode === 413 ? 'too_large' : 'bad_request', message: err.message } }
  }
  return null
}

/**
 * Fastify's frameworkErrors: errors raised before routing (a path with a malformed
 * %-escape) answer the envelope like everything else.
 */
export function frameworkErrorHandler(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  const mapped = fromFastify(err, req) ?? { status: 400, body: { error: 'bad_request', message: 'The request is not valid.' } }
  reply.header(REQUEST_ID_HEADER, req.id).header(NOSNIFF[0], NOSNIFF[1])
  void send(reply, mapped.status, mapped.body)
}

/**
 * The HTTP server's clientError: requests Node refuses before Fastify sees them (headers
 * or URL over the size limit, malformed HTTP, header timeout). Written straight to the
 * socket in the envelope, with a request id in the header and the body.
 */
export function clientErrorHandler(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const requestId = genRequestId({ headers: {} } as never)
  let status = 400
  let body: Envelope = { error: 'bad_request', message: 'The request is not valid HTTP.' }
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    status = 431
    body = { error: 'too_large', message: 'The request line and headers are over the size limit (16 KB); shorten the URL or the headers.' }
  } else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' || err.code === 'ERR_HTTP_HEADERS_TIMEOUT') {
    status = 408
    body = { error: 'bad_request', message: 'The request was not received in time.' }
  }
  body.requestId = requestId
  this.log.debug({ err, requestId }, 'client error')
  if (socket.writable) {
    const text = JSON.stringify(body)
    const reason = status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request'
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\n${REQUEST_ID_HEADER}: ${requestId}\r\n${NOSNIFF[0]}: ${NOSNIFF[1]}\r\nConnection: close\r\n\r\n${text}`,
    )
  }
  socket.destroy()
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

  // A path the API knows, asked with a method it does not take, answers 405 with the
  // methods it does take in Allow (RFC 9110 15.5.6); a path it does not know, 404.
  const paths = new RoutePaths()
  app.addHook('onRoute', (route) => paths.add(route.url, route.method))
  app.setNotFoundHandler((req, reply) => {
    const allowed = paths.methodsOf(req.url)
    if (allowed.length > 0 && !allowed.includes(req.method)) {
      return send(
        reply,
        405,
        { error: 'method_not_allowed', message: `This path does not take ${req.method}; it takes ${allowed.join(', ')} (see the Allow header).` },
        { allow: allowed.join(', ') },
      )
    }
    return send(reply, 404, { error: 'not_found', message: 'No route here.' })
  })
}

/**
 * How specific a path is, segment by segment: a fixed segment (2) before a parameter (1)
 * before a wildcard (0), as the router picks them. `/v1/screens/bulk-assign` outranks
 * `/v1/screens/:id`.
 */
function specificity(url: string): number[] {
  return url.split('/').map((seg) => (seg.includes('*') ? 0 : seg.includes(':') ? 1 : 2))
}

/** Compares two specificities: positive when `a` is the more specific. */
function compareSpecificity(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!
  return a.length - b.length
}

/** The registered paths as patterns (`:id` one segment, `*` the rest), with their methods. */
class RoutePaths {
  private readonly byUrl = new Map<string, { re: RegExp; methods: Set<string>; rank: number[] }>()

  add(url: string, method: string | string[]): void {
    let entry = this.byUrl.get(url)
    if (!entry) {
      const pattern = url
        .split(/(:[A-Za-z0-9_]+|\*)/)
        .map((part) => (part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
        .join('')
      entry = { re: new RegExp(`^${pattern}$`), methods: new Set(), rank: specificity(url) }
      this.byUrl.set(url, entry)
    }
    for (const m of Array.isArray(method) ? method : [method]) entry.methods.add(m)
  }

  /**
   * The methods the path takes, sorted; empty when no route has this path. Of the routes
   * whose pattern matches, only the most specific count: a fixed path beside an `:id` route
   * (`/v1/screens/bulk-assign` beside `/v1/screens/:id`) names its own methods, not the
   * `:id` route's.
   */
  methodsOf(url: string): string[] {
    const q = url.indexOf('?')
    const path = q < 0 ? url : url.slice(0, q)
    let best: number[] | null = null
    let out = new Set<string>()
    for (const { re, methods, rank } of this.byUrl.values()) {
      if (!re.test(path)) continue
      const cmp = best === null ? 1 : compareSpecificity(rank, best)
      if (cmp < 0) continue
      if (cmp > 0) {
        best = rank
        out = new Set()
      }
      for (const m of methods) out.add(m)
    }
    return [...out].sort()
  }
}
