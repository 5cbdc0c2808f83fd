// What other domains use of access: its public surface. The module that wires it is in module.ts.
export { LocalCredentialChanges, type CredentialChanges } from './CredentialChanges.js'
export type { Deactivation, PasswordRule, SignedIn, SignInService } from './SignInService.js'
export { csrfFor } from './SignInService.js'

export type { UserService } from './UserService.js'
export type { ApiKeyService } from './ApiKeyService.js'
export type { OAuthService } from './OAuthService.js'
export { bearerOrCookieToken, principalOfToken, SESSION_COOKIE, type TokenLookups } from './presentedCredential.js'
