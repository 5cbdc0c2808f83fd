// The instance side of shared presence (RedisPresenceStore): each instance beats every
// `intervalMs`; the holder of the `presence-sweep` lease (WorkLeases) then reaps the
// instances that stopped beating (dead after `deadAfterBeats` intervals) and sweeps the
// screens whose grace has passed, wherever they dropped, so a screen whose instance died
// (or whose own instance died before its grace timer fired) still goes offline, announced
// once.
import type { Clock } from '../../platform/clock.js'
import type { WorkLeases } from '../../platform/cluster/WorkLeases.js'
import type { RedisPresenceStore } from './RedisPresenceStore.js'

export const PRESENCE_SWEEP_LEASE = 'presence-sweep'

export class ClusterPresence {
  private timer: NodeJS.Timeout | null = null
  private running: Promise<void> | null = null

  constructor(
    private readonly store: RedisPresenceStore,
    private readonly presence: { readonly instance: string; sweep(): Promise<void> },
    private readonly leases: Pick<WorkLeases, 'hold' | 'release'>,
    private readonly clock: Clock,
    private readonly log: { error(obj: unknown, msg: string): void },
    readonly intervalMs = 5000,
    private readonly deadAfterBeats = 3,
  ) {}

  /** Beats at once (a new instance is alive before its first connection), then every interval. */
  async start(timers: boolean): Promise<void> {
    await this.store.beat(this.presence.instance, this.clock.now().getTime()).catch((err) => this.log.error({ err }, 'presence heartbeat failed'))
    if (!timers) return
    this.timer = setInterval(() => void this.runOnce(), this.intervalMs)
    this.timer.unref()
  }

  /** One beat and, on the lease holder, one reap and sweep. */
  runOnce(): Promise<void> {
    this.running ??= this.round().finally(() => {
      this.running = null
    })
    return this.running
  }

  private async round(): Promise<void> {
    try {
      const now = this.clock.now().getTime()
      await this.store.beat(this.presence.instance, now)
      if (!(await this.leases.hold(PRESENCE_SWEEP_LEASE, this.intervalMs))) return
      await this.store.reapDead(now, this.intervalMs * this.deadAfterBeats)
      await this.presence.sweep()
    } catch (err) {
      this.log.error({ err }, 'shared presence round failed')
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    await this.running
    await this.leases.release(PRESENCE_SWEEP_LEASE).catch(() => undefined)
  }
}
