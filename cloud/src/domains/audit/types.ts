// What an audit entry says: who (actor), by which way (via), what (action, resource, changes), and how it ended.
export const AUDIT_VIAS = ['api', 'console', 'mcp', 'scim', 'sso', 'cli', 'device'] as const
export type AuditVia = (typeof AUDIT_VIAS)[number]
export const AUDIT_ACTOR_KINDS = ['user', 'apiKey', 'device', 'system', 'anonymous'] as const
export type AuditActorKind = (typeof AUDIT_ACTOR_KINDS)[number]
export const AUDIT_OUTCOMES = ['success', 'denied', 'failed'] as const
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number]

export interface AuditActor {
  kind: AuditActorKind
  id: string | null
  name: string | null
}

export interface AuditResource {
  kind: string
  id: string | null
  name: string | null
}

export interface AuditChange {
  path: string
  before: unknown
  after: unknown
}

/** What is recorded; the trail adds the id, the time, the chain's order and the hashes. */
export interface AuditRecord {
  /** null: outside any workspace (the cloud's own chain). */
  workspaceId: string | null
  actor: AuditActor
  via: AuditVia
  action: string
  resource: AuditResource
  nodeId: string | null
  changes: AuditChange[]
  requestId: string | null
  ip: string | null
  outcome: AuditOutcome
}

export interface AuditEntry extends Omit<AuditRecord, 'workspaceId'> {
  id: string
  at: string
  seq: number
  hash: string
  prevHash: string
}

/** A sign-in or a refused sign-in, as the sign-in paths (password, invite, SSO) report it. */
export interface SignInRecord {
  /** The workspace of the user signing in; null when the e-mail matched no one. */
  workspaceId: string | null
  userId: string | null
  /** The user's e-mail (or the one tried). */
  name: string | null
  via: AuditVia
  /** `session.create` by default; e.g. `invite.accept`, `sso.oidc`, `sso.saml`. */
  action?: string
  outcome: AuditOutcome
  requestId: string | null
  ip: string | null
  /** Why a sign-in was refused (recorded as a change of `reason`). */
  reason?: string
}

/** Which entries of a chain a list or export reads. */
export interface AuditFilter {
  chain: string
  actorId?: string
  resourceId?: string
  action?: string
  /** Inclusive, UTC ISO. */
  from?: string | null
  /** Exclusive, UTC ISO. */
  to?: string | null
  /** Entries older than this seq (the cursor). */
  beforeSeq?: number | null
}
