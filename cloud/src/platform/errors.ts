// One error class for every answer that is not a success. Routes and services throw
// ApiError; the error handler turns it into the envelope {error, message}.

export const ERROR_STATUS = {
  bad_request: 400,
  unsafe_url: 400,
  missing_credentials: 401,
  invalid_credentials: 401,
  forbidden: 403,
  not_shared: 403,
  not_found: 404,
  method_not_allowed: 405,
  revoked: 409,
  already_inactive: 409,
  idempotency_in_progress: 409,
  not_subscribed: 409,
  conflict: 409,
  node_not_empty: 409,
  too_large: 413,
  range_not_satisfiable: 416,
  unsupported_type: 415,
  validation_error: 422,
  invalid_node: 422,
  invalid_folder: 422,
  content_unplayable: 422,
  no_screens: 422,
  rate_limited: 429,
  internal_error: 500,
  provider_unreachable: 502,
  database_busy: 503,
} as const

export type ErrorCode = keyof typeof ERROR_STATUS

export class ApiError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly extra: Record<string, unknown> | undefined
  readonly headers: Record<string, string> | undefined

  constructor(code: ErrorCode, message: string, opts: { status?: number; extra?: Record<string, unknown>; headers?: Record<string, string> } = {}) {
    super(message)
    this.name = 'ApiError'
    this.code = code
    this.status = opts.status ?? ERROR_STATUS[code]
    this.extra = opts.extra
    this.headers = opts.headers
  }
}

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError
}

export const notFound = (what = 'Not found.'): ApiError => new ApiError('not_found', what)
export const validation = (message: string): ApiError => new ApiError('validation_error', message)
export const forbidden = (perm: string): ApiError => new ApiError('forbidden', `Missing permission: ${perm}`)

/** Thrown by the database layer when SQLite stays locked past the busy timeout. */
export class DatabaseBusyError extends Error {
  constructor(cause?: unknown) {
    super('database is busy', { cause })
    this.name = 'DatabaseBusyError'
  }
}
