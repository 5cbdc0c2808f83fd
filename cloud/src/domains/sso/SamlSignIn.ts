// SAML 2.0 sign-in, with @node-saml/node-saml as the service provider: SP-initiated, the
// HTTP-Redirect binding out (an AuthnRequest) and the HTTP-POST binding back to the ACS.
// What an answer must be to sign someone in:
// - its assertion signed by one of the provider's configured certificates (node-saml checks the
//   signature and takes only what it covers; an unsigned assertion is refused);
// - addressed to this workspace: the audience is the workspace's SP entity ID, the bearer
//   subject confirmation's Recipient the workspace's ACS URL, the Issuer the provider's
//   entityID when it is known;
// - in its time window on the cloud's clock (NotBefore / NotOnOrAfter, 60 s of skew);
// - the answer to an AuthnRequest of this cloud that is still open (InResponseTo): the request
//   is taken once, after the signature holds, so a replayed answer, an unsolicited one
//   (IdP-initiated) or one to an expired request is refused;
// - posted by the browser that started the sign-in: /v1/sso/start sets the request's ID in a
//   cookie (SAML_COOKIE), and the answer's InResponseTo must be it, so an answer the attacker
//   got for their own account cannot be posted from someone else's browser (login CSRF), as
//   the OIDC state cookie does for OIDC.
// The e-mail is the `email` attribute (or Entra's emailaddress claim, or an e-mail NameID); it
// must be of a domain the workspace claims. The role follows the role attribute at every sign-in.
import { X509Certificate } from 'node:crypto'
import type { CacheProvider, Profile, ValidateInResponseTo } from '@node-saml/node-saml'
import type { Clock, IdGenerator } from '../../platform/clock.js'
import type { Database } from '../../platform/db/Database.js'
import { ApiError } from '../../platform/errors.js'
import type { SignedIn, SignInService, UserService } from '../access/index.js'
import type { WorkspaceService } from '../account/index.js'
import { FLOW_TTL_MS, type SsoSignInEvent } from './OidcSignIn.js'
import { SsoRepository } from './SsoRepository.js'
import type { WorkspaceSaml } from './workspaceSaml.js'
import { mappedRole, type SamlProvider, type SsoService } from './SsoService.js'

/** The cookie that binds a SAML sign-in to the browser that started it: the AuthnRequest's ID. */
export const SAML_COOKIE = 'svc_sso_saml'

/** Clock skew allowed on the assertion's time window. */
export const SAML_CLOCK_SKEW_MS = 60_000

const EMAIL_ATTRIBUTES = [
  'email',
  'mail',
  'emailAddress',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
  'urn:oid:0.9.2342.19200300.100.1.3',
]
const NAME_ATTRIBUTES = ['name', 'displayName', 'http://schemas.microsoft.com/identity/claims/displayname', 'urn:oid:2.16.840.1.113730.3.1.241']
const GIVEN = ['firstName', 'givenName', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname']
const FAMILY = ['lastName', 'surname', 'sn', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname']

const refused = (message: string) => new ApiError('invalid_credentials', message)

/** node-saml and what builds on it load with the first SAML request, not with the cloud. */
let samlModule: Promise<typeof import('./workspaceSaml.js')> | null = null

export class SamlSignIn {
  private readonly repo: SsoRepository

  constructor(
    db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly sso: SsoService,
    private readonly users: Pick<UserService, 'vouched' | 'byEmail'>,
    private readonly signIns: Pick<SignInService, 'signInVouched'>,
    private readonly workspaces: Pick<WorkspaceService, 'require'>,
    private readonly told: (e: SsoSignInEvent) => Promise<void>,
  ) {
    this.repo = new SsoRepository(db.kysely)
  }

  private async saml(p: SamlProvider, origin: string, bound?: string, made?: (id: string) => void): Promise<WorkspaceSaml> {
    const { WorkspaceSaml } = await (samlModule ??= import('./workspaceSaml.js'))
    const urls = this.sso.samlUrls(p.workspaceId, origin)
    const cache: CacheProvider = {
      saveAsync: async (key, value) => {
        const now = this.clock.now()
        await this.repo.insertSamlRequest({
          id: key,
          workspace_id: p.workspaceId,
          created_at: now.toISOString(),
          expires_at: new Date(now.getTime() + FLOW_TTL_MS).toISOString(),
        })
        return { value, createdAt: now.getTime() }
      },
      // Asked after processValidlySignedAssertionAsync took the request: it was open then (its
      // expiry is checked on the cloud's clock there), so node-saml's own wall-clock check passes.
      getAsync: async (key) => ((await this.repo.samlRequestKnown(key)) ? new Date().toISOString() : null),
      removeAsync: async () => null,
    }
    return new WorkspaceSaml(
      {
        callbackUrl: urls.acsUrl,
        entryPoint: p.entryPoint,
        issuer: urls.spEntityId,
        audience: urls.spEntityId,
        idpCert: p.idpCertificates,
        wantAssertionsSigned: true,
        wantAuthnResponseSigned: false,
        acceptedClockSkewMs: SAML_CLOCK_SKEW_MS,
        // node-saml's ValidateInResponseTo.always (the enum's value loads with node-saml).
        validateInResponseTo: 'always' as ValidateInResponseTo,
        requestIdExpirationPeriodMs: FLOW_TTL_MS,
        cacheProvider: cache,
        identifierFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
        disableRequestedAuthnContext: true,
        generateUniqueId: () => {
          const id = `_${this.ids.next('samlRequest')}`
          made?.(id)
          return id
        },
      },
      this.clock,
      urls.acsUrl,
      p.idpIssuer,
      {
        known: (id) => this.repo.samlRequestKnown(id),
        take: (id) => this.repo.takeSamlRequest(id, p.workspaceId, this.clock.now().toISOString()),
      },
      bound,
    )
  }

  /** The console's "test connection" for a SAML provider: its certificates still valid on the cloud's clock. */
  test(p: SamlProvider): { issuer: string; authorizationEndpoint: string; keys: number } {
    const now = this.clock.now().getTime()
    const valid = p.idpCertificates.filter((pem) => {
      const c = new X509Certificate(pem)
      return new Date(c.validFrom).getTime() <= now && now < new Date(c.validTo).getTime()
    })
    if (!valid.length)
      throw new ApiError('validation_error', "Every signing certificate of the provider is expired (or not yet valid): upload the provider's current one.")
    return { issuer: p.idpIssuer ?? p.entryPoint, authorizationEndpoint: p.entryPoint, keys: valid.length }
  }

  /** The workspace's service-provider metadata (XML): entity ID, ACS, signed assertions wanted. */
  async metadata(workspaceId: string, origin: string): Promise<string> {
    const p = await this.sso.samlProvider(workspaceId)
    if (!p) throw new ApiError('not_found', 'This workspace signs in through no SAML provider.')
    return (await this.saml(p, origin)).generateServiceProviderMetadata(null, null)
  }

  /** The provider's sign-in URL carrying a new AuthnRequest (10 minutes, one answer) for `workspaceId`, and its ID for the browser's cookie. */
  async start(workspaceId: string, email: string, origin: string): Promise<{ url: string; requestId: string }> {
    const p = await this.sso.samlProvider(workspaceId)
    if (!p) throw new ApiError('not_found', 'No workspace signs in this e-mail domain through single sign-on.')
    let requestId: string | null = null
    const url = new URL(
      await (
        await this.saml(p, origin, undefined, (id) => {
          requestId = id
        })
      ).getAuthorizeUrlAsync('', undefined, {}),
    )
    if (requestId === null) throw new Error('node-saml made no AuthnRequest ID')
    url.searchParams.set('login_hint', email)
    return { url: url.href, requestId }
  }

  /** Checks the provider's answer posted to the workspace's ACS by the browser holding `boundCookie` (SAML_COOKIE), and signs the user in. */
  async acs(
    workspaceId: string,
    samlResponse: string,
    boundCookie: string | undefined,
    origin: string,
    ip: string,
    requestId: string | null = null,
  ): Promise<SignedIn> {
    let email: string | null = null
    const known = await this.sso.samlProvider(workspaceId)
    try {
      if (!known) throw refused('This workspace signs in through no SAML provider.')
      let profile: Profile | null
      try {
        profile = (await (await this.saml(known, origin, boundCookie)).validatePostResponseAsync({ SAMLResponse: samlResponse })).profile
      } catch (e) {
        throw refused(`The SAML response was refused: ${(e as Error).message}.`)
      }
      if (!profile) throw refused('The SAML response carries no assertion.')
      email = emailOf(profile)
      if (!email) throw refused('The assertion carries no e-mail address: send an `email` attribute or an e-mail NameID.')
      if ((await this.sso.workspaceOfEmail(email)) !== workspaceId) throw refused(`${email} is not of an e-mail domain this workspace claims.`)
      if (await this.sso.deactivatedEmail(workspaceId, email, this.users)) throw refused(`${email} was deactivated by the identity provider's provisioning.`)
      const role = mappedRole(known, known.roleClaim ? attribute(profile, known.roleClaim) : undefined)
      const user = await this.users.vouched(workspaceId, { email, name: nameOf(profile), role })
      const ws = await this.workspaces.require(workspaceId)
      const out = await this.signIns.signInVouched(user, { id: ws.id, name: ws.name })
      await this.told({ workspaceId, protocol: 'saml', outcome: 'success', userId: user.id, email, reason: null, ip, requestId })
      return out
    } catch (e) {
      await this.told({
        workspaceId: known ? workspaceId : null,
        protocol: 'saml',
        outcome: 'failure',
        userId: null,
        email,
        reason: (e as Error).message,
        ip,
        requestId,
      })
      throw e
    }
  }
}

function attribute(p: Profile, name: string): unknown {
  const attrs = (p.attributes ?? {}) as Record<string, unknown>
  return Object.hasOwn(attrs, name) ? attrs[name] : (p as Record<string, unknown>)[name]
}

function first(p: Profile, names: string[]): string | null {
  for (const n of names) {
    const v = attribute(p, n)
    const s = Array.isArray(v) ? v[0] : v
    if (typeof s === 'string' && s.trim()) return s.trim()
  }
  return null
}

function emailOf(p: Profile): string | null {
  const v = first(p, EMAIL_ATTRIBUTES) ?? (/^[^\s@]+@[^\s@]+$/.test(p.nameID ?? '') ? p.nameID : null)
  return v ? v.toLowerCase() : null
}

function nameOf(p: Profile): string | null {
  const n = first(p, NAME_ATTRIBUTES)
  if (n) return n
  const parts = [first(p, GIVEN), first(p, FAMILY)].filter(Boolean)
  return parts.length ? parts.join(' ') : null
}
