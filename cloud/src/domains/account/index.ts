// The workspace itself: its settings, limits and usage.
import { defineModule } from '../../platform/modules.js'
import type { DomainProvisions as D, PlatformProvisions as P } from '../provisions.js'
import { WorkspaceService } from './WorkspaceService.js'

export { default as accountRoutes } from './accountRoutes.js'

export const accountModule = defineModule<Pick<P, 'db' | 'clock' | 'ids' | 'config'> & Pick<D, 'credentialChanges'>, Pick<D, 'workspaces'>>({
  name: 'account',
  needs: { db: true, clock: true, ids: true, config: true, credentialChanges: true },
  provides: { workspaces: true },
  create: ({ db, clock, ids, config, credentialChanges }) => ({
    workspaces: new WorkspaceService(db, clock, ids, config.rateLimitPerMinute, credentialChanges),
  }),
})
