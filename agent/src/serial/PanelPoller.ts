/**
 * Polls the panel's power state every `pollSeconds` through the DisplayDriver
 * (so polls queue behind jobs, one command in flight) and reports
 * `{power, input?, at}` — the panel part of `reported`, which feeds the
 * cloud's display-off alert. A panel that does not answer reads `unknown`.
 */
import { CEC_NO_ACK, panelProtocols, type PanelPower, type PanelProtocolName } from '@svc/shared/panels/index'
import type { PanelReport } from '@svc/shared/mqtt/index'
import type { DisplayDriver } from './DisplayDriver.js'

export interface PanelPollerOptions {
  protocol: PanelProtocolName
  /** Set / monitor id on the bus. */
  setId: number
  /** 0 = never poll. */
  pollSeconds: number
  onReport: (report: PanelReport) => void
  now?: () => Date
  /**
   * CEC: how long to wait for an answer to Request Active Source, which goes unanswered by
   * design while the player itself is the source shown; default the driver's reply timeout.
   */
  inputAnswerMs?: number
}

/** Warming up counts as on and cooling down as off: what the viewer will see in a moment. */
export function powerOf(p: PanelPower | undefined): PanelReport['power'] {
  if (p === 'on' || p === 'warming') return 'on'
  if (p === 'off' || p === 'standby' || p === 'cooling') return 'off'
  return 'unknown'
}

export class PanelPoller {
  private timer: NodeJS.Timeout | null = null
  private running: Promise<PanelReport> | null = null
  private stopped = false

  constructor(
    private readonly driver: Pick<DisplayDriver, 'send'>,
    private readonly opts: PanelPollerOptions,
  ) {
    if (!Object.hasOwn(panelProtocols, opts.protocol)) throw new TypeError(`PanelPoller: unknown protocol ${opts.protocol}`)
    if (!Number.isInteger(opts.pollSeconds) || opts.pollSeconds < 0) throw new TypeError('PanelPoller: pollSeconds must be a whole number of at least 0')
  }

  start(): void {
    if (this.timer || this.opts.pollSeconds === 0) return
    void this.pollOnce()
    this.timer = setInterval(() => void this.pollOnce(), this.opts.pollSeconds * 1000)
    this.timer.unref()
  }

  async stop(): Promise<void> {
    this.stopped = true
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    await this.running?.catch(() => undefined)
  }

  /** One power query; reports and returns the result. A poll still running is shared. */
  pollOnce(): Promise<PanelReport> {
    this.running ??= this.query().finally(() => (this.running = null))
    return this.running
  }

  /**
   * A fresh reading: after the one in progress (which may have been sent before the
   * change) when there is one. Skipped when polling is off (pollSeconds 0).
   */
  pollAgain(): Promise<PanelReport | null> {
    if (this.opts.pollSeconds === 0 || this.stopped) return Promise.resolve(null)
    const running = this.running
    return running ? running.catch(() => undefined).then(() => this.pollOnce()) : this.pollOnce()
  }

  /** A fresh reading whether or not polling is on (after the one in progress); null once stopped. */
  readNow(): Promise<PanelReport | null> {
    if (this.stopped) return Promise.resolve(null)
    const running = this.running
    return running ? running.catch(() => undefined).then(() => this.pollOnce()) : this.pollOnce()
  }

  private async query(): Promise<PanelReport> {
    const codec = panelProtocols[this.opts.protocol]
    let query: Buffer
    try {
      query = codec.powerQuery(this.opts.setId)
    } catch {
      // a set id the protocol cannot address (CEC: HDMI input 0): nothing to ask
      const report: PanelReport = { power: 'unknown', at: (this.opts.now ?? (() => new Date()))().toISOString() }
      this.opts.onReport(report)
      return report
    }
    const r = await this.driver.send(query, { protocol: this.opts.protocol })
    let input = r.outcome === 'ok' ? r.reply?.input : undefined
    // The input is read where the protocol can, and only while the panel is on (panels in
    // standby often refuse the query).
    if (r.outcome === 'ok' && r.reply && powerOf(r.reply.power) === 'on' && !input && codec.inputQuery) {
      // CEC: nobody answers while the player itself shows, so one try is enough.
      const i = await this.driver.send(codec.inputQuery(this.opts.setId), {
        protocol: this.opts.protocol,
        ...(this.opts.protocol === 'cec' ? { retries: 0, ...(this.opts.inputAnswerMs ? { timeoutMs: this.opts.inputAnswerMs } : {}) } : {}),
      })
      if (i.outcome === 'ok' && i.reply?.input) input = i.reply.input
    }
    const at = (this.opts.now ?? (() => new Date()))().toISOString()
    // A CEC display that acknowledges nothing is not "off": it does not speak CEC (or its CEC is off).
    const noCec = r.outcome === 'nak' && this.opts.protocol === 'cec' && r.reply?.errorCode === CEC_NO_ACK
    const report: PanelReport =
      r.outcome === 'ok' && r.reply
        ? { power: powerOf(r.reply.power), ...(input ? { input } : {}), at }
        : { power: 'unknown', ...(noCec ? { problem: 'no-cec' as const } : {}), at }
    this.opts.onReport(report)
    return report
  }
}
