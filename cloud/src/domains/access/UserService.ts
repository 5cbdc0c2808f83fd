// Workspace users and their session tokens (the second kind of bearer credential).
// Inviting a user answers a first session token, shown once and stored only as a hash
// (like a key's secret). A caller never gives or changes a role holding a permission it
// lacks, nor acts on a user whose role holds one. The workspace always keeps an owner: the
// last one cannot be removed or demoted (409 `conflict`). Removing a user deletes their
// sessions and publishes a CredentialChange, so their tokens are refused on the next request
// (a role change ends their sessions too, all but the one a user changes their own role with):
// a session's principal is kept in the PrincipalCache (shared with API keys), tagged with
// its user, and a removal or role change drops it before the call answers.
import { Type, type Static } from '@sinclair/typebox'
import { ROLES, ROLE_PERMISSIONS, missingFrom, type PermissionGrant, type Role } from '@svc/shared'
import type { Clock, IdGenerator, RandomSource } from '../../platform/clock.js'
import type { Database, Queryable } from '../../platform/db/Database.js'
import { isUniqueViolation } from '../../platform/db/Database.js'
import { ApiError, notFound, validation } from '../../platform/errors.js'
import { hashSecret, newSessionToken, secretMatches, sessionLookup } from '../../platform/secrets.js'
import type { Principal } from '../../platform/http/Principal.js'
import { freezePrincipal, PrincipalCache, userTag } from './PrincipalCache.js'
import { pageOf, type Page, type PageRequest } from '../../platform/paging.js'
import { Nullable, StringEnum, Timestamp } from '../../platform/contract.js'
import { UserRepository, type UserRecord } from './UserRepository.js'
import { LocalCredentialChanges, type CredentialChanges } from './CredentialChanges.js'

/** A user row with its role narrowed to the roles there are. */
export type UserRow = Omit<UserRecord, 'role'> & { role: Role }

/** A user as the API answers it: the route's response schema, and UserView is derived from it. */
export const User = Type.Object({
  id: Type.String(),
  name: Nullable(Type.String()),
  email: Type.String(),
  role: StringEnum(ROLES),
  emailVerifiedAt: Nullable(Timestamp),
  createdAt: Timestamp,
  joinedAt: Nullable(
    Type.String({
      format: 'date-time',
      description: 'When the user joined: accepted their invite (set a password) or first came through single sign-on; null while only invited.',
    }),
  ),
  lastSignInAt: Nullable(
    Type.String({
      format: 'date-time',
      description: 'When the user last signed in (a password, an invite or single sign-on); null before the first, or when older than the kept sessions.',
    }),
  ),
})
export type UserView = Static<typeof User>

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export class UserService {
  private readonly repo: UserRepository
  private readonly principals: PrincipalCache

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly random: RandomSource | undefined,
    private readonly sessionTtlHours: number,
    private readonly changes: CredentialChanges = new LocalCredentialChanges(),
    /** Shared with the other credentials (the access module passes the API keys' one). */
    principals?: PrincipalCache,
  ) {
    this.repo = new UserRepository(db.kysely)
    this.principals = principals ?? new PrincipalCache(clock, changes)
  }

  /** A user of the workspace by id (approvers, requesters), or undefined. */
  member(workspaceId: string, id: string): Promise<Pick<UserRow, 'id' | 'name' | 'email'> | undefined> {
    return this.repo.byId(workspaceId, id)
  }

  /** The addresses of the workspace's users with this role (alert recipients `role:<role>`). */
  emailsWithRole(workspaceId: string, role: string): Promise<string[]> {
    return this.repo.emailsWithRole(workspaceId, role)
  }

  static view(u: UserRow | UserRecord, lastSessionAt: string | null = null): UserView {
    const joinedAt = u.email_verified_at ?? u.password_set_at ?? null
    return {
      id: u.id,
      name: u.name,
      email: u.email,
      role: u.role as Role,
      emailVerifiedAt: u.email_verified_at,
      createdAt: u.created_at,
      joinedAt,
      // The session an invite hands out opens before the user joins: only those since count as sign-ins.
      lastSignInAt: joinedAt !== null && lastSessionAt !== null && lastSessionAt >= joinedAt ? lastSessionAt : null,
    }
  }

  private static role(input: string | undefined, fallback: Role): Role {
    const role = (input ?? fallback) as Role
    if (!ROLES.includes(role)) throw validation(`role must be one of ${ROLES.join(', ')}.`)
    return role
  }

  /** Giving, changing or removing a role needs every permission the role holds. */
  private static requireCovers(p: Principal, role: Role): void {
    const lacking = missingFrom(p.grant, ROLE_PERMISSIONS[role] as PermissionGrant)
    if (lacking.length) throw new ApiError('forbidden', `Missing permission: ${lacking[0]}`)
  }

  async create(workspaceId: string, input: { email: string; name?: string | null; role?: string }): Promise<UserRow> {
    const email = input.email.trim().toLowerCase()
    if (!EMAIL.test(email) || email.length > 254) throw validation('email is not an email address.')
    const role = UserService.role(input.role, 'owner')
    const row: UserRecord = {
      id: this.ids.next('user'),
      workspace_id: workspaceId,
      name: input.name?.trim().slice(0, 200) || null,
      email,
      role,
      email_verified_at: null,
      created_at: this.clock.now().toISOString(),
      password_hash: null,
      password_set_at: null,
    }
    try {
      await this.repo.insert(row)
    } catch (e) {
      if (isUniqueViolation(e)) throw new ApiError('conflict', `A user with email ${email} already exists in this workspace.`)
      throw e
    }
    return row as UserRow
  }

  /** POST /v1/users: the user and a first session token (shown once). */
  async invite(
    p: Principal,
    input: { email: string; name?: string | null; role: string },
  ): Promise<{ user: UserView; row: UserRow; sessionToken: string; sessionExpiresAt: string }> {
    const role = UserService.role(input.role, 'viewer')
    UserService.requireCovers(p, role)
    const user = await this.create(p.workspaceId, { ...input, role })
    const session = await this.createSession(user)
    return { user: UserService.view(user), row: user, sessionToken: session.token, sessionExpiresAt: session.expiresAt }
  }

  /** A user the caller may send a new invite link to (404 in another workspace; 403 for a role the caller does not cover). */
  async invitable(p: Principal, id: string): Promise<UserRow> {
    const u = await this.repo.byId(p.workspaceId, id)
    if (!u) throw notFound('No user with this id.')
    UserService.requireCovers(p, u.role as Role)
    return u as UserRow
  }

  async list(p: Principal, page: PageRequest): Promise<Page<UserView>> {
    const rows = await this.repo.list(p.workspaceId, page)
    const last = await this.repo.lastSessions(rows.map((r) => r.id))
    return pageOf(rows, page, (u) => UserService.view(u, last.get(u.id) ?? null), page.count ? await this.repo.count(p.workspaceId) : undefined)
  }

  async view(p: Principal, id: string): Promise<UserView> {
    const u = await this.repo.byId(p.workspaceId, id)
    if (!u) throw notFound('No user with this id.')
    return UserService.view(u, (await this.repo.lastSessions([u.id])).get(u.id) ?? null)
  }

  /** Changes a name or role; a role change ends the user's sessions (but `callerToken`'s, when they change their own). */
  async update(p: Principal, id: string, input: { name?: string | null; role?: string }, callerToken?: string): Promise<UserView> {
    const set: { name?: string | null; role?: string } = {}
    if (input.name !== undefined) set.name = input.name === null ? null : input.name.trim().slice(0, 200) || null
    const role = input.role === undefined ? undefined : UserService.role(input.role, 'viewer')
    const own = role !== undefined && callerToken && p.actor.kind === 'user' && p.actor.id === id ? await this.sessionOf(callerToken) : undefined
    const out = await this.db.transaction(async (tx) => {
      const u = await this.repo.byId(p.workspaceId, id, tx.kysely)
      if (!u) throw notFound('No user with this id.')
      UserService.requireCovers(p, u.role as Role)
      if (role !== undefined && role !== u.role) {
        UserService.requireCovers(p, role)
        if (u.role === 'owner') await this.keepAnOwner(p.workspaceId, id, tx)
        set.role = role
      }
      await this.repo.update(id, set, tx.kysely)
      if (set.role !== undefined) {
        // A role is given to a person, who signs in again to hold it: sessions opened before end.
        await this.repo.revokeUserSessions(id, this.clock.now().toISOString(), own, tx.kysely)
      }
      return (await this.repo.byId(p.workspaceId, id, tx.kysely))!
    })
    if (set.role !== undefined) this.changes.publish({ kind: 'user', ids: [id] })
    return UserService.view(out)
  }

  async remove(p: Principal, id: string): Promise<UserView> {
    const gone = await this.db.transaction(async (tx) => {
      const u = await this.repo.byId(p.workspaceId, id, tx.kysely)
      if (!u) throw notFound('No user with this id.')
      UserService.requireCovers(p, u.role as Role)
      if (u.role === 'owner') await this.keepAnOwner(p.workspaceId, id, tx)
      await this.repo.delete(id, tx.kysely)
      return u
    })
    // Cached principals of their sessions go before this call answers.
    this.changes.publish({ kind: 'user', ids: [id] })
    return UserService.view(gone)
  }

  /** 409 when `id` is the workspace's only owner. */
  private async keepAnOwner(workspaceId: string, id: string, tx: Queryable): Promise<void> {
    const owners = await this.repo.ownersForUpdate(workspaceId, tx.kysely, tx.dialect === 'postgres')
    if (!owners.some((o) => o.id !== id)) throw new ApiError('conflict', 'This is the last owner of the workspace: make another user owner first.')
  }

  /**
   * The user of `email` an identity provider vouched for, made on their first sign-in and given
   * `role` at every one (their provider decides). A role change ends their earlier sessions; the
   * workspace's last owner stays owner whatever the provider says.
   */
  async vouched(workspaceId: string, input: { email: string; name: string | null; role: Role }): Promise<UserRow> {
    const email = input.email.trim().toLowerCase()
    if (!EMAIL.test(email) || email.length > 254) throw new ApiError('invalid_credentials', 'The identity provider gave no usable e-mail address.')
    let changed = false
    const out = await this.db.transaction(async (tx) => {
      const u = await this.repo.byEmailIn(workspaceId, email, tx.kysely)
      if (!u) {
        const row: UserRecord = {
          id: this.ids.next('user'),
          workspace_id: workspaceId,
          name: input.name?.trim().slice(0, 200) || null,
          email,
          role: input.role,
          // The provider vouches for the address.
          email_verified_at: this.clock.now().toISOString(),
          created_at: this.clock.now().toISOString(),
          password_hash: null,
          password_set_at: null,
        }
        await this.repo.insert(row, tx.kysely)
        return row
      }
      if (u.role === input.role) return u
      const owners = u.role === 'owner' ? await this.repo.ownersForUpdate(workspaceId, tx.kysely, tx.dialect === 'postgres') : []
      if (u.role === 'owner' && !owners.some((o) => o.id !== u.id)) return u
      await this.repo.update(u.id, { role: input.role }, tx.kysely)
      await this.repo.revokeUserSessions(u.id, this.clock.now().toISOString(), undefined, tx.kysely)
      changed = true
      return { ...u, role: input.role }
    })
    if (changed) this.changes.publish({ kind: 'user', ids: [out.id] })
    return out as UserRow
  }

  /** Every user of the workspace, oldest first (SCIM's listing). */
  async allOf(workspaceId: string): Promise<UserRow[]> {
    return (await this.repo.list(workspaceId, { limit: null, after: null, count: false })) as UserRow[]
  }

  /** The user of `email` in the workspace, if there is one. */
  byEmail(workspaceId: string, email: string): Promise<UserRow | undefined> {
    return this.repo.byEmailIn(workspaceId, email.trim().toLowerCase()) as Promise<UserRow | undefined>
  }

  /** Renames a user for their identity provider (SCIM). */
  async rename(workspaceId: string, id: string, name: string | null): Promise<void> {
    const u = await this.repo.byId(workspaceId, id)
    if (!u) throw notFound('No user with this id.')
    await this.repo.update(id, { name: name?.trim().slice(0, 200) || null })
  }

  /** Ends every session of the user at once (deactivated by their provider): cached principals go before this answers. */
  async endSessions(workspaceId: string, id: string): Promise<number> {
    const u = await this.repo.byId(workspaceId, id)
    if (!u) return 0
    const n = await this.repo.revokeUserSessions(id, this.clock.now().toISOString())
    this.changes.publish({ kind: 'user', ids: [id] })
    return n
  }

  /** The user was activated again (SCIM): credentials of theirs refused while they were not are looked up again on every instance. */
  reactivated(id: string): void {
    this.changes.publish({ kind: 'user', ids: [id], reactivated: true })
  }

  /** Removes a user for their identity provider (SCIM's DELETE); the workspace's last owner stays (409). */
  async removeVouched(workspaceId: string, id: string): Promise<boolean> {
    const gone = await this.db.transaction(async (tx) => {
      const u = await this.repo.byId(workspaceId, id, tx.kysely)
      if (!u) return false
      if (u.role === 'owner') await this.keepAnOwner(workspaceId, id, tx)
      await this.repo.delete(id, tx.kysely)
      return true
    })
    if (gone) this.changes.publish({ kind: 'user', ids: [id] })
    return gone
  }

  get(workspaceId: string, id: string): Promise<UserRow | undefined> {
    return this.repo.byId(workspaceId, id) as Promise<UserRow | undefined>
  }

  owners(workspaceId: string): Promise<UserRow[]> {
    return this.repo.owners(workspaceId) as Promise<UserRow[]>
  }

  /** Opens a session and returns its token (shown once; only its hash is kept). */
  async createSession(user: UserRow): Promise<{ token: string; expiresAt: string }> {
    const token = newSessionToken(this.random)
    const now = this.clock.now()
    const expiresAt = new Date(now.getTime() + this.sessionTtlHours * 3600_000).toISOString()
    await this.repo.insertSession({
      id: this.ids.next('session'),
      workspace_id: user.workspace_id,
      user_id: user.id,
      lookup: sessionLookup(token),
      secret_hash: hashSecret(token),
      created_at: now.toISOString(),
      expires_at: expiresAt,
      revoked_at: null,
    })
    return { token, expiresAt }
  }

  /** The id of the session of `token`, if there is one. */
  private async sessionOf(token: string): Promise<string | undefined> {
    return (await this.repo.sessionsByLookup(sessionLookup(token))).find((r) => secretMatches(token, r.secret_hash))?.id
  }

  /** The principal behind a session token, or null when it is unknown, revoked or expired (or its user is gone). */
  /** The cached principal of a presented session token, or undefined without a lookup. */
  cachedPrincipal(token: string): Principal | undefined {
    return this.principals.get(`ust:${hashSecret(token)}`)?.principal
  }

  async authenticate(token: string): Promise<Principal | null> {
    const cached = this.cachedPrincipal(token)
    if (cached) return cached
    const cacheKey = `ust:${hashSecret(token)}`
    // Concurrent requests of the token share one lookup (PrincipalCache.shared).
    return this.principals.shared(cacheKey, async (gen) => {
      const rows = await this.repo.sessionsByLookup(sessionLookup(token))
      const hit = rows.find((r) => secretMatches(token, r.secret_hash))
      if (!hit || hit.revoked_at || hit.expires_at <= this.clock.now().toISOString()) return null
      const user = await this.get(hit.workspace_id, hit.user_id)
      if (!user) return null
      const principal = freezePrincipal({
        actor: { kind: 'user', id: user.id, name: user.name, email: user.email, nodeId: null },
        workspaceId: user.workspace_id,
        grant: ROLE_PERMISSIONS[user.role] ?? [],
        nodeId: null,
      })
      this.principals.set(gen, cacheKey, principal, [userTag(user.id)], Date.parse(hit.expires_at))
      return principal
    })
  }
}
