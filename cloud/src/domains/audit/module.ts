// The audit log: the trail every write and sign-in is recorded in (AuditTrail), its
// retention (a housekeeping task, run on one instance), the HTTP edge that records writes
// (installAudit, which app.ts installs after authentication) and its routes.
import { domainModule } from '../../platform/provisions.js'
import { AuditTrail } from './AuditTrail.js'

export { default as auditRoutes } from './auditRoutes.js'
export { installAuditEdge as installAudit } from './auditEdge.js'

export const auditModule = domainModule({
  name: 'audit',
  needs: ['db', 'clock', 'ids', 'config', 'housekeeping'],
  provides: ['audit'],
  create: ({ db, clock, ids, config, housekeeping }) => {
    const audit = new AuditTrail(db, clock, ids, config.auditEnabled)
    housekeeping.add({ name: 'audit log retention', run: () => audit.purge(config.auditRetentionDays) })
    return { audit }
  },
})
