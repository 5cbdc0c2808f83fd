// Single sign-on: a workspace's identity provider (OIDC or SAML), SCIM provisioning, its claimed e-mail domains, the
// sign-in through it, and who may still sign in with a password (access's `passwordRules`).
import { randomBytes } from 'node:crypto'
import { Listeners } from '../../platform/hooks.js'
import { domainModule } from '../../platform/provisions.js'
import { OidcSignIn, type SsoSignInListener } from './OidcSignIn.js'
import { SamlSignIn } from './SamlSignIn.js'
import { ScimService } from './ScimService.js'
import { SecretBox } from './secretBox.js'
import { SsoRepository } from './SsoRepository.js'
import { SsoService } from './SsoService.js'

export { default as ssoRoutes } from './ssoRoutes.js'
export { default as scimRoutes } from './scimRoutes.js'

export const ssoModule = domainModule({
  name: 'sso',
  needs: [
    'db',
    'clock',
    'ids',
    'random',
    'config',
    'outbound',
    'housekeeping',
    'users',
    'signIns',
    'passwordRules',
    'deactivations',
    'workspaces',
    'log',
    'audit',
  ],
  provides: ['sso', 'oidcSignIn', 'samlSignIn', 'scim', 'ssoSignIns'],
  create: ({ db, clock, ids, random, config, outbound, housekeeping, users, signIns, passwordRules, deactivations, workspaces, log, audit }) => {
    // SVC_SECRET_KEY, checked at boot; else the database's key, made by the first instance to need one.
    const configured = config.secretKey ? SecretBox.fromSetting(config.secretKey, random) : null
    let stored: Promise<SecretBox> | null = null
    const box = (): Promise<SecretBox> => {
      if (configured) return Promise.resolve(configured)
      stored ??= new SsoRepository(db.kysely)
        .key('client-secrets', (random ?? randomBytes)(32).toString('base64'))
        .then((k) => SecretBox.fromKey(Buffer.from(k, 'base64'), random))
      stored.catch(() => (stored = null))
      return stored
    }
    const sso = new SsoService(db, clock, outbound, box, config.publicUrl)
    passwordRules.add((u) => sso.passwordAllowed(u))
    // A user SCIM deactivated accepts no invite and their API keys stop.
    deactivations.add((userId) => sso.deactivated(userId))
    const ssoSignIns = new Listeners<SsoSignInListener>()
    // Every sign-in through the provider, good or refused, is in the audit log.
    ssoSignIns.add(async (e) => {
      await audit.recordSignIn({
        workspaceId: e.workspaceId,
        userId: e.userId,
        name: e.email,
        via: 'sso',
        action: `sso.${e.protocol}`,
        outcome: e.outcome === 'success' ? 'success' : 'denied',
        requestId: e.requestId ?? null,
        ip: e.ip,
        ...(e.reason ? { reason: e.reason } : {}),
      })
    })
    const told = async (e: Parameters<SsoSignInListener>[0]) => {
      // The one place every SSO sign-in, good or refused, passes.
      for (const listener of ssoSignIns.all())
        try {
          await listener(e)
        } catch (err) {
          log.error({ err }, 'an SSO sign-in listener failed')
        }
    }
    const oidcSignIn = new OidcSignIn(db, clock, random, outbound, sso, users, signIns, workspaces, told)
    const samlSignIn = new SamlSignIn(db, clock, ids, sso, users, signIns, workspaces, told)
    const scim = new ScimService(db, clock, ids, random, sso, users)
    housekeeping.add({ name: 'expired SSO sign-ins', run: () => sso.purgeFlows() })
    return { sso, oidcSignIn, samlSignIn, scim, ssoSignIns }
  },
})
