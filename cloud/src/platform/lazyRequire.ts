// npm packages the cloud needs on some paths only (Redis when instances are joined, the
// SAML library when a workspace signs in through SAML) load on first use, not with the
// cloud: every start and every CLI command would otherwise pay for them. A CommonJS
// package loads through `require`, so its first user stays synchronous.
import { createRequire } from 'node:module'

const load = createRequire(import.meta.url)

/** The package `name`, loaded by the first call (then kept). */
export function lazyRequire<T>(name: string): () => T {
  let loaded: T | undefined
  return () => (loaded ??= load(name) as T)
}
