// Retiring routes: each is announced at least 90 days before its sunset,
// its responses carry `Deprecation` (RFC 9745: `@<unix seconds>` of the announcement) and
// `Sunset` (RFC 8594: HTTP date), and GET /v1/status/deprecations lists them.
import type { FastifyInstance } from 'fastify'

export const NOTICE_DAYS = 90
export const DEPRECATION_POLICY =
  'A retiring route is announced at least 90 days before it stops working. Until its sunset date it keeps working and its responses carry Deprecation and Sunset headers.'

export interface Deprecation {
  /** `METHOD /path` as registered, for example `GET /v1/screens/:id/legacy`. */
  route: string
  announced: string
  sunset: string
  replacement: string | null
  why: string
}

/** Routes being retired now. Empty: nothing is scheduled. */
export const DEPRECATIONS: Deprecation[] = []

export function daysBetween(a: string, b: string): number {
  return Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / 86_400_000)
}

export function validateDeprecations(list: Deprecation[]): void {
  for (const d of list) {
    if (!/^(GET|POST|PUT|PATCH|DELETE) \/v1\//.test(d.route)) throw new Error(`deprecation route "${d.route}" must be "METHOD /v1/..."`)
    if (daysBetween(d.announced, d.sunset) < NOTICE_DAYS) throw new Error(`deprecation of ${d.route} gives less than ${NOTICE_DAYS} days notice`)
  }
}

export function deprecationEntry(d: Deprecation): Deprecation & { noticeDays: number } {
  return { ...d, noticeDays: daysBetween(d.announced, d.sunset) }
}

export function installDeprecationHeaders(app: FastifyInstance, list: Deprecation[]): void {
  validateDeprecations(list)
  const byRoute = new Map(list.map((d) => [d.route, d]))
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    for (const m of methods) {
      // Fastify's automatic HEAD route for a GET is a call to the same retiring route.
      const d = byRoute.get(`${m === 'HEAD' ? 'GET' : m} ${route.url}`)
      if (!d) continue
      const headers = {
        deprecation: `@${Math.floor(Date.parse(`${d.announced}T00:00:00Z`) / 1000)}`,
        sunset: new Date(`${d.sunset}T00:00:00Z`).toUTCString(),
        ...(d.replacement ? { link: `<${d.replacement}>; rel="successor-version"` } : {}),
      }
      const hook = async (_req: unknown, reply: { headers(h: Record<string, string>): unknown }) => {
        reply.headers(headers)
      }
      const existing = route.onRequest ? (Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest]) : []
      route.onRequest = [hook as never, ...existing]
    }
  })
}
