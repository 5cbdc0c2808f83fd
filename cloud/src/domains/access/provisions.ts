// What the access domain provides to the other modules, by name and type: merged into
// `DomainProvisions` (platform/provisions.ts) as its tables are into the database's type.
import type { Hook } from '../../platform/hooks.js'
import type { ApiKeyService, CredentialChanges, Deactivation, OAuthService, PasswordRule, SignInService, UserService } from './index.js'

declare module '../../platform/provisions.js' {
  interface DomainProvisions {
    /** Changes to credentials and workspaces that cached copies must drop. */
    credentialChanges: CredentialChanges
    apiKeys: ApiKeyService
    users: UserService
    /** Console sign-in: invite links, passwords, sessions opened and ended. */
    signIns: SignInService
    /** OAuth client credentials: access tokens that act as their API key. */
    oauth: OAuthService
    /** Who may sign in with a password (single sign-on keeps it for owners, or for nobody). */
    passwordRules: Hook<PasswordRule>
    /** Whether a user was deactivated (SCIM): no invite accepted, the API keys they made refused. */
    deactivations: Hook<Deactivation>
  }
}
