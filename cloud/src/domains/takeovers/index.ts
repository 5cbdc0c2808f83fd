// Takeovers: casts (timed) and emergencies (until cleared) that override what screens play,
// and the count of screens that applied each.
import { domainModule } from '../provisions.js'
import { CastService } from './CastService.js'
import { EmergencyService } from './EmergencyService.js'
import { Takeover } from './Takeover.js'
import { TakeoverDelivery } from './TakeoverDelivery.js'

export { default as castRoutes } from './castRoutes.js'
export { default as emergencyRoutes } from './emergencyRoutes.js'
export type { MarkDirty } from './CastService.js'

export const takeoversModule = domainModule({
  name: 'takeovers',
  needs: ['db', 'clock', 'ids', 'log', 'drainSteps', 'nodes', 'contentResolver', 'markDirty', 'desiredPublisher', 'outbox', 'screenReports'],
  provides: ['casts', 'emergencies', 'takeoverDelivery'],
  create: ({ db, clock, ids, log, drainSteps, nodes, contentResolver, markDirty, desiredPublisher, outbox, screenReports }) => {
    const takeover = new Takeover(db, nodes, contentResolver)
    // A screen reporting a cast or an emergency playing counts it applied (their `delivery`);
    // while a fan-out is out, its reads and version bumps go before those writes.
    const takeoverDelivery = new TakeoverDelivery(db, clock, log, desiredPublisher.window)
    screenReports.add((r) => takeoverDelivery.reported(r))
    drainSteps.add('takeover delivery counts', () => takeoverDelivery.idle())
    return {
      casts: new CastService(db, clock, ids, nodes, takeover, markDirty),
      emergencies: new EmergencyService(db, clock, ids, nodes, takeover, markDirty, outbox),
      takeoverDelivery,
    }
  },
})
