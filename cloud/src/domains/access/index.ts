// What other domains use of access: its public surface. The module that wires it is in module.ts.
export { LocalCredentialChanges, type CredentialChanges } from './CredentialChanges.js'
export type { SignInService } from './SignInService.js'
export type { UserService } from './UserService.js'
export type { ApiKeyService } from './ApiKeyService.js'
export type { OAuthService } from './OAuthService.js'
export { bearerOrCookieToken, principalOfToken, type TokenLookups } from './presentedCredential.js'
