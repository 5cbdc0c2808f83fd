// A small typed client for the control API: openapi-fetch over the types generated from
// the served document (schema.gen.ts). Paths, parameters, bodies and answers are checked
// by the compiler; a route change that breaks a caller breaks the typecheck.
//
//   const api = createApiClient('https://signage.example.com', 'ak_us_live_…')
//   const { data, error } = await api.GET('/v1/screens/{id}', { params: { path: { id } } })
import createClient, { type Client, type Middleware } from 'openapi-fetch'
import type { paths, operations } from './schema.gen.js'

export type { paths, operations }
export type ApiClient = Client<paths>

export interface ApiClientOptions {
  /** A fetch to use instead of the global one (tests, proxies). */
  fetch?: (input: Request) => Promise<Response>
  /** Extra headers on every request. */
  headers?: Record<string, string>
  middleware?: Middleware[]
}

/** `token`: an API key or session token, sent as `Authorization: Bearer …`; null for public operations. */
export function createApiClient(baseUrl: string, token: string | null, opts: ApiClientOptions = {}): ApiClient {
  const client = createClient<paths>({
    baseUrl: baseUrl.replace(/\/+$/, ''),
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...opts.headers },
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  })
  for (const m of opts.middleware ?? []) client.use(m)
  return client
}

/** The `data` of a success, or a thrown Error carrying the `{error, message}` envelope. */
export async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call
  if (error !== undefined || data === undefined) {
    const e = error as { error?: string; message?: string } | undefined
    throw Object.assign(new Error(`${response.status} ${e?.error ?? ''}: ${e?.message ?? ''}`), { status: response.status, body: error })
  }
  return data
}
