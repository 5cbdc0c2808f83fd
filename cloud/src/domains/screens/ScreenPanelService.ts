// The panel profile of a screen: which RS232 protocol its display speaks, the display's
// set id on the bus and how often the agent polls it. Stored on the screen row (migration
// 32); the desired-state builder reads it through panelProfile() and puts it in
// `desired.panel`, and serial jobs use its protocol to read replies.
import { PANEL_PROTOCOL_NAMES, type PanelProtocolName } from '@svc/shared/panels/index'
import type { PanelSettings } from '@svc/shared/mqtt/index'
import type { Clock } from '../../platform/clock.js'
import type { Database } from '../../platform/db/Database.js'
import { validation } from '../../platform/errors.js'
import type { Principal } from '../../platform/http/Principal.js'
import { ScreenRepository, type ScreenPanelRecord } from './ScreenRepository.js'
import type { ScreenService } from './ScreenService.js'

export const PANEL_DEFAULT_SET_ID = 1
export const PANEL_DEFAULT_POLL_SECONDS = 60
export const PANEL_MAX_POLL_SECONDS = 86_400

export interface PanelProfile {
  protocol: PanelProtocolName
  setId: number
  pollSeconds: number
  /** Where the installer wired the panel (`/dev/ttyUSB0`, `192.168.1.50:1515`); a note, not sent to the device. */
  portHint: string | null
}

export interface PanelProfileInput {
  protocol?: string | null
  setId?: number
  pollSeconds?: number
  portHint?: string | null
}

function profileOf(r: ScreenPanelRecord | undefined): PanelSettings | null {
  if (!r?.panel_protocol || !(PANEL_PROTOCOL_NAMES as readonly string[]).includes(r.panel_protocol)) return null
  return {
    protocol: r.panel_protocol as PanelProtocolName,
    setId: r.panel_set_id === null ? PANEL_DEFAULT_SET_ID : Number(r.panel_set_id),
    pollSeconds: r.panel_poll_seconds === null ? PANEL_DEFAULT_POLL_SECONDS : Number(r.panel_poll_seconds),
  }
}

export class ScreenPanelService {
  private readonly repo: ScreenRepository

  constructor(
    db: Database,
    private readonly clock: Clock,
    private readonly screens: ScreenService,
  ) {
    this.repo = new ScreenRepository(db.kysely)
  }

  /**
   * The screen's panel profile for `desired.panel` (shape of the MQTT PanelSettings), or null
   * when none is set or the screen is not in the workspace. No credential check: for the
   * cloud's own builders.
   */
  async panelProfile(workspaceId: string, screenId: string): Promise<PanelSettings | null> {
    return profileOf(await this.repo.panel(workspaceId, screenId))
  }

  /** The profile as the credential sees it (404 for a screen it does not reach). */
  async get(p: Principal, screenId: string): Promise<PanelProfile | null> {
    await this.screens.get(p, screenId)
    const r = await this.repo.panel(p.workspaceId, screenId)
    const profile = profileOf(r)
    return profile ? { ...(profile as Omit<PanelProfile, 'portHint'>), portHint: r?.panel_port_hint ?? null } : null
  }

  /** Sets or (protocol null) clears the profile; omitted fields keep their value or default. */
  async set(p: Principal, screenId: string, input: PanelProfileInput): Promise<PanelProfile | null> {
    await this.screens.get(p, screenId)
    const current = await this.get(p, screenId)
    const protocol = input.protocol === undefined ? (current?.protocol ?? null) : input.protocol
    if (protocol !== null && !(PANEL_PROTOCOL_NAMES as readonly string[]).includes(protocol)) {
      throw validation(`protocol must be one of ${PANEL_PROTOCOL_NAMES.join(', ')} or null.`)
    }
    if (protocol === null) {
      await this.repo.setPanel(
        p.workspaceId,
        screenId,
        { panel_protocol: null, panel_set_id: null, panel_poll_seconds: null, panel_port_hint: null },
        this.clock.now().toISOString(),
      )
      // The panel settings are part of the desired state: republish it.
      this.screens.changed(p.workspaceId, screenId)
      return null
    }
    const setId = input.setId ?? current?.setId ?? PANEL_DEFAULT_SET_ID
    const pollSeconds = input.pollSeconds ?? current?.pollSeconds ?? PANEL_DEFAULT_POLL_SECONDS
    const hint = input.portHint === undefined ? (current?.portHint ?? null) : input.portHint?.trim() || null
    await this.repo.setPanel(
      p.workspaceId,
      screenId,
      { panel_protocol: protocol, panel_set_id: setId, panel_poll_seconds: pollSeconds, panel_port_hint: hint },
      this.clock.now().toISOString(),
    )
    this.screens.changed(p.workspaceId, screenId)
    return { protocol: protocol as PanelProtocolName, setId, pollSeconds, portHint: hint }
  }
}
