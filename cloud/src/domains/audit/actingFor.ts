// Who a request acts for when it carries no credential of the platform but proves itself to
// the route (a CAP feed's push secret): the route names the workspace and the actor once it
// has checked the proof, and the audit edge records the write in that workspace's chain.
import type { AuditActor } from './types.js'

const acting = new WeakMap<object, { workspaceId: string; actor: AuditActor }>()

/** Called by a route once its own proof holds: the request's write is recorded as `actor`'s, in `workspaceId`. */
export function actFor(req: object, workspaceId: string, actor: AuditActor): void {
  acting.set(req, { workspaceId, actor })
}

/** What `actFor` said of this request, if anything. */
export function actingFor(req: object): { workspaceId: string; actor: AuditActor } | undefined {
  return acting.get(req)
}
