// The console is an API client like any other: the typed client over /v1 on the same
// origin, carrying the session cookie (the browser sends it) and, on writes, the session's
// CSRF token. A 401 anywhere means the session is gone: the app shows the sign-in page.
import { createApiClient, type ApiClient } from '../../src/client/index.js'

let csrf: string | null = null
const signedOutListeners = new Set<() => void>()

export function setCsrf(token: string | null): void {
  csrf = token
}

/** The session's CSRF token, for writes made outside the typed client (an upload with progress). */
export function getCsrf(): string | null {
  return csrf
}

/** Called when an answer says the session is gone (401). */
export function onSignedOut(fn: () => void): () => void {
  signedOutListeners.add(fn)
  return () => signedOutListeners.delete(fn)
}

export const api: ApiClient = createApiClient(location.origin, null, {
  middleware: [
    {
      onRequest({ request }) {
        if (request.method !== 'GET' && request.method !== 'HEAD' && csrf) request.headers.set('x-svc-csrf', csrf)
        return request
      },
      onResponse({ response, request }) {
        if (response.status === 401 && !new URL(request.url).pathname.startsWith('/v1/session') && !request.url.includes('/v1/invites/'))
          for (const fn of signedOutListeners) fn()
        return response
      },
    },
  ],
})

/** An answer outside 2xx: the API's envelope, and the field its message names (for forms). */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: Record<string, unknown>,
  ) {
    super(message)
  }

  /**
   * The body field a 422 names (`body.name must …`, `name must …`), or null. The webhook
   * routes answer their validation failures 400 (bad_request, unsafe_url: `url is not …`):
   * those name fields too.
   */
  field(fields: readonly string[]): string | null {
    if (this.status !== 422 && this.status !== 400) return null
    const m = /^(?:body\.|querystring\.)?([A-Za-z][A-Za-z0-9]*)/.exec(this.message)
    return m && fields.includes(m[1]!) ? m[1]! : null
  }
}

/** The `data` (or the whole answer) of a success; throws ApiFailure otherwise. */
export async function call<T>(p: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let r: { data?: T; error?: unknown; response: Response }
  try {
    r = await p
  } catch (e) {
    throw new ApiFailure(0, 'network', `The service did not answer (${(e as Error).message}).`, {})
  }
  if (r.error !== undefined || !r.response.ok) {
    const body = (r.error ?? {}) as { error?: string; message?: string }
    throw new ApiFailure(r.response.status, body.error ?? 'error', body.message ?? `HTTP ${r.response.status}`, body as Record<string, unknown>)
  }
  return r.data as T
}
