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
import { certificateInfo, parseIdpMetadata, pemOf, type SamlIdp } from './samlSettings.js'
import type { UserService } from '../access/index.js'

export const PASSWORD_SIGN_IN = ['owners', 'all', 'none'] as const
export type PasswordSignIn = (typeof PASSWORD_SIGN_IN)[number]

const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/

const Common = {
  emailDomains: Type.Array(Type.String({ minLength: 3, maxLength: 253 }), {
    minItems: 1,
    maxItems: 50,
    description: 'E-mail domains whose addresses sign in through this provider; a domain belongs to one workspace.',
  }),
  defaultRole: Type.Optional(StringEnum(ROLES, { description: 'Role of a user whose claim maps to none (default `viewer`).' })),
  roleMap: Type.Optional(
    Type.Record(Type.String({ minLength: 1, maxLength: 200 }), StringEnum(ROLES), {
      maxProperties: 100,
      description: 'Claim (or attribute, or SCIM group) value → role; of several mapped values the highest role wins.',
    }),
  ),
  passwordSignIn: Type.Optional(StringEnum(PASSWORD_SIGN_IN, { description: 'Who may still sign in with a password: `owners` (default), `all` or `none`.' })),
}

/** What PUT /v1/sso takes for a SAML 2.0 provider. */
export const SamlSettingsBody = Type.Object(
  {
    protocol: Type.Literal('saml'),
    idpMetadataXml: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200_000,
        description:
          "The provider's metadata document (XML): its sign-in URL, entityID and signing certificates are read from it. Left out with entryPoint and idpCertificate, a SAML provider's stored ones are kept.",
      }),
    ),
    entryPoint: Type.Optional(
      Type.String({ minLength: 1, maxLength: 2000, description: "Without metadata: the provider's SAML sign-in URL (HTTP-Redirect binding)." }),
    ),
    idpCertificate: Type.Optional(
      Type.String({ minLength: 1, maxLength: 20_000, description: "Without metadata: the provider's signing certificate (PEM or base64)." }),
    ),
    idpIssuer: Type.Optional(
      Nullable(Type.String({ minLength: 1, maxLength: 2000, description: "Without metadata: the provider's entityID, checked as the assertions' Issuer." })),
    ),
    ...Common,
    roleAttribute: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          maxLength: 500,
          description: 'The assertion attribute the role is read from (one value or several, such as groups).',
        }),
      ),
    ),
  },
  { additionalProperties: false },
)
export type SamlSettingsInput = Static<typeof SamlSettingsBody>

/** What PUT /v1/sso takes for an OpenID Connect provider. */
export const OidcSettingsBody = Type.Object(
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
export type OidcSettingsInput = Static<typeof OidcSettingsBody>

/** What PUT /v1/sso takes: an OIDC or a SAML provider. */
export const SsoSettingsBody = Type.Union([OidcSettingsBody, SamlSettingsBody])
export type SsoSettingsInput = OidcSettingsInput | SamlSettingsInput

export const SamlSettings = Type.Object({
  protocol: Type.Literal('saml'),
  entryPoint: Type.String({ description: "The provider's SAML sign-in URL." }),
  idpIssuer: Nullable(Type.String({ description: "The provider's entityID, checked as the assertions' Issuer (null: not checked)." })),
  idpCertificates: Type.Array(Type.Object({ subject: Type.String(), notAfter: Timestamp, fingerprint256: Type.String() }), {
    description: 'The signing certificates assertions must be signed with.',
  }),
  emailDomains: Type.Array(Type.String()),
  defaultRole: StringEnum(ROLES),
  roleAttribute: Nullable(Type.String()),
  roleMap: Type.Record(Type.String(), StringEnum(ROLES)),
  passwordSignIn: StringEnum(PASSWORD_SIGN_IN),
  spEntityId: Type.String({ description: "This workspace's entity ID (the audience) to register at the provider." }),
  acsUrl: Type.String({ description: 'The Assertion Consumer Service URL (single sign-on URL, reply URL) to register at the provider.' }),
  metadataUrl: Type.String({ description: "This workspace's service-provider metadata, for providers that read it." }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
})
export type SamlSettingsView = Static<typeof SamlSettings>

export const OidcSettings = Type.Object({
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
export type OidcSettingsView = Static<typeof OidcSettings>

export const SsoSettings = Type.Union([OidcSettings, SamlSettings])
export type SsoSettingsView = OidcSettingsView | SamlSettingsView

/** The stored settings (the `settings` column) of an OIDC provider. */
interface StoredOidc {
  issuer: string
  clientId: string
  defaultRole: Role
  roleClaim: string | null
  roleMap: Record<string, Role>
}

/** The stored settings of a SAML provider (`roleClaim` is the role attribute). */
interface StoredSaml extends SamlIdp {
  defaultRole: Role
  roleClaim: string | null
  roleMap: Record<string, Role>
}

interface Common {
  workspaceId: string
  passwordSignIn: PasswordSignIn
  updatedAt: string
}

/** A workspace's OIDC provider as sign-in uses it. */
export interface Provider extends StoredOidc, Common {
  protocol: 'oidc'
  clientSecret: string | null
}

/** A workspace's SAML provider as sign-in uses it. */
export interface SamlProvider extends StoredSaml, Common {
  protocol: 'saml'
}

export type AnyProvider = Provider | SamlProvider

/** Highest first. */
const RANK: Record<Role, number> = { owner: 3, admin: 2, editor: 1, viewer: 0 }

/** The role `claim` maps to through `roleMap` (the highest of several), else `defaultRole`. */
export function mappedRole(p: Pick<StoredOidc, 'defaultRole' | 'roleMap'>, claim: unknown): Role {
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

  /** The workspace's SAML service-provider entity ID (the audience), metadata URL and ACS URL. */
  samlUrls(workspaceId: string, origin: string): { spEntityId: string; metadataUrl: string; acsUrl: string } {
    const base = this.publicUrl ?? origin
    const ws = encodeURIComponent(workspaceId)
    const metadataUrl = `${base}/v1/sso/saml/metadata?workspace=${ws}`
    return { spEntityId: metadataUrl, metadataUrl, acsUrl: `${base}/v1/sso/saml/acs?workspace=${ws}` }
  }

  private view(row: ProviderRecord, domains: string[], origin: string): SsoSettingsView {
    if (row.protocol === 'saml') {
      const s = JSON.parse(row.settings) as StoredSaml
      return {
        protocol: 'saml',
        entryPoint: s.entryPoint,
        idpIssuer: s.idpIssuer,
        idpCertificates: s.idpCertificates.map(certificateInfo),
        emailDomains: domains,
        defaultRole: s.defaultRole,
        roleAttribute: s.roleClaim,
        roleMap: s.roleMap,
        passwordSignIn: row.password_sign_in as PasswordSignIn,
        ...this.samlUrls(row.workspace_id, origin),
        createdAt: row.created_at,
        updatedAt: row.updated_at,
      }
    }
    const s = JSON.parse(row.settings) as StoredOidc
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

  /** The SAML identity provider's part of a PUT: from its metadata, or its sign-in URL and certificate. */
  private samlIdp(input: SamlSettingsInput, kept: SamlIdp | null): SamlIdp {
    let idp: SamlIdp
    if (input.idpMetadataXml === undefined && input.entryPoint === undefined && input.idpCertificate === undefined && kept) {
      // A change of the domains, roles or password rule: the stored provider stays as it is.
      return { entryPoint: kept.entryPoint, idpCertificates: kept.idpCertificates, idpIssuer: kept.idpIssuer }
    }
    if (input.idpMetadataXml !== undefined) {
      if (input.entryPoint !== undefined || input.idpCertificate !== undefined)
        throw validation('Give idpMetadataXml, or entryPoint and idpCertificate, not both.')
      idp = parseIdpMetadata(input.idpMetadataXml)
    } else {
      if (input.entryPoint === undefined || input.idpCertificate === undefined)
        throw validation('A SAML provider needs idpMetadataXml, or entryPoint and idpCertificate.')
      idp = {
        entryPoint: input.entryPoint.trim(),
        idpCertificates: [pemOf(input.idpCertificate, 'idpCertificate')],
        idpIssuer: input.idpIssuer?.trim() ?? null,
      }
    }
    try {
      idp.entryPoint = this.outbound.check(idp.entryPoint).href
    } catch (e) {
      throw validation(`entryPoint: ${(e as Error).message}.`)
    }
    return idp
  }

  async put(p: Principal, input: SsoSettingsInput, origin: string): Promise<{ view: SsoSettingsView; created: boolean }> {
    let stored: StoredOidc | StoredSaml
    const defaultRole = input.defaultRole ?? 'viewer'
    const roleMap = input.roleMap ?? {}
    if (input.protocol === 'saml') {
      // The browser is sent to the sign-in URL: it must be https and public like an issuer's.
      const kept = await this.samlProvider(p.workspaceId)
      stored = { ...this.samlIdp(input, kept ?? null), defaultRole, roleClaim: input.roleAttribute ?? null, roleMap }
    } else {
      let issuer: string
      try {
        issuer = this.outbound.check(input.issuer.trim()).href.replace(/\/$/, '')
      } catch (e) {
        throw validation(`issuer: ${(e as Error).message}.`)
      }
      stored = { issuer, clientId: input.clientId.trim(), defaultRole, roleClaim: input.roleClaim ?? null, roleMap }
    }
    const domains = [...new Set(input.emailDomains.map((d) => d.trim().toLowerCase()))]
    const bad = domains.find((d) => !DOMAIN.test(d))
    if (bad !== undefined) throw validation(`emailDomains: ${bad} is not a domain name.`)
    // Who sets up sign-in hands out the roles it maps to: it must hold every permission of each.
    for (const role of new Set<Role>([defaultRole, ...Object.values(roleMap)])) {
      const lacking = missingFrom(p.grant, ROLE_PERMISSIONS[role] as PermissionGrant)
      if (lacking.length) throw new ApiError('forbidden', `Missing permission: ${lacking[0]}`)
    }
    const secret = input.protocol === 'oidc' && input.clientSecret !== undefined ? (await this.box()).seal(input.clientSecret) : undefined
    const now = this.clock.now().toISOString()
    try {
      return await this.db.transaction(async (tx) => {
        const old = await this.repo.provider(p.workspaceId, tx.kysely)
        for (const d of domains) {
          const owner = await this.repo.domainOwner(d, tx.kysely)
          if (owner !== undefined && owner !== p.workspaceId) throw new ApiError('conflict', `The e-mail domain ${d} is claimed by another workspace.`)
        }
        let clientSecret: string | null = null
        if (input.protocol === 'oidc') {
          // A stored secret is kept only while the provider stays an OIDC one.
          clientSecret = secret ?? (old?.protocol === 'oidc' ? old.client_secret : null) ?? null
          if (clientSecret === null) throw validation('clientSecret is required.')
        }
        const row: ProviderRecord = {
          workspace_id: p.workspaceId,
          protocol: input.protocol,
          settings: JSON.stringify(stored),
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

  /** The provider of a workspace, as sign-in uses it (an OIDC client secret opened). */
  async provider(workspaceId: string): Promise<AnyProvider | undefined> {
    const row = await this.repo.provider(workspaceId)
    if (!row) return undefined
    const common = { workspaceId, passwordSignIn: row.password_sign_in as PasswordSignIn, updatedAt: row.updated_at }
    if (row.protocol === 'saml') return { ...(JSON.parse(row.settings) as StoredSaml), ...common, protocol: 'saml' }
    const s = JSON.parse(row.settings) as StoredOidc
    const clientSecret = row.client_secret === null ? null : (await this.box()).open(row.client_secret)
    return { ...s, ...common, protocol: 'oidc', clientSecret }
  }

  /** The workspace's OIDC provider, if it has one. */
  async oidcProvider(workspaceId: string): Promise<Provider | undefined> {
    const p = await this.provider(workspaceId)
    return p?.protocol === 'oidc' ? p : undefined
  }

  /** The workspace's SAML provider, if it has one. */
  async samlProvider(workspaceId: string): Promise<SamlProvider | undefined> {
    const p = await this.provider(workspaceId)
    return p?.protocol === 'saml' ? p : undefined
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

  /** The password rule (access's `passwordRules`): what `passwordSignIn` of the user's workspace allows, and never for a user SCIM deactivated. */
  async passwordAllowed(user: { id: string; workspace_id: string; role: string }): Promise<boolean> {
    if (await this.repo.deactivated(user.id)) return false
    const row = await this.repo.provider(user.workspace_id)
    if (!row) return true
    const rule = row.password_sign_in as PasswordSignIn
    return rule === 'all' || (rule === 'owners' && user.role === 'owner')
  }

  /** Whether SCIM deactivated the user (access's `deactivations`). */
  deactivated(userId: string): Promise<boolean> {
    return this.repo.deactivated(userId)
  }

  /** Whether the workspace's user of `email` was deactivated by SCIM (their provider may still vouch for them: they stay out). */
  async deactivatedEmail(workspaceId: string, email: string, users: Pick<UserService, 'byEmail'>): Promise<boolean> {
    const u = await users.byEmail(workspaceId, email)
    return !!u && (await this.repo.deactivated(u.id))
  }

  async purgeFlows(): Promise<number> {
    const now = this.clock.now().toISOString()
    return (await this.repo.purgeFlows(now)) + (await this.repo.purgeSamlRequests(now))
  }
}
