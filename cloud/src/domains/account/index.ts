// The workspace itself: its settings, limits and usage.
import { defineModule } from '../../platform/modules.js'
import type { DomainProvisions as D, PlatformProvisions as P } from '../provisions.js'
import { WorkspaceService } from './WorkspaceService.js'

export { default as accountRoutes } from './accountRoutes.js'

export const accountModule = defineModule<Pick<P, 'db' | 'clock' | 'ids' | 'config'> & Pick<D, 'credentialChanges' | 'screens'>, Pick<D, 'workspaces'>>({
  name: 'account',
  needs: { db: true, clock: true, ids: true, config: true, credentialChanges: true, screens: true },
  provides: { workspaces: true },
  create: ({ db, clock, ids, config, credentialChanges, screens }) => ({
    workspaces: new WorkspaceService(db, clock, ids, config.rateLimitPerMinute, credentialChanges, (ws) => screens.countInWorkspace(ws)),
  }),
})
