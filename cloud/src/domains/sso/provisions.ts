// What the single sign-on domain provides to the other modules, by name and type: merged into
// `DomainProvisions` (platform/provisions.ts) as its tables are into the database's type.
import type { Hook } from '../../platform/hooks.js'
import type { OidcSignIn, SamlSignIn, ScimService, SsoService, SsoSignInListener } from './index.js'

declare module '../../platform/provisions.js' {
  interface DomainProvisions {
    /** A workspace's identity provider: settings, claimed domains, role mapping, the password rule. */
    sso: SsoService
    /** Sign-in through an OIDC provider (start, callback, test connection). */
    oidcSignIn: OidcSignIn
    /** Sign-in through a SAML 2.0 provider (SP metadata, AuthnRequest, ACS). */
    samlSignIn: SamlSignIn
    /** SCIM 2.0 provisioning: the workspace's token, Users and Groups. */
    scim: ScimService
    /** Every sign-in through a provider, good or refused (the audit log records each). */
    ssoSignIns: Hook<SsoSignInListener>
  }
}
