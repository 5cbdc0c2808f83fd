// The one place that computes a screen's DesiredState (shared/src/mqtt README "desired"):
// its assignment (screens.content_kind/content_id, described by the content resolver),
// the resolved schedule when that assignment is a schedule, the casts that hold the
// screen (newest first, with expiresAt; paused ones stay listed, marked `paused`, because
// the emergency above them is what the device shows), the newest active emergency, the
// panel settings and the screen's timezone. Everything that affects a screen goes
// through here, so the device only ever needs the latest message.
import type { Database } from '../db/Database.js'
import type { Clock } from '../clock.js'
import type { ContentKind, DesiredCast, DesiredEmergency, DesiredState, LibraryEntry, PanelSettings } from '@svc/shared/mqtt/index'
import type { Schedule } from '@svc/shared/schedule/index'
import type { ContentResolver } from './ContentResolver.js'

/** Panel settings for a screen (the serial branch plugs in here); null = no panel. */
export type PanelSettingsSource = (workspaceId: string, screenId: string) => Promise<PanelSettings | null>

interface ScreenRow {
  id: string
  workspace_id: string
  node_id: string | null
  content_kind: string | null
  content_id: string | null
  timezone: string
  desired_version: number
}

interface TakeoverRow {
  id: string
  content_kind: string
  content_id: string
  content_name: string | null
  triggered_at: string
  expires_at: string | null
  message?: string | null
}

export class DesiredStateBuilder {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly content: ContentResolver,
    private readonly panel: PanelSettingsSource = async () => null,
  ) {}

  /**
   * The full desired state of a screen, or null when the screen is not in the workspace.
   * `version` defaults to the last one stored (the publisher passes the next one).
   */
  async build(workspaceId: string, screenId: string, version?: number): Promise<DesiredState | null> {
    const screen = await this.db.get<ScreenRow>(
      'SELECT id, workspace_id, node_id, content_kind, content_id, timezone, desired_version FROM screens WHERE id = ? AND workspace_id = ?',
      [screenId, workspaceId],
    )
    if (!screen) return null

    let assignment: DesiredState['assignment'] = null
    let schedule: Schedule | null = null
    let library: LibraryEntry[] | undefined
    // Content that cannot play (recalled, processing, failed, emptied) is left out of the
    // state: an unplayable assignment becomes null (the screen plays nothing), unplayable
    // casts are skipped and the next playable emergency is the one sent. Recall and restore
    // republish every screen concerned (AssignmentService), so this is how they reach screens.
    // An assignment no longer shared to the screen's location (unshared, screen moved) is
    // left out the same way.
    if (
      screen.content_kind &&
      screen.content_id &&
      (await this.playable(workspaceId, screen.content_kind, screen.content_id)) &&
      (await this.content.isAvailableAt(workspaceId, { kind: screen.content_kind as ContentKind, id: screen.content_id }, screen.node_id))
    ) {
      const ref = { kind: screen.content_kind as ContentKind, id: screen.content_id }
      const described = await this.content.describeForDevice(workspaceId, ref)
      assignment = { contentKind: ref.kind, contentId: ref.id, ...(described ? { content: described } : {}) }
      if (ref.kind === 'schedule' && this.content.resolveSchedule) {
        const resolved = await this.content.resolveSchedule(workspaceId, ref.id)
        if (resolved) {
          schedule = resolved.schedule
          library = resolved.library
        }
      }
    }

    const emergencyRows = await this.db.all<TakeoverRow & { started_at: string }>(
      `SELECT e.id, e.content_kind, e.content_id, e.content_name, e.message, e.started_at AS triggered_at, e.started_at, NULL AS expires_at
         FROM emergency_screens es JOIN emergencies e ON e.id = es.emergency_id
        WHERE es.screen_id = ? AND es.active = 1 AND e.status = 'active' AND e.workspace_id = ?
        ORDER BY e.started_at DESC, e.id DESC`,
      [screenId, workspaceId],
    )
    let emergencyRow: (TakeoverRow & { started_at: string }) | undefined
    for (const r of emergencyRows) {
      if (await this.playable(workspaceId, r.content_kind, r.content_id)) {
        emergencyRow = r
        break
      }
    }
    let emergency: DesiredEmergency | null = null
    if (emergencyRow) {
      const content = await this.describe(workspaceId, emergencyRow)
      emergency = {
        id: emergencyRow.id,
        contentKind: emergencyRow.content_kind as ContentKind,
        contentId: emergencyRow.content_id,
        ...(content ? { content } : {}),
        ...(emergencyRow.message ? { message: emergencyRow.message } : {}),
        startedAt: emergencyRow.started_at,
      }
    }

    const castRows = await this.db.all<TakeoverRow>(
      `SELECT c.id, c.content_kind, c.content_id, c.content_name, c.triggered_at, c.expires_at
         FROM cast_screens cs JOIN casts c ON c.id = cs.cast_id
        WHERE cs.screen_id = ? AND cs.state = 'active' AND c.status IN ('active', 'paused') AND c.workspace_id = ?
        ORDER BY c.triggered_at DESC, c.id DESC`,
      [screenId, workspaceId],
    )
    const casts: DesiredCast[] = []
    for (const r of castRows) {
      if (!(await this.playable(workspaceId, r.content_kind, r.content_id))) continue
      const content = await this.describe(workspaceId, r)
      // `paused` is an additive field (objects are open): the device already ranks the
      // emergency above casts; it tells a reader why the cast is not on screen.
      casts.push({
        id: r.id,
        contentKind: r.content_kind as ContentKind,
        contentId: r.content_id,
        ...(content ? { content } : {}),
        triggeredAt: r.triggered_at,
        expiresAt: r.expires_at,
        ...(emergency ? { paused: true } : {}),
      } as DesiredCast)
    }

    return {
      version: version ?? screen.desired_version,
      screenId,
      timezone: screen.timezone,
      assignment,
      schedule,
      ...(library ? { library } : {}),
      casts,
      emergency,
      panel: await this.panel(workspaceId, screenId),
      generatedAt: this.clock.now().toISOString(),
    }
  }

  private async playable(workspaceId: string, kind: string, id: string): Promise<boolean> {
    return (await this.content.playability(workspaceId, { kind: kind as ContentKind, id })).playable
  }

  private async describe(workspaceId: string, r: TakeoverRow) {
    const d = await this.content.describeForDevice(workspaceId, { kind: r.content_kind as ContentKind, id: r.content_id })
    if (d) return d
    return r.content_name ? { name: r.content_name } : null
  }
}
