// The two HTTP calls of the device side of pairing:
// register, and poll with the poll secret. Network failures become CloudUnreachableError
// with the cloud address and the socket error code, so the log says what is wrong.
import { certificateHint, type FetchLike } from './trust.js'

export interface MqttLinkInfo {
  /** `mqtts://host:port` (`mqtt://` from a cloud that is not https), or null when the cloud offers none: then `wsUrl`. */
  url: string | null
  wsUrl: string
  username: string
  topicPrefix: string
}

export interface Registration {
  registrationId: string
  pairingCode: string
  pollSecret: string
  expiresAt: string
}

export type PollAnswer =
  | { state: 'pending'; expiresAt?: string }
  | { state: 'expired'; expiresAt?: string }
  | { state: 'paired'; screenId: string; deviceSecret?: string; mqtt?: MqttLinkInfo }
  /** The registration is gone (404): register again. */
  | { state: 'unknown' }

export class CloudUnreachableError extends Error {
  readonly code: string
  constructor(cloudUrl: string, code: string) {
    super(`cannot reach cloud at ${cloudUrl}: ${code}${certificateHint(code)}`)
    this.name = 'CloudUnreachableError'
    this.code = code
  }
}

/** The cloud answered, but not as expected (5xx, 429, a body that does not fit). */
export class CloudResponseError extends Error {
  constructor(
    message: string,
    readonly status: number,
    /** From Retry-After, when the cloud said how long to wait. */
    readonly retryAfterMs: number | null = null,
  ) {
    super(message)
    this.name = 'CloudResponseError'
  }
}

export type { FetchLike }

export interface CloudClientOptions {
  /** Base URL such as `http://cloud.example:8080`. */
  cloudUrl: string
  fetch?: FetchLike
  timeoutMs?: number
}

/** The socket error code buried in a fetch failure (`ECONNREFUSED`, `ENOTFOUND`, …). */
export function networkCode(err: unknown): string {
  let e: unknown = err
  let message = err instanceof Error ? err.message : String(err)
  for (let depth = 0; depth < 4 && e; depth++) {
    if (e instanceof Error && e.message) message = e.message
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string' && code !== 'UND_ERR_SOCKET') return code
    const inner = (e as { errors?: unknown[] }).errors
    if (Array.isArray(inner) && inner.length) {
      const c = (inner[0] as { code?: unknown }).code
      if (typeof c === 'string') return c
    }
    if ((e as { name?: unknown }).name === 'TimeoutError') return 'ETIMEDOUT'
    e = (e as { cause?: unknown }).cause
  }
  // No code anywhere (e.g. undici's "bad port"): the innermost message says most.
  return message
}

export class CloudClient {
  readonly cloudUrl: string
  readonly #fetch: FetchLike
  readonly #timeoutMs: number

  constructor(options: CloudClientOptions) {
    this.cloudUrl = options.cloudUrl.replace(/\/+$/, '')
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init))
    this.#timeoutMs = options.timeoutMs ?? 15_000
  }

  async register(body: { model?: string; serialNumber?: string }): Promise<Registration> {
    const res = await this.#request('POST', '/v1/devices/register', null, body)
    if (res.status !== 201) throw await this.#unexpected(res, 'register')
    const data = ((await res.json()) as { data?: Partial<Registration> }).data
    if (!data || typeof data.registrationId !== 'string' || typeof data.pairingCode !== 'string' || typeof data.pollSecret !== 'string')
      throw new CloudResponseError('register: the answer lacks registrationId, pairingCode or pollSecret', res.status)
    return { registrationId: data.registrationId, pairingCode: data.pairingCode, pollSecret: data.pollSecret, expiresAt: String(data.expiresAt ?? '') }
  }

  async poll(registrationId: string, pollSecret: string): Promise<PollAnswer> {
    const res = await this.#request('GET', `/v1/devices/register/${encodeURIComponent(registrationId)}`, pollSecret)
    if (res.status === 404) return { state: 'unknown' }
    if (res.status !== 200) throw await this.#unexpected(res, 'poll')
    const data = ((await res.json()) as { data?: { state?: unknown } }).data
    if (!data || (data.state !== 'pending' && data.state !== 'expired' && data.state !== 'paired'))
      throw new CloudResponseError('poll: the answer has no known state', res.status)
    return data as PollAnswer
  }

  async #request(method: string, path: string, bearer: string | null, body?: unknown): Promise<Response> {
    const headers: Record<string, string> = {}
    if (bearer) headers.authorization = `Bearer ${bearer}`
    if (body !== undefined) headers['content-type'] = 'application/json'
    try {
      return await this.#fetch(`${this.cloudUrl}${path}`, {
        method,
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(this.#timeoutMs),
      })
    } catch (err) {
      throw new CloudUnreachableError(this.cloudUrl, networkCode(err))
    }
  }

  async #unexpected(res: Response, what: string): Promise<CloudResponseError> {
    let detail = ''
    try {
      const b = (await res.json()) as { error?: string; message?: string }
      detail = [b.error, b.message].filter(Boolean).join(': ')
    } catch {
      // not JSON: the status says enough
    }
    const retryAfter = Number(res.headers.get('retry-after'))
    return new CloudResponseError(
      `${what}: the cloud answered ${res.status}${detail ? ` (${detail})` : ''}`,
      res.status,
      Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : null,
    )
  }
}
