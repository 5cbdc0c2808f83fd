// The device link: what each screen is told (desired state, built and published), what it
// reports (presence, reported state), and its sessions after a restart.
import { type DomainProvisions, domainModule } from '../../platform/provisions.js'
import { ClusterPresence } from './ClusterPresence.js'
import { DesiredStateBuilder } from './DesiredStateBuilder.js'
import { DesiredStatePublisher } from './DesiredStatePublisher.js'
import { DeviceSessions } from './DeviceSessions.js'
import { LibraryContentResolver } from './LibraryContentResolver.js'
import { RedisPresenceStore } from './RedisPresenceStore.js'
import { ScreenPresence } from './ScreenPresence.js'
import { ScreenPresenceRepository } from './ScreenPresenceRepository.js'

export const devicelinkModule = domainModule({
  name: 'devicelink',
  needs: [
    'db',
    'clock',
    'config',
    'log',
    'broker',
    'redis',
    'leases',
    'stopSteps',
    'drainSteps',
    'contentOverride',
    'panelSettings',
    'running',
    'metrics',
    'screenRecords',
    'takeoverRecords',
    'operatingHoursRecords',
    'contentAccess',
    'contentPlayback',
    'mediaUrls',
    'screenChanges',
    'outbox',
  ],
  provides: ['contentResolver', 'desiredState', 'desiredPublisher', 'markDirty', 'presence', 'screenStatuses', 'screenReports', 'clusterPresence'],
  create: (d) => {
    const { db, clock, config, log, broker } = d
    // The device link sees the library through the ContentResolver seam (tests may pass their own).
    const contentResolver = d.contentOverride ?? new LibraryContentResolver(d.contentAccess, d.contentPlayback, (id) => d.mediaUrls.url(id))
    // Without a test's own panel source, the builder reads the panel profile from the screen rows it loads.
    const desiredState = new DesiredStateBuilder(d.screenRecords, d.takeoverRecords, clock, contentResolver, d.panelSettings ?? null, d.operatingHoursRecords)
    const desiredPublisher = new DesiredStatePublisher(d.screenRecords, d.takeoverRecords, desiredState, broker, log, clock)
    d.metrics.counter(
      'svc_desired_states_published_total',
      'Desired states handed to the broker for a screen by this instance.',
      () => desiredPublisher.published,
    )
    const markDirty: DomainProvisions['markDirty'] = (ws, screens) => desiredPublisher.markDirty(ws, screens)
    // Desired-state fan-outs in flight finish before the broker closes.
    d.stopSteps.add('desired state publishing', () => desiredPublisher.idle({ behindSlowReceivers: false }))
    // A paired or moved screen gets a fresh desired state.
    d.screenChanges.add((ws, id) => void markDirty(ws, [id]).catch(() => undefined))

    // Instances joined through Redis share presence there.
    const shared = d.redis && broker.clustered ? new RedisPresenceStore(d.redis) : undefined
    // While a fan-out is out, its reads and version bumps go before report writes.
    const presence = new ScreenPresence(db, clock, broker, d.outbox, log, config.screenOfflineGraceMs, shared, undefined, desiredPublisher.window)

    // After a restart the broker knows no sessions: devices get theirs back from the database.
    const presenceRows = new ScreenPresenceRepository(db.kysely)
    const sessions = new DeviceSessions(broker, { workspacesOf: (ids) => presenceRows.workspacesOf(ids), markDirty: (ws, ids) => markDirty(ws, ids) }, log)
    d.running.add('device sessions', sessions)

    // Presence stops its timers before the broker closes, records the drops the close causes
    // after it, then (shared presence) forgets what is left of this instance in Redis.
    const timers = config.presenceTimers ?? config.castExpiryIntervalMs > 0
    d.stopSteps.add('presence timers', () => presence.stop())
    const clusterPresence = shared ? new ClusterPresence(shared, presence, d.leases, clock, log, config.presenceHeartbeatMs) : null
    // Beats until the broker has closed (its sweep lease is given back to the database).
    if (clusterPresence) d.drainSteps.add('shared presence heartbeat', () => clusterPresence.stop())
    d.drainSteps.add('presence drops recorded', () => presence.idle())
    if (shared) d.drainSteps.add('shared presence of this instance', () => shared.forgetInstance(presence.instance))
    // Presence starts once every module is wired (the alerts and the takeovers listen to it);
    // its stop steps are above (before the broker closes, and the drains after it).
    d.running.add('presence', {
      start: async () => {
        await presence.start({ timers })
        await clusterPresence?.start(timers)
      },
    })
    return {
      contentResolver,
      desiredState,
      desiredPublisher,
      markDirty,
      presence,
      screenStatuses: { add: (l) => presence.onScreenStatuses(l) },
      screenReports: { add: (l) => presence.onReported(l) },
      clusterPresence,
    }
  },
})
