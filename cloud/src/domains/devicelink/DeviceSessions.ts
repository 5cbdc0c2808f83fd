// What a device's MQTT session needs after a cloud restart, rebuilt from the database (the
// broker keeps sessions and retained messages in memory only, see persistence.ts):
//
// - Subscriptions: a device that reconnects with `clean: false` to a broker that no longer
//   knows its session (CONNACK sessionPresent 0) and does not subscribe again is subscribed
//   by the cloud to its own `desired` and `jobs` topics, the two it may subscribe to, as
//   its session had them. It waits `restoreAfterMs` (1 s) for the device's own SUBSCRIBE
//   first (mqtt.js and the agent send one at once), so a device that does subscribe is not
//   subscribed twice and gets its retained state once.
// - Its latest desired state: the first time a device subscribes to its `desired` topic and
//   this process has not published one yet, the screen is marked dirty, so the publisher
//   builds its current state from the database and publishes it, retained, with the next
//   version. Versions come from the database and only increase, so a device never gets an
//   older version after a newer one. In a cloud of several instances no broker keeps a
//   retained copy (EmbeddedBroker `cluster`), so every such SUBSCRIBE rebuilds the state.
// - Its open serial jobs: SerialJobDelivery re-sends them from their table on the same
//   subscription (and when the client becomes ready).
//
// Publishing on subscribe rather than at start: a restart costs nothing for screens that
// stay away, and a storm of reconnecting devices is one publisher batch per tick.
import { QOS, topics } from '@svc/shared/mqtt/index'
import type { DeviceClient as Client, DeviceSubscription as Subscription, EmbeddedBroker } from '../../platform/broker/EmbeddedBroker.js'

type Log = { error(obj: unknown, msg: string): void }

export interface DeviceSessionsDeps {
  /** The workspace of each screen that still exists. */
  workspacesOf(screenIds: readonly string[]): Promise<Map<string, string>>
  /** Republishes these screens' desired state (DesiredStatePublisher.markDirty). */
  markDirty(workspaceId: string, screenIds: string[]): Promise<void>
}

export class DeviceSessions {
  private started = false
  private stopFollowing: (() => void)[] = []
  /** Screens whose desired state is being republished now. */
  private readonly requested = new Set<string>()
  private batch: string[] = []
  /** A republish (its lookup and markDirty) is under way: subscribers meanwhile wait for the next one. */
  private republishing = false

  constructor(
    private readonly broker: Pick<EmbeddedBroker, 'onClient' | 'lacksSubscriptions' | 'restoreSubscriptions' | 'hasRetained'>,
    private readonly deps: DeviceSessionsDeps,
    private readonly log: Log,
    private readonly restoreAfterMs = 1000,
  ) {}

  start(): void {
    if (this.started) return
    this.started = true
    this.stopFollowing = [this.broker.onClient('clientReady', this.onClientReady), this.broker.onClient('subscribe', this.onSubscribe)]
  }

  stop(): void {
    if (!this.started) return
    this.started = false
    for (const stop of this.stopFollowing) stop()
    this.stopFollowing = []
  }

  private readonly onClientReady = (client: Client): void => {
    if (!this.lacksSession(client)) return
    setTimeout(() => {
      if (this.started && this.lacksSession(client)) this.restore(client)
    }, this.restoreAfterMs).unref()
  }

  private lacksSession(client: Client): boolean {
    return this.broker.lacksSubscriptions(client)
  }

  private restore(client: Client): void {
    // A persistent session this broker does not know: give it the subscriptions it had.
    const subs = [
      { topic: topics.desired(client.id), qos: QOS },
      { topic: topics.jobs(client.id), qos: QOS },
    ]
    this.broker
      .restoreSubscriptions(client, subs)
      .catch((err: unknown) => this.log.error({ err, screenId: client.id }, 'restoring the subscriptions of a device session failed'))
  }

  private readonly onSubscribe = (subs: Subscription[], client: Client): void => {
    if (!client) return
    const desired = topics.desired(client.id)
    if (!subs.some((s) => s.topic === desired && (s.qos as number) !== 128)) return
    if (this.broker.hasRetained(desired) || this.requested.has(client.id)) return
    this.requested.add(client.id)
    this.batch.push(client.id)
    if (this.batch.length === 1 && !this.republishing) setImmediate(() => void this.republish())
  }

  /**
   * Marks the screens that subscribed since the last lookup dirty: one lookup of their
   * workspaces and one markDirty per workspace. One lookup at a time: the subscribers
   * arriving while it runs (a fleet reconnecting after a restart) are the next batch, so
   * batches grow with the load. The publisher coalesces the marks into its own batches.
   */
  private async republish(): Promise<void> {
    const ids = this.batch
    this.batch = []
    if (!ids.length) return
    this.republishing = true
    let workspaces: Map<string, string>
    try {
      workspaces = await this.deps.workspacesOf(ids)
    } catch (err) {
      this.log.error({ err }, 'looking up screens to republish failed')
      for (const id of ids) this.requested.delete(id)
      return
    } finally {
      this.republishing = false
      if (this.batch.length) setImmediate(() => void this.republish())
    }
    const byWorkspace = new Map<string, string[]>()
    for (const id of ids) {
      const ws = workspaces.get(id)
      if (!ws) {
        this.requested.delete(id)
        continue
      }
      const list = byWorkspace.get(ws) ?? []
      list.push(id)
      byWorkspace.set(ws, list)
    }
    try {
      await Promise.all(
        [...byWorkspace].map(([ws, list]) =>
          this.deps.markDirty(ws, list).catch((err: unknown) => this.log.error({ err, workspaceId: ws }, 'republishing desired states on subscribe failed')),
        ),
      )
    } finally {
      for (const id of ids) this.requested.delete(id)
    }
  }
}
