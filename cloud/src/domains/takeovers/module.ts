// Takeovers: casts (timed) and emergencies (until cleared) that override what screens play,
// and the count of screens that applied each.
import { domainModule } from '../../platform/provisions.js'
import { CastExpiryWorker } from './CastExpiryWorker.js'
import { CastService } from './CastService.js'
import { EmergencyService } from './EmergencyService.js'
import { Takeover } from './Takeover.js'
import { ReachReceipts } from './ReachReceipts.js'
import { TakeoverDelivery } from './TakeoverDelivery.js'
import { TakeoverRecords } from './TakeoverRecords.js'

export { default as castRoutes } from './castRoutes.js'
export { default as emergencyRoutes } from './emergencyRoutes.js'

/** The takeovers' rows as the device link reads them: built before it, from the database alone. */
export const takeoverRecordsModule = domainModule({
  name: 'takeover records',
  needs: ['db'],
  provides: ['takeoverRecords'],
  create: ({ db }) => ({ takeoverRecords: new TakeoverRecords(db) }),
})

export const takeoversModule = domainModule({
  name: 'takeovers',
  needs: [
    'db',
    'clock',
    'ids',
    'log',
    'config',
    'running',
    'drainSteps',
    'nodes',
    'screenRecords',
    'content',
    'contentResolver',
    'contentUsage',
    'contentChanges',
    'takeoverRecords',
    'markDirty',
    'desiredPublisher',
    'outbox',
    'screenReports',
    'groups',
    'tagChanges',
    'groupChanges',
    'screenChanges',
  ],
  provides: ['casts', 'emergencies', 'takeoverDelivery', 'reach', 'castExpiry'],
  create: (d) => {
    const { db, clock, ids, log, nodes, markDirty, takeoverRecords } = d
    const takeover = new Takeover(d.screenRecords, nodes, d.contentResolver, d.groups)
    // A screen reporting a cast or an emergency playing counts it applied (their `delivery`);
    // while a fan-out is out, its reads and version bumps go before those writes.
    const reach = new ReachReceipts(db, clock, d.outbox)
    // An emergency every screen has applied reports its reach at once (else the cast-expiry
    // worker's tick does once its window has passed).
    const takeoverDelivery = new TakeoverDelivery(db, clock, log, d.desiredPublisher.window, () =>
      reach.recordDue().catch((err) => log.error({ err }, 'recording emergency reach failed')),
    )
    d.screenReports.add((r) => takeoverDelivery.reported(r))
    d.drainSteps.add('takeover delivery counts', () => takeoverDelivery.idle())
    // Content a live takeover shows cannot be deleted; a change to it (or to anything it
    // contains) republishes the screens the takeover holds.
    d.contentUsage.add(async (ws, kind, id) => ({
      what: 'active cast(s) or emergency(ies) showing it',
      count: await takeoverRecords.countShowing(ws, kind, id),
    }))
    d.contentChanges.add(async (ws, _kind, id) => {
      const screens = await takeoverRecords.screensShowing(ws, await d.content.containing(ws, [id]))
      if (screens.length) void markDirty(ws, screens).catch((err) => log.error({ err, id }, 'republishing screens after a content change failed'))
    })
    const emergencies = new EmergencyService(db, clock, ids, nodes, takeover, markDirty, d.outbox, reach)
    // An active emergency aimed at a location, a group or everything follows the fleet: a
    // screen tagged, moved, paired or upgraded into (or out of) its target joins (or leaves) it.
    const follow = (ws: string) => void emergencies.follow(ws).catch((err) => log.error({ err, workspaceId: ws }, 'an emergency following its target failed'))
    d.tagChanges.add((ws) => follow(ws))
    d.groupChanges.add((ws) => follow(ws))
    d.screenChanges.add((ws) => follow(ws))
    // An upgrade counts when a screen's agent version differs from the one it last reported here.
    const versions = new Map<string, string>()
    d.screenReports.add((r) => {
      const v = r.reported.agentVersion
      if (v === undefined || versions.get(r.screenId) === v) return
      versions.set(r.screenId, v)
      follow(r.workspaceId)
    })
    const casts = new CastService(db, clock, ids, nodes, takeover, markDirty, reach)
    // Casts end at their expiresAt; this worker runs on every instance (each cast ends, and
    // each emergency's reach is recorded, with a conditional update).
    const castExpiry = new CastExpiryWorker(casts, clock, d.config.castExpiryIntervalMs, log, () => reach.recordDue())
    d.running.add('cast expiry', castExpiry)
    return { casts, emergencies, reach, takeoverDelivery, castExpiry }
  },
})
