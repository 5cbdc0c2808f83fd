// A workspace's identity provider: one per workspace (OIDC), the e-mail domains it claims
// (an address of a claimed domain signs in there), the role its claim maps to at every
// sign-in, and who may still sign in with a password (`passwordSignIn`: owners by default,
// the way in when the provider is down). The client secret is write-only: sealed in the
// database (secretBox.ts) and never answered; a PUT without one keeps the stored one.
import { Type, type Static } from '@sinclair/typebox'
import { ROLE_PERMISSIONS, ROLES, missingFrom, type PermissionGrant, type Role } from '@svc/shared'
import type { Clock } from '../../platform/clock.js'
import type { Database } from '../../platform/db/Database.js'
import { isUniqueViolation } from '../../platform/db/Database.js'
import { ApiError, notFound, validation } from '../../platform/errors.js'
import type { Principal } from '../../platform/http/Principal.js'
import { Nullable, StringEnum, Timestamp } from '../../platform/contract.js'
import type { OutboundGuard } from '../../platform/net/OutboundGuard.js'
import type { SecretBox } from './secretBox.js'
import { SsoRepository, type ProviderRecord } from './SsoRepository.js'

export const PASSWORD_SIGN_IN = ['owners', 'all', 'none'] as const
export type PasswordSignIn = (typeof PASSWORD_SIGN_IN)[number]

const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/

/** What PUT /v1/sso takes (OIDC). */
export const SsoSettingsBody = Type.Object(
  {
    protocol: Type.Literal('oidc'),
    issuer: Type.String({
      minLength: 1,
      maxLength: 2000,
      description: "The provider's issuer URL (https); its discovery document is read from `<issuer>/.well-known/openid-configuration`.",
    }),
    clientId: Type.String({ minLength: 1, maxLength: 500 }),
    clientSecret: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2000,
        description: 'Write-only: stored sealed, never answered. Required the first time; left out, the stored one is kept.',
      }),
    ),
    emailDomains: Type.Array(Type.String({ minLength: 3, maxLength: 253 }), {
      minItems: 1,
      maxItems: 50,
      description: 'E-mail domains whose addresses sign in through this provider; a domain belongs to one workspace.',
    }),
    defaultRole: Type.Optional(StringEnum(ROLES, { description: 'Role of a user whose claim maps to none (default `viewer`).' })),
    roleClaim: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          maxLength: 200,
          description: 'The ID-token claim the role is read from (a string or an array of strings, such as `groups`).',
        }),
      ),
    ),
    roleMap: Type.Optional(
      Type.Record(Type.String({ minLength: 1, maxLength: 200 }), StringEnum(ROLES), {
        maxProperties: 100,
        description: 'Claim value → role; of several mapped values the highest role wins.',
      }),
    ),
    passwordSignIn: Type.Optional(StringEnum(PASSWORD_SIGN_IN, { description: 'Who may still sign in with a password: `owners` (default), `all` or `none`.' })),
  },
  { additionalProperties: false },
)
export type SsoSettingsInput = Static<typeof SsoSettingsBody>

export const SsoSettings = Type.Object({
  protocol: Type.Literal('oidc'),
  issuer: Type.String(),
  clientId: Type.String(),
  clientSecretSet: Type.Boolean({ description: 'A client secret is stored (it is never answered).' }),
  emailDomains: Type.Array(Type.String()),
  defaultRole: StringEnum(ROLES),
  roleClaim: Nullable(Type.String()),
  roleMap: Type.Record(Type.String(), StringEnum(ROLES)),
  passwordSignIn: StringEnum(PASSWORD_SIGN_IN),
  redirectUri: Type.String({ description: 'The redirect (callback) URI to register at the provider.' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
})
export type SsoSettingsView = Static<typeof SsoSettings>

/** The stored settings (the `settings` column). */
interface Stored {
  issuer: string
  clientId: string
  defaultRole: Role
  roleClaim: string | null
  roleMap: Record<string, Role>
}

/** A workspace's provider as sign-in uses it. */
export interface Provider extends Stored {
  workspaceId: string
  protocol: 'oidc'
  clientSecret: string | null
  passwordSignIn: PasswordSignIn
  updatedAt: string
}

/** Highest first. */
const RANK: Record<Role, number> = { owner: 3, admin: 2, editor: 1, viewer: 0 }

/** The role `claim` maps to through `roleMap` (the highest of several), else `defaultRole`. */
export function mappedRole(p: Pick<Stored, 'defaultRole' | 'roleMap'>, claim: unknown): Role {
  const values = Array.isArray(claim) ? claim : claim === undefined || claim === null ? [] : [claim]
  let best: Role | null = null
  for (const v of values) {
    if (typeof v !== 'string' || !Object.hasOwn(p.roleMap, v)) continue
    const r = p.roleMap[v]!
    if (best === null || RANK[r] > RANK[best]) best = r
  }
  return best ?? p.defaultRole
}

export class SsoService {
  private readonly repo: SsoRepository

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly outbound: Pick<OutboundGuard, 'check'>,
    private readonly box: () => Promise<SecretBox>,
    /** The callback URI of a request without SVC_PUBLIC_URL; with it, `<publicUrl>/v1/sso/oidc/callback`. */
    private readonly publicUrl: string | null,
  ) {
    this.repo = new SsoRepository(db.kysely)
  }

  redirectUri(origin: string): string {
    return `${this.publicUrl ?? origin}/v1/sso/oidc/callback`
  }

  private view(row: ProviderRecord, domains: string[], origin: string): SsoSettingsView {
    const s = JSON.parse(row.settings) as Stored
    return {
      protocol: 'oidc',
      issuer: s.issuer,
      clientId: s.clientId,
      clientSecretSet: row.client_secret !== null,
      emailDomains: domains,
      defaultRole: s.defaultRole,
      roleClaim: s.roleClaim,
      roleMap: s.roleMap,
      passwordSignIn: row.password_sign_in as PasswordSignIn,
      redirectUri: this.redirectUri(origin),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    }
  }

  async get(p: Principal, origin: string): Promise<SsoSettingsView> {
    const row = await this.repo.provider(p.workspaceId)
    if (!row) throw notFound('This workspace has no single sign-on set up.')
    return this.view(row, await this.repo.domains(p.workspaceId), origin)
  }

  async put(p: Principal, input: SsoSettingsInput, origin: string): Promise<{ view: SsoSettingsView; created: boolean }> {
    let issuer: string
    try {
      issuer = this.outbound.check(input.issuer.trim()).href.replace(/\/$/, '')
    } catch (e) {
      throw validation(`issuer: ${(e as Error).message}.`)
    }
    const domains = [...new Set(input.emailDomains.map((d) => d.trim().toLowerCase()))]
    const bad = domains.find((d) => !DOMAIN.test(d))
    if (bad !== undefined) throw validation(`emailDomains: ${bad} is not a domain name.`)
    const defaultRole = input.defaultRole ?? 'viewer'
    const roleMap = input.roleMap ?? {}
    // Who sets up sign-in hands out the roles it maps to: it must hold every permission of each.
    for (const role of new Set<Role>([defaultRole, ...Object.values(roleMap)])) {
      const lacking = missingFrom(p.grant, ROLE_PERMISSIONS[role] as PermissionGrant)
      if (lacking.length) throw new ApiError('forbidden', `Missing permission: ${lacking[0]}`)
    }
    const secret = input.clientSecret === undefined ? undefined : (await this.box()).seal(input.clientSecret)
    const now = this.clock.now().toISOString()
    const settings: Stored = { issuer, clientId: input.clientId.trim(), defaultRole, roleClaim: input.roleClaim ?? null, roleMap }
    try {
      return await this.db.transaction(async (tx) => {
        const old = await this.repo.provider(p.workspaceId, tx.kysely)
        for (const d of domains) {
          const owner = await this.repo.domainOwner(d, tx.kysely)
          if (owner !== undefined && owner !== p.workspaceId) throw new ApiError('conflict', `The e-mail domain ${d} is claimed by another workspace.`)
        }
        const clientSecret = secret ?? old?.client_secret ?? null
        if (clientSecret === null) throw validation('clientSecret is required.')
        const row: ProviderRecord = {
          workspace_id: p.workspaceId,
          protocol: 'oidc',
          settings: JSON.stringify(settings),
          client_secret: clientSecret,
          password_sign_in: input.passwordSignIn ?? 'owners',
          created_at: old?.created_at ?? now,
          updated_at: now,
        }
        await this.repo.put(row, domains, tx.kysely)
        return { view: this.view(row, [...domains].sort(), origin), created: !old }
      })
    } catch (e) {
      if (isUniqueViolation(e)) throw new ApiError('conflict', 'An e-mail domain of this list is claimed by another workspace.')
      throw e
    }
  }

  async remove(p: Principal): Promise<void> {
    const gone = await this.db.transaction((tx) => this.repo.remove(p.workspaceId, tx.kysely))
    if (!gone) throw notFound('This workspace has no single sign-on set up.')
  }

  /** The provider of a workspace, as sign-in uses it (the client secret opened). */
  async provider(workspaceId: string): Promise<Provider | undefined> {
    const row = await this.repo.provider(workspaceId)
    if (!row) return undefined
    const s = JSON.parse(row.settings) as Stored
    const clientSecret = row.client_secret === null ? null : (await this.box()).open(row.client_secret)
    return { ...s, workspaceId, protocol: 'oidc', clientSecret, passwordSignIn: row.password_sign_in as PasswordSignIn, updatedAt: row.updated_at }
  }

  /** The workspace whose provider claims the domain of `email`, if one does. */
  async workspaceOfEmail(email: string): Promise<string | undefined> {
    const at = email.lastIndexOf('@')
    if (at < 1) return undefined
    return this.repo.domainOwner(
      email
        .slice(at + 1)
        .trim()
        .toLowerCase(),
    )
  }

  /** The password rule (access's `passwordRules`): what `passwordSignIn` of the user's workspace allows. */
  async passwordAllowed(user: { workspace_id: string; role: string }): Promise<boolean> {
    const row = await this.repo.provider(user.workspace_id)
    if (!row) return true
    const rule = row.password_sign_in as PasswordSignIn
    return rule === 'all' || (rule === 'owners' && user.role === 'owner')
  }

  purgeFlows(): Promise<number> {
    return this.repo.purgeFlows(this.clock.now().toISOString())
  }
}
