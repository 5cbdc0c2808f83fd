// The workspace itself: its settings, limits and usage.
import { domainModule } from '../../platform/provisions.js'
import { WorkspaceService } from './WorkspaceService.js'

export { default as accountRoutes } from './accountRoutes.js'

export const accountModule = domainModule({
  name: 'account',
  needs: ['db', 'clock', 'ids', 'config', 'credentialChanges', 'screens'],
  provides: ['workspaces'],
  create: ({ db, clock, ids, config, credentialChanges, screens }) => ({
    workspaces: new WorkspaceService(db, clock, ids, config.rateLimitPerMinute, credentialChanges, (ws) => screens.countInWorkspace(ws)),
  }),
})
