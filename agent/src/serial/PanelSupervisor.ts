// Keeps the panel poller in line with the desired state's panel settings: when the cloud
// sets, changes or clears a screen's panel profile, the poller is restarted with the new
// protocol, set id and interval (or stopped), and every reading goes to `onReport`, which
// the agent forwards into its reported state (this feeds the display-off alert).
import type { PanelReport, PanelSettings } from '@svc/shared/mqtt/index'
import { isPanelProtocolName } from '@svc/shared/panels/index'
import type { DisplayDriver } from './DisplayDriver.js'
import { PanelPoller } from './PanelPoller.js'

export class PanelSupervisor {
  private poller: PanelPoller | null = null
  private current = ''

  constructor(
    private readonly driver: Pick<DisplayDriver, 'send'>,
    private readonly onReport: (report: PanelReport | null) => void,
  ) {}

  /** Applies panel settings (null = no panel profile: stop polling and clear the reading). */
  async configure(settings: PanelSettings | null): Promise<void> {
    const key = settings ? `${settings.protocol}/${settings.setId}/${settings.pollSeconds}` : ''
    if (key === this.current) return
    this.current = key
    await this.poller?.stop()
    this.poller = null
    // A protocol this agent does not speak is treated as no profile rather than a crash.
    if (!settings || !isPanelProtocolName(settings.protocol)) {
      this.onReport(null)
      return
    }
    this.poller = new PanelPoller(this.driver, {
      protocol: settings.protocol,
      setId: settings.setId,
      pollSeconds: settings.pollSeconds,
      onReport: (r) => this.onReport(r),
    })
    this.poller.start()
  }

  /** Reads the panel again as soon as the command queue allows (after a job that may have changed it); none without a profile. */
  async pollSoon(): Promise<void> {
    await this.poller?.pollAgain()
  }

  /** A fresh reading now (the operating hours' read-back); null without a profile. */
  async readNow(): Promise<PanelReport | null> {
    return (await this.poller?.readNow()) ?? null
  }

  async stop(): Promise<void> {
    await this.poller?.stop()
    this.poller = null
    this.current = ''
  }
}
