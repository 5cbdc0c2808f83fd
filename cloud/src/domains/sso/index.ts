// What other domains use of sso: its public surface. The module that wires it is in module.ts.
export type { OidcSignIn, SsoSignInEvent, SsoSignInListener } from './OidcSignIn.js'
export type { SsoService } from './SsoService.js'
export type { SamlSignIn } from './SamlSignIn.js'
export type { ScimService } from './ScimService.js'
