// Fastify type augmentation: what routes declare in `config` and what hooks attach to a request.
import type { IntervalWorker } from '../workers/Worker.js'
import type { WorkLeases } from '../cluster/WorkLeases.js'
import type { Permission } from '@svc/shared'
import type { Principal } from './Principal.js'
import type { LazySchemas } from './lazySchemas.js'
import type { Lifecycle } from '../lifecycle.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Permission the operation needs; also published as `x-svc-permission`. */
    permission?: Permission
    /** `none` for the few operations marked "Auth: none". */
    auth?: 'none'
    /** Honour `Idempotency-Key` on this create. */
    idempotent?: boolean
    /** Extra per-key limit for this route, requests per 60 s (media upload: 300). */
    perKeyLimit?: number
    /** Refuse credentials pinned to a location (webhooks live at the workspace root). */
    rootOnly?: boolean
    /**
     * The route also accepts a signed URL instead of a bearer (`?exp=&sig=`, media downloads
     * for devices): when `sig` is in the query, authentication is left to the route.
     */
    signedAccess?: boolean
    /**
     * Take NUL (U+0000) in the body's strings: for a route that keeps them inside JSON text
     * (escaped as \u0000, which both engines store) and bounds every other field by its schema.
     */
    nulAllowed?: boolean
    /**
     * How the audit log records this write (domains/audit/auditEdge.ts): recorded at the edge
     * unless `false` (a POST that changes nothing: previews, the MCP transport, whose tool
     * calls are recorded as their own operations) or `'self'` (the service records: sign-ins).
     */
    audit?: false | 'self'
    /** Answer validation failures with this status and code instead of 422 validation_error. */
    validationError?: { status: number; code: string }
  }
  interface FastifyRequest {
    principal: Principal | null
  }
  interface FastifyInstance {
    /** Route schemas, compiled on each route's first use (platform/http/lazySchemas.ts). */
    routeSchemas: LazySchemas
    /** The interval workers by name (tests drive them with runOnce()): built by their modules, started and stopped through `running` (platform/modules.ts). */
    workers: Record<WorkerName, IntervalWorker>
    /** The work leases that keep a `oncePerCloud` worker's runs on one instance (platform/cluster/WorkLeases.ts). */
    leases: WorkLeases
    /** Every /v1 operation registered, for sweeps (tenancy, OpenAPI) and docs. */
    routeCatalog: RouteInfo[]
    /** The stop steps of what app.ts opened, run in reverse by the app's onClose (platform/lifecycle.ts). */
    lifecycle: Lifecycle
  }
}

export type WorkerName = 'status' | 'housekeeper' | 'castExpiry' | 'webhooks' | 'alerts' | 'mediaUrlRefresh' | 'agentRollouts'

export interface RouteInfo {
  method: string
  url: string
  permission: string | null
  auth: 'none' | 'bearer'
}
