// Workspace users and their session tokens (the second kind of bearer credential).
import { ROLES, ROLE_PERMISSIONS, type Role } from '@svc/shared'
import type { Clock, IdGenerator, RandomSource } from '../clock.js'
import type { Database } from '../db/Database.js'
import { isUniqueViolation } from '../db/Database.js'
import { ApiError, validation } from '../errors.js'
import { hashSecret, newSessionToken, secretMatches, sessionLookup } from '../auth/secrets.js'
import type { Principal } from '../auth/Principal.js'

export interface UserRow {
  id: string
  workspace_id: string
  name: string | null
  email: string
  role: Role
  email_verified_at: string | null
  created_at: string
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export class UserService {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly random: RandomSource | undefined,
    private readonly sessionTtlHours: number,
  ) {}

  async create(workspaceId: string, input: { email: string; name?: string | null; role?: string }): Promise<UserRow> {
    const email = input.email.trim().toLowerCase()
    if (!EMAIL.test(email)) throw validation('email is not an email address.')
    const role = (input.role ?? 'owner') as Role
    if (!ROLES.includes(role)) throw validation(`role must be one of ${ROLES.join(', ')}.`)
    const id = this.ids.next('user')
    try {
      await this.db.run('INSERT INTO users (id, workspace_id, name, email, role, created_at) VALUES (?, ?, ?, ?, ?, ?)', [
        id,
        workspaceId,
        input.name?.trim() || null,
        email,
        role,
        this.clock.now().toISOString(),
      ])
    } catch (e) {
      if (isUniqueViolation(e)) throw new ApiError('conflict', `A user with email ${email} already exists in this workspace.`)
      throw e
    }
    return (await this.db.get<UserRow>('SELECT * FROM users WHERE id = ?', [id]))!
  }

  get(workspaceId: string, id: string): Promise<UserRow | undefined> {
    return this.db.get<UserRow>('SELECT * FROM users WHERE id = ? AND workspace_id = ?', [id, workspaceId])
  }

  owners(workspaceId: string): Promise<UserRow[]> {
    return this.db.all<UserRow>("SELECT * FROM users WHERE workspace_id = ? AND role = 'owner' ORDER BY id", [workspaceId])
  }

  /** Opens a session and returns its token (shown once; only its hash is kept). */
  async createSession(user: UserRow): Promise<{ token: string; expiresAt: string }> {
    const token = newSessionToken(this.random)
    const now = this.clock.now()
    const expiresAt = new Date(now.getTime() + this.sessionTtlHours * 3600_000).toISOString()
    await this.db.run('INSERT INTO sessions (id, workspace_id, user_id, lookup, secret_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)', [
      this.ids.next('session'),
      user.workspace_id,
      user.id,
      sessionLookup(token),
      hashSecret(token),
      now.toISOString(),
      expiresAt,
    ])
    return { token, expiresAt }
  }

  /** The principal behind a session token, or null when it is unknown, revoked or expired. */
  async authenticate(token: string): Promise<Principal | null> {
    const rows = await this.db.all<{ secret_hash: string; expires_at: string; revoked_at: string | null; user_id: string; workspace_id: string }>(
      'SELECT secret_hash, expires_at, revoked_at, user_id, workspace_id FROM sessions WHERE lookup = ?',
      [sessionLookup(token)],
    )
    const hit = rows.find((r) => secretMatches(token, r.secret_hash))
    if (!hit || hit.revoked_at || hit.expires_at <= this.clock.now().toISOString()) return null
    const user = await this.get(hit.workspace_id, hit.user_id)
    if (!user) return null
    return {
      actor: { kind: 'user', id: user.id, name: user.name, email: user.email, nodeId: null },
      workspaceId: user.workspace_id,
      grant: ROLE_PERMISSIONS[user.role] ?? [],
      nodeId: null,
    }
  }
}
