// Takeovers: casts (timed) and emergencies (until cleared) that override what screens play,
// and the count of screens that applied each.
import { defineModule } from '../../platform/modules.js'
import type { DomainProvisions as D, PlatformProvisions as P } from '../provisions.js'
import { CastService } from './CastService.js'
import { EmergencyService } from './EmergencyService.js'
import { Takeover } from './Takeover.js'
import { TakeoverDelivery } from './TakeoverDelivery.js'

export { default as castRoutes } from './castRoutes.js'
export { default as emergencyRoutes } from './emergencyRoutes.js'
export type { MarkDirty } from './CastService.js'

type Needs = Pick<P, 'db' | 'clock' | 'ids' | 'log' | 'drainSteps'> &
  Pick<D, 'nodes' | 'contentResolver' | 'markDirty' | 'desiredPublisher' | 'outbox' | 'screenReports'>

export const takeoversModule = defineModule<Needs, Pick<D, 'casts' | 'emergencies' | 'takeoverDelivery'>>({
  name: 'takeovers',
  needs: {
    db: true,
    clock: true,
    ids: true,
    log: true,
    drainSteps: true,
    nodes: true,
    contentResolver: true,
    markDirty: true,
    desiredPublisher: true,
    outbox: true,
    screenReports: true,
  },
  provides: { casts: true, emergencies: true, takeoverDelivery: true },
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
