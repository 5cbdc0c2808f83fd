// Who is calling: the credential's Actor, its workspace and what it may do.
import type { PermissionGrant } from '@svc/shared'

export type Actor =
  | { kind: 'key'; id: string | null; name: string | null; nodeId: string | null }
  | { kind: 'user'; id: string | null; name: string | null; email: string | null; nodeId: null }

export interface Principal {
  actor: Actor
  workspaceId: string
  grant: PermissionGrant
  /** Location the credential is pinned to; null = workspace-wide. */
  nodeId: string | null
}

/** How the principal is named where an action is recorded (`apikey:<id>` or the user id). */
export function actorRef(p: Principal): string {
  return p.actor.kind === 'key' ? `apikey:${p.actor.id}` : String(p.actor.id)
}

/** The authenticated principal of a request whose route requires one. */
export function principalOf(req: { principal: Principal | null }): Principal {
  if (!req.principal) throw new Error('route reached without authentication')
  return req.principal
}
