// Who may call: API keys, users and their sessions, OAuth client credentials, and the
// authentication hook every /v1 route goes through.
import { domainModule } from '../../platform/provisions.js'
import { ApiKeyService } from './ApiKeyService.js'
import { LocalCredentialChanges } from './CredentialChanges.js'
import { OAuthService } from './OAuthService.js'
import { RedisCredentialChanges } from './RedisCredentialChanges.js'
import { SignInLimits, RedisFailureStore } from './SignInLimits.js'
import { Listeners } from '../../platform/hooks.js'
import { SignInService, type Deactivation, type PasswordRule } from './SignInService.js'
import { UserService } from './UserService.js'

export { default as apiKeyRoutes } from './apiKeyRoutes.js'
export { default as meRoutes } from './meRoutes.js'
export { installAuth } from './authentication.js'
export { default as oauthRoutes, oauthMetadataRoutes } from './oauthRoutes.js'
export { default as sessionRoutes } from './sessionRoutes.js'
export { default as userRoutes } from './userRoutes.js'

export const accessModule = domainModule({
  name: 'access',
  needs: [
    'db',
    'clock',
    'ids',
    'random',
    'config',
    'redis',
    'releaseSteps',
    'housekeeping',
    'mailer',
    'nodes',
    'nodeUsage',
    'nodeRemoval',
    'audit',
    'authFailures',
  ],
  provides: ['credentialChanges', 'apiKeys', 'users', 'signIns', 'oauth', 'passwordRules', 'deactivations'],
  create: ({ db, clock, ids, random, config, redis, releaseSteps, housekeeping, mailer, nodes, nodeUsage, nodeRemoval, audit, authFailures }) => {
    // Instances joined through Redis drop each other's cached credentials at once.
    const credentialChanges = redis ? new RedisCredentialChanges(redis) : new LocalCredentialChanges()
    if (credentialChanges instanceof RedisCredentialChanges) releaseSteps.add('credential changes channel', () => credentialChanges.close())
    const deactivations = new Listeners<Deactivation>()
    // A user activated again: their API keys, refused while they were not, are looked up again on every instance.
    credentialChanges.subscribe((c) => {
      if (c.kind === 'user' && c.reactivated) authFailures.forgetRefused()
    })
    const apiKeys = new ApiKeyService(db, clock, ids, nodes, random, credentialChanges, deactivations)
    // last_used_at values still pending are written before the database closes.
    releaseSteps.add('api key last-used flush', () => apiKeys.close())
    nodeUsage.add(async (ws, nodeId) => ({ what: 'API key(s) pinned to it', count: await apiKeys.countAtNode(ws, nodeId) }))
    nodeRemoval.add((tx, ws, nodeId) => apiKeys.locationRemoved(tx, ws, nodeId))
    const users = new UserService(db, clock, ids, random, config.sessionTtlHours, credentialChanges, apiKeys.principals)
    const limits = new SignInLimits(clock, redis ? new RedisFailureStore(redis) : undefined)
    const passwordRules = new Listeners<PasswordRule>()
    const signIns = new SignInService(
      db,
      clock,
      ids,
      random,
      users,
      limits,
      mailer,
      config.publicUrl,
      credentialChanges,
      config.passwordScryptLogN,
      audit,
      passwordRules,
      deactivations,
    )
    housekeeping.add({ name: 'expired invites, sign-in devices and sessions', run: () => signIns.purgeExpired() })
    const oauth = new OAuthService(db, clock, ids, apiKeys, random)
    housekeeping.add({ name: 'expired OAuth tokens', run: () => oauth.purgeExpired() })
    return { credentialChanges, apiKeys, users, signIns, oauth, passwordRules, deactivations }
  },
})
