// Console sign-in: invite links, passwords, sign-in and sign-out. A session is the same
// `ust_…` session token the API has always accepted as a bearer; the console carries it in
// an HttpOnly cookie instead (sessionRoutes.ts), and cookie-carried writes need the
// session's CSRF token (csrfFor) in a header (authentication.ts).
//
// Invites: `inv_…` tokens, one use, 7 days, stored as a hash; a new invite ends the user's
// earlier unused ones. Accepting one sets the password, ends every other session of the
// user (a stolen one too) and signs the user in; an invite to a user who has a password
// resets it (how an owner helps someone who forgot theirs).
// Sign-in: by address and password. An address may have users in several workspaces, each
// with its own password, and the admin of any of them may set that workspace's one: so a
// password is only ever checked against each account's own hash, and the answer never
// depends on whether it also fits another account. Without a workspace id the sign-in goes
// to the account the password fits; when it fits several, to the one whose password was set
// last: who just set a password in their workspace B and signs in with it lands in B,
// whether or not the password is also A's. `workspaceId` names the one account to check
// (the way to reach an older account sharing the password). Attempts are counted before
// the check (SignInLimits.ts); a browser holding the address's device cookie waits in
// scrypt's known lane, any other in the strangers' (passwords.ts).
import { hash } from 'node:crypto'
import type { Clock, IdGenerator, RandomSource } from '../../platform/clock.js'
import type { Database } from '../../platform/db/Database.js'
import { ApiError, validation } from '../../platform/errors.js'
import { hashSecret, randomToken, secretMatches } from '../../platform/secrets.js'
import type { Mailer } from '../mail/index.js'
import type { AuditTrail } from '../audit/index.js'
import { Listeners } from '../../platform/hooks.js'
import type { CredentialChanges } from './CredentialChanges.js'
import { hashPassword, passwordProblem, SCRYPT_LOG_N, ScryptBusy, verifyPassword } from './passwords.js'
import type { SignInLimits, SignInCount } from './SignInLimits.js'
import { UserRepository, type UserRecord } from './UserRepository.js'
import type { UserRow, UserService } from './UserService.js'

export const INVITE_TTL_MS = 7 * 86_400_000
export const DEVICE_TTL_MS = 90 * 86_400_000
/** Expired sessions are kept this long (who signed in when), then purged. */
const EXPIRED_SESSION_RETENTION_MS = 30 * 86_400_000

const INVITE_PATTERN = /^inv_[A-Za-z0-9]{40}$/
const DEVICE_PATTERN = /^dev_[A-Za-z0-9]{40}$/
const EMAIL_MAX = 254

/** The CSRF token of a session: derived from its token, so nothing more is stored and only a holder of the session can know it. */
export function csrfFor(sessionToken: string): string {
  return hash('sha256', `csrf:${sessionToken}`, 'base64url')
}

/**
 * Whether a user may sign in with a password (a workspace that signs in through its identity
 * provider keeps passwords for its owners, or for nobody): false refuses. Other domains add
 * theirs to the `passwordRules` hook.
 */
export type PasswordRule = (user: { id: string; workspace_id: string; role: string }) => boolean | Promise<boolean>

/**
 * Whether a domain deactivated the user (SCIM's `active: false`): such a user has no way in,
 * neither an invite link nor the API keys they made. Other domains add theirs to the
 * `deactivations` hook.
 */
export type Deactivation = (userId: string) => boolean | Promise<boolean>

export interface SignedIn {
  user: UserRow
  workspace: { id: string; name: string }
  session: { token: string; expiresAt: string }
  /** A new device cookie for this browser (absent when it presented a valid one). */
  device?: { token: string; expiresAt: string }
}

/** Whether an invite's mail left: `sent` through the mail server, `failed` (its error), `unsent` (no mail server: kept in the outbox). */
export interface InviteMail {
  state: 'sent' | 'failed' | 'unsent'
  error: string | null
}

export class SignInService {
  private readonly repo: UserRepository

  constructor(
    db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly random: RandomSource | undefined,
    private readonly users: Pick<UserService, 'createSession' | 'get'>,
    private readonly limits: SignInLimits,
    private readonly mail: Pick<Mailer, 'send'> | null,
    /** Where the console is reached (SVC_PUBLIC_URL); null: links are paths. */
    private readonly publicUrl: string | null,
    private readonly changes: CredentialChanges,
    /** scrypt's work factor for new passwords, log2 N (SVC_PASSWORD_SCRYPT_LOG_N). */
    private readonly scryptLogN = SCRYPT_LOG_N,
    /** Where sign-ins and refused sign-ins are recorded (the audit log); null: not recorded (the CLI). */
    private readonly audit: Pick<AuditTrail, 'recordSignIn'> | null = null,
    private readonly passwordRules: Listeners<PasswordRule> = new Listeners(),
    private readonly deactivations: Listeners<Deactivation> = new Listeners(),
  ) {
    this.repo = new UserRepository(db.kysely)
  }

  /** The console's address of a path (`/console/…`). */
  consoleUrl(path: string): string {
    return `${this.publicUrl ?? ''}${path}`
  }

  /** A new invite link for `user` (their earlier unused links end); mailed to them when `mail` is set. */
  async invite(
    user: Pick<UserRecord, 'id' | 'workspace_id' | 'email' | 'name'>,
    opts: { workspaceName?: string; invitedBy?: string | null } = {},
  ): Promise<{ inviteUrl: string; expiresAt: string; mail: InviteMail }> {
    const token = `inv_${randomToken(40, this.random)}`
    const now = this.clock.now()
    const expiresAt = new Date(now.getTime() + INVITE_TTL_MS).toISOString()
    await this.repo.closeInvites(user.id, now.toISOString())
    await this.repo.insertInvite({
      id: this.ids.next('invite'),
      workspace_id: user.workspace_id,
      user_id: user.id,
      lookup: token.slice(0, 12),
      secret_hash: hashSecret(token),
      created_at: now.toISOString(),
      expires_at: expiresAt,
      used_at: null,
    })
    const inviteUrl = this.consoleUrl(`/console/welcome#token=${token}`)
    if (!this.mail) return { inviteUrl, expiresAt, mail: { state: 'unsent', error: null } }
    const sent = await this.mail.send({
      workspaceId: user.workspace_id,
      to: [user.email],
      subject: `You are invited to ${opts.workspaceName ?? 'a workspace'} on the signage console`,
      text: [
        `Hello${user.name ? ` ${user.name}` : ''},`,
        '',
        `${opts.invitedBy ? `${opts.invitedBy} invited you` : 'You are invited'} to ${opts.workspaceName ?? 'a workspace'} on the signage console.`,
        'Open this link to set your password and sign in (it works once, for 7 days):',
        '',
        inviteUrl,
      ].join('\n'),
    })
    // Without a mail server the message stays in the outbox: it has not left.
    const mail: InviteMail = sent.sent_at
      ? { state: 'sent', error: null }
      : sent.error
        ? { state: 'failed', error: sent.error }
        : { state: 'unsent', error: null }
    return { inviteUrl, expiresAt, mail }
  }

  /** Sets the password of an invite's user, uses the invite up and signs them in. */
  async acceptInvite(input: { token: string; password: string }, at: { ip: string; requestId: string } | null = null): Promise<SignedIn> {
    const problem = passwordProblem(input.password)
    if (problem) throw validation(problem)
    const refused = new ApiError('not_found', 'This invite link is unknown, used or expired: ask for a new one.')
    if (!INVITE_PATTERN.test(input.token)) throw refused
    const now = this.clock.now().toISOString()
    const invite = (await this.repo.invitesByLookup(input.token.slice(0, 12))).find((r) => secretMatches(input.token, r.secret_hash))
    if (!invite || invite.used_at || invite.expires_at <= now) throw refused
    const user = await this.users.get(invite.workspace_id, invite.user_id)
    if (!user) throw refused
    // A deactivated user stays out: the link is left as it is (their provider may activate them again).
    for (const deactivated of this.deactivations.all())
      if (await deactivated(user.id))
        throw new ApiError('forbidden', "This user was deactivated by the identity provider's provisioning: ask an administrator.")
    const passwordHash = await hashPassword(input.password, this.random, this.scryptLogN, 'known')
    // One use: the invite is closed in the same statement that finds it open.
    if ((await this.repo.closeInvites(user.id, now)) === 0) throw refused
    await this.repo.setPassword(user.id, passwordHash, now)
    // A new password ends every session opened before it; their cached principals go on every instance.
    await this.repo.revokeUserSessions(user.id, now)
    this.changes.publish({ kind: 'user', ids: [user.id] })
    const ws = (await this.repo.byEmail(user.email)).find((u) => u.id === user.id)
    const opened = await this.open(user, { id: user.workspace_id, name: ws?.workspace_name ?? '' }, undefined)
    await this.audit?.recordSignIn({
      workspaceId: user.workspace_id,
      userId: user.id,
      name: user.email,
      via: 'console',
      action: 'invite.accept',
      outcome: 'success',
      requestId: at?.requestId ?? null,
      ip: at?.ip ?? null,
    })
    return opened
  }

  /** Signs in by address and password from `ip`; `deviceToken` is the browser's device cookie, if any. */
  async signIn(
    input: { email: string; password: string; workspaceId?: string },
    ip: string,
    deviceToken: string | undefined,
    requestId: string | null = null,
  ): Promise<SignedIn> {
    const email = input.email.trim().toLowerCase()
    if (!email || email.length > EMAIL_MAX) throw validation('email is required.')
    if (!input.password) throw validation('password is required.')
    const candidates = (await this.repo.byEmail(email)).filter((u) => !input.workspaceId || u.workspace_id === input.workspaceId)
    // A device cookie counts only for the account it was earned on, and only when that is the one account checked:
    // a cookie earned on another workspace's account of the address (whose password its admin sets) helps with no other.
    const device = candidates.length === 1 ? await this.knownDevice(deviceToken, email, candidates[0]!.id) : null
    const count: SignInCount = device ? { kind: 'device', id: device } : { kind: 'browser', email, ip }
    // Counted before the password is checked, so attempts sent at once cannot all be checked.
    const attempt = await this.limits.begin(count)
    // A refused attempt is recorded in the workspace of every account the address names (the cloud's own log when none).
    const refused = async (reason: string) => {
      if (!this.audit) return
      for (const c of candidates.length ? candidates : [null])
        await this.audit.recordSignIn({
          workspaceId: c?.workspace_id ?? null,
          userId: c?.id ?? null,
          name: email,
          via: 'console',
          outcome: 'denied',
          requestId,
          ip,
          reason,
        })
    }
    if (attempt.heldFor > 0) await refused('rate_limited')
    if (attempt.heldFor > 0)
      throw new ApiError('rate_limited', `Too many failed sign-ins for this address; retry after ${attempt.heldFor} s.`, {
        extra: { retryAfterSeconds: attempt.heldFor },
        headers: { 'retry-after': String(attempt.heldFor) },
      })
    let fits: Awaited<ReturnType<UserRepository['byEmail']>>
    try {
      // Each account is checked against its own hash (one dummy when there is none), every one of them, so timing tells nothing.
      fits = []
      for (const u of candidates.length ? candidates : [null])
        if ((await verifyPassword(input.password, u?.password_hash ?? null, this.scryptLogN, device ? 'known' : 'stranger')) && u) fits.push(u)
      // An account whose workspace signs in through its provider is checked all the same (timing), but never fits.
      const allowed: typeof fits = []
      for (const u of fits) if (await this.passwordAllowed(u)) allowed.push(u)
      fits = allowed
    } catch (e) {
      // Refused by the password work queue: nothing was learnt, so nothing is counted.
      if (e instanceof ScryptBusy) await attempt.takeBack()
      throw e
    }
    if (!fits.length) {
      await refused('invalid_credentials')
      throw new ApiError('invalid_credentials', 'The email or password is wrong.')
    }
    await attempt.takeBack()
    // The password set last: what a sign-in to that account alone would answer, whatever else fits.
    const u = fits.reduce((a, b) => (`${b.password_set_at ?? ''}|${b.id}` > `${a.password_set_at ?? ''}|${a.id}` ? b : a))
    const opened = await this.open(u as UserRow, { id: u.workspace_id, name: u.workspace_name }, device ? deviceToken : undefined)
    await this.audit?.recordSignIn({ workspaceId: u.workspace_id, userId: u.id, name: email, via: 'console', outcome: 'success', requestId, ip })
    return opened
  }

  /** Opens a session for a user an identity provider vouched for (no device cookie: its failed sign-ins are the provider's). */
  signInVouched(user: UserRow, workspace: { id: string; name: string }): Promise<SignedIn> {
    return this.open(user, workspace, 'vouched')
  }

  private async passwordAllowed(u: { id: string; workspace_id: string; role: string }): Promise<boolean> {
    for (const rule of this.passwordRules.all()) if (!(await rule(u))) return false
    return true
  }

  /** Ends the session of `token` (sign-out); its cached principal goes with the credential change. */
  async signOut(token: string): Promise<void> {
    const hit = (await this.repo.sessionsByLookup(token.slice(0, 12))).find((r) => secretMatches(token, r.secret_hash))
    if (!hit) return
    await this.repo.revokeSession(hit.id, this.clock.now().toISOString())
    // Cached principals of the user's sessions go; the others authenticate again from the database.
    this.changes.publish({ kind: 'user', ids: [hit.user_id] })
  }

  /** When the session of `token` ends (null: no such session). */
  async expiresAt(token: string): Promise<string | null> {
    const hit = (await this.repo.sessionsByLookup(token.slice(0, 12))).find((r) => secretMatches(token, r.secret_hash))
    return hit?.expires_at ?? null
  }

  /** Drops expired invites and device cookies, and sessions long expired (the housekeeper). */
  purgeExpired(): Promise<number> {
    const now = this.clock.now()
    return this.repo.purgeExpired(now.toISOString(), new Date(now.getTime() - EXPIRED_SESSION_RETENTION_MS).toISOString())
  }

  /** The device id behind a device cookie earned on `userId`'s account (of `email`), or null. */
  private async knownDevice(token: string | undefined, email: string, userId: string): Promise<string | null> {
    if (!token || !DEVICE_PATTERN.test(token)) return null
    const now = this.clock.now().toISOString()
    const hit = (await this.repo.devicesByLookup(token.slice(0, 12))).find((r) => secretMatches(token, r.secret_hash))
    return hit && hit.email === email && hit.user_id === userId && hit.expires_at > now ? hit.id : null
  }

  private async open(user: UserRow, workspace: { id: string; name: string }, keptDevice: string | undefined): Promise<SignedIn> {
    const session = await this.users.createSession(user)
    const out: SignedIn = { user, workspace, session }
    if (!keptDevice) {
      const token = `dev_${randomToken(40, this.random)}`
      const now = this.clock.now()
      const expiresAt = new Date(now.getTime() + DEVICE_TTL_MS).toISOString()
      await this.repo.insertDevice({
        id: this.ids.next('signInDevice'),
        email: user.email,
        user_id: user.id,
        lookup: token.slice(0, 12),
        secret_hash: hashSecret(token),
        created_at: now.toISOString(),
        expires_at: expiresAt,
      })
      out.device = { token, expiresAt }
    }
    return out
  }
}
