// Carries out the screen's operating hours on the panel, on the agent's own clock (offline
// too): at each change of the hours' intent (the shared `panelIntentAt`, the schedules' DST
// rules) it sends the protocol's power command, reads the panel back, and when the panel
// did not follow, sends it again after a backoff (10 s, 30 s, 60 s, then every 60 s); once
// those three retries are spent it reports the panel not obeying (and keeps trying). While
// a cast or an emergency plays, the panel is wanted on whatever the hours say. A reading that
// differs from the intent (switched by hand, a missed command) is enforced the same way.
// `status` is what the agent reports beside the reading: `intended` and `obeying`.
import type { PanelReport, PanelSettings } from '@svc/shared/mqtt/index'
import { isPanelProtocolName, panelProtocols } from '@svc/shared/panels/index'
import { type OperatingHours, panelIntentAt } from '@svc/shared/schedule/index'
import type { Clock, TimerHandle, Timers } from '@svc/shared'
import type { DisplayDriver } from './DisplayDriver.js'

export const POWER_RETRY_MS = [10_000, 30_000, 60_000] as const

export interface PowerStatus {
  /** What the hours (or a takeover) want; null without hours or a panel. */
  intended: 'on' | 'off' | null
  /** Whether the panel's last read-back matches; null before one after a command. */
  obeying: boolean | null
}

export interface PowerPlan {
  hours: OperatingHours | null
  timezone: string
  panel: PanelSettings | null
  /** A cast or an emergency is playing: the panel is wanted on. */
  takeover: boolean
}

export interface PowerSchedulerOptions {
  driver: Pick<DisplayDriver, 'send'>
  /** A fresh reading of the panel (the poller's), null when none can be taken. */
  readBack: () => Promise<PanelReport | null>
  clock: Clock
  timers: Timers
  onStatus: (status: PowerStatus) => void
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void }
  retryMs?: readonly number[]
}

export class PowerScheduler {
  #plan: PowerPlan = { hours: null, timezone: 'UTC', panel: null, takeover: false }
  #status: PowerStatus = { intended: null, obeying: null }
  #change: TimerHandle | null = null
  #retry: TimerHandle | null = null
  #attempts = 0
  #running: Promise<void> = Promise.resolve()
  #stopped = false

  constructor(private readonly o: PowerSchedulerOptions) {}

  get status(): PowerStatus {
    return this.#status
  }

  /** New hours, zone, panel profile or takeover state: decide again now. */
  update(plan: PowerPlan): void {
    this.#plan = plan
    this.#decide()
  }

  /** A reading from the poller: a panel that left the intent is brought back. */
  observed(report: PanelReport | null): void {
    const intended = this.#status.intended
    if (!intended || !report || report.power === 'unknown' || this.#retry) return
    if (report.power !== intended) this.#schedule(this.#delay())
    else if (this.#status.obeying !== true) this.#set({ intended, obeying: true })
  }

  /** Resolves once the command in flight (if any) is done. */
  idle(): Promise<void> {
    return this.#running
  }

  stop(): void {
    this.#stopped = true
    this.#clear()
  }

  #clear(): void {
    if (this.#change !== null) this.o.timers.clearTimer(this.#change)
    if (this.#retry !== null) this.o.timers.clearTimer(this.#retry)
    this.#change = this.#retry = null
  }

  #set(status: PowerStatus): void {
    if (status.intended === this.#status.intended && status.obeying === this.#status.obeying) return
    this.#status = status
    this.o.onStatus(status)
  }

  #decide(): void {
    if (this.#stopped) return
    if (this.#change !== null) this.o.timers.clearTimer(this.#change)
    this.#change = null
    const { hours, timezone, panel, takeover } = this.#plan
    if (!hours || !panel || !isPanelProtocolName(panel.protocol)) {
      if (this.#retry !== null) this.o.timers.clearTimer(this.#retry)
      this.#retry = null
      this.#set({ intended: null, obeying: null })
      return
    }
    const now = this.o.clock.now()
    const byHours = panelIntentAt(hours, now, timezone)
    const intended = takeover ? 'on' : byHours.power
    if (byHours.nextChangeAt) {
      const ms = Math.max(0, byHours.nextChangeAt.getTime() - now.getTime())
      this.#change = this.o.timers.setTimer(() => this.#decide(), Math.min(ms, 2_147_483_647))
    }
    if (intended === this.#status.intended && this.#status.obeying !== false) return
    if (intended !== this.#status.intended) this.#attempts = 0
    this.#set({ intended, obeying: null })
    if (this.#retry !== null) this.o.timers.clearTimer(this.#retry)
    this.#retry = null
    this.#enforce()
  }

  #delay(): number {
    const retry = this.o.retryMs ?? POWER_RETRY_MS
    return retry[Math.min(this.#attempts, retry.length - 1)]!
  }

  #schedule(ms: number): void {
    if (this.#stopped) return
    if (this.#retry !== null) this.o.timers.clearTimer(this.#retry)
    this.#retry = this.o.timers.setTimer(() => {
      this.#retry = null
      this.#enforce()
    }, ms)
  }

  /** Sends the intended power command, reads back, and schedules a retry when the panel did not follow. */
  #enforce(): void {
    this.#running = this.#running.then(async () => {
      const intended = this.#status.intended
      const panel = this.#plan.panel
      if (this.#stopped || !intended || !panel || !isPanelProtocolName(panel.protocol)) return
      const codec = panelProtocols[panel.protocol]
      let frame: Buffer | null = null
      try {
        frame = intended === 'on' ? codec.powerOn(panel.setId) : codec.powerOff(panel.setId)
      } catch {
        // a set id the protocol cannot address: nothing is sent, the read-back says the rest
      }
      const sent = frame ? await this.o.driver.send(frame, { protocol: panel.protocol }).catch(() => null) : null
      const reading = await this.o.readBack().catch(() => null)
      if (this.#status.intended !== intended) return // the intent moved on meanwhile
      if (reading?.power === intended) {
        this.#attempts = 0
        this.#set({ intended, obeying: true })
        this.o.log.info({ power: intended }, 'the panel follows its operating hours')
        return
      }
      const wait = this.#delay()
      this.#attempts++
      // Not obeying once the retries are spent (until then it may still be warming up or busy).
      if (this.#attempts > (this.o.retryMs ?? POWER_RETRY_MS).length) this.#set({ intended, obeying: false })
      this.o.log.warn(
        { power: intended, read: reading?.power ?? 'unknown', outcome: sent?.outcome ?? 'failed', retryInMs: wait },
        'the panel did not follow its operating hours',
      )
      this.#schedule(wait)
    })
  }
}

/** A reading with what the hours want and whether the panel obeys (left out while unknown). */
export function withPowerStatus(report: PanelReport, status: PowerStatus): PanelReport {
  const { intended: _i, obeying: _o, ...reading } = report
  if (!status.intended) return reading
  return { ...reading, intended: status.intended, ...(status.obeying === null ? {} : { obeying: status.obeying }) }
}
