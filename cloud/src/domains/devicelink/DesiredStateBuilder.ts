// The one place that computes a screen's DesiredState (shared/src/mqtt README "desired"):
// its assignment (screens.content_kind/content_id, described by the content resolver),
// the resolved schedule when that assignment is a schedule, the casts that hold the
// screen (newest first, with expiresAt; paused ones stay listed, marked `paused`, because
// the emergency above them is what the device shows), the newest active emergency, the
// panel settings and the screen's timezone. Everything that affects a screen goes
// through here, so the device only ever needs the latest message.
//
// It builds for a batch of screens at once (buildMany): one query for the screens (with
// their panel columns), one for the casts holding them and one for the emergencies, per
// 500 screens; each content item's playability, availability per location, description
// and signed URLs are asked of the content resolver once per batch, not once per screen.
import type { Clock } from '../../platform/clock.js'
import type {
  ContentKind,
  DesiredCast,
  DesiredEmergency,
  DesiredState,
  EmergencyAlert,
  LibraryEntry,
  PanelSettings,
  PlayableContent,
} from '@svc/shared/mqtt/index'
import type { Schedule } from '@svc/shared/schedule/index'
import { PANEL_PROTOCOL_NAMES, type PanelProtocolName } from '@svc/shared/panels/index'
import type { ContentRef, ContentResolver, Playability } from '../content/index.js'
import { type DesiredScreenRow, PANEL_DEFAULT_POLL_SECONDS, PANEL_DEFAULT_SET_ID, type ScreenRecords } from '../screens/index.js'
import type { HeldCast, HeldEmergency, TakeoverRecords } from '../takeovers/index.js'
import type { OperatingHoursRecords } from '../hours/index.js'

/** Panel settings for a screen (tests plug their own in); null = no panel. Absent: the screen's panel columns. */
export type PanelSettingsSource = (workspaceId: string, screenId: string) => Promise<PanelSettings | null>

/** The panel profile stored on the screen row (as ScreenPanelService reads it). */
function panelOf(r: DesiredScreenRow): PanelSettings | null {
  if (!r.panel_protocol || !(PANEL_PROTOCOL_NAMES as readonly string[]).includes(r.panel_protocol)) return null
  return {
    protocol: r.panel_protocol as PanelProtocolName,
    setId: r.panel_set_id ?? PANEL_DEFAULT_SET_ID,
    pollSeconds: r.panel_poll_seconds ?? PANEL_DEFAULT_POLL_SECONDS,
  } as PanelSettings
}

/**
 * The content resolver's answers for one batch: each question is asked once per content
 * item (and location) however many screens of the batch need the answer.
 */
class BatchContent {
  private readonly memo = new Map<string, Promise<unknown>>()

  constructor(
    private readonly content: ContentResolver,
    private readonly workspaceId: string,
  ) {}

  private once<T>(key: string, f: () => Promise<T>): Promise<T> {
    let p = this.memo.get(key) as Promise<T> | undefined
    if (!p) {
      p = f()
      this.memo.set(key, p)
    }
    return p
  }

  async playable(kind: string, id: string): Promise<boolean> {
    const ref = { kind: kind as ContentKind, id }
    return (await this.once<Playability>(`p:${kind}:${id}`, () => this.content.playability(this.workspaceId, ref))).playable
  }

  availableAt(ref: ContentRef, nodeId: string | null): Promise<boolean> {
    return this.once(`a:${ref.kind}:${ref.id}:${nodeId ?? ''}`, () => this.content.isAvailableAt(this.workspaceId, ref, nodeId))
  }

  describe(ref: ContentRef): Promise<PlayableContent | null> {
    return this.once(`d:${ref.kind}:${ref.id}`, () => this.content.describeForDevice(this.workspaceId, ref))
  }

  schedule(id: string): Promise<{ schedule: Schedule; library: LibraryEntry[] } | null> {
    const resolve = this.content.resolveSchedule
    if (!resolve) return Promise.resolve(null)
    return this.once(`s:${id}`, () => resolve.call(this.content, this.workspaceId, id))
  }
}

export class DesiredStateBuilder {
  constructor(
    private readonly screens: Pick<ScreenRecords, 'forDesiredState'>,
    private readonly takeovers: Pick<TakeoverRecords, 'castsHolding' | 'emergenciesHolding'>,
    private readonly clock: Clock,
    private readonly content: ContentResolver,
    private readonly panel: PanelSettingsSource | null = null,
    /** Effective operating hours per screen; absent = none travel. */
    private readonly hours: Pick<OperatingHoursRecords, 'effective'> | null = null,
  ) {}

  /**
   * The full desired state of a screen, or null when the screen is not in the workspace.
   * `version` defaults to the last one stored (the publisher passes the next one).
   */
  async build(workspaceId: string, screenId: string, version?: number): Promise<DesiredState | null> {
    const states = await this.buildMany(workspaceId, [screenId], version === undefined ? undefined : new Map([[screenId, version]]))
    return states.get(screenId) ?? null
  }

  /**
   * The desired states of a batch of the workspace's screens (screens not in the workspace
   * are left out). `versions` gives each screen's version (default: the last one stored).
   */
  async buildMany(workspaceId: string, screenIds: readonly string[], versions?: ReadonlyMap<string, number>): Promise<Map<string, DesiredState>> {
    const out = new Map<string, DesiredState>()
    if (!screenIds.length) return out
    const [rows, castRows, emergencyRows] = await Promise.all([
      this.screens.forDesiredState(workspaceId, screenIds),
      this.takeovers.castsHolding(workspaceId, screenIds),
      this.takeovers.emergenciesHolding(workspaceId, screenIds),
    ])
    const castsOf = groupBy(castRows)
    const emergenciesOf = groupBy(emergencyRows)
    const hours = this.hours ? await this.hours.effective(workspaceId, rows) : null
    const content = new BatchContent(this.content, workspaceId)
    const generatedAt = this.clock.now().toISOString()
    await Promise.all(
      rows.map(async (screen) => {
        const state = await this.one(workspaceId, screen, castsOf.get(screen.id) ?? [], emergenciesOf.get(screen.id) ?? [], content, generatedAt)
        state.version = versions?.get(screen.id) ?? Number(screen.desired_version)
        const h = hours?.get(screen.id)
        if (h) state.operatingHours = h.hours
        out.set(screen.id, state)
      }),
    )
    return out
  }

  private async one(
    workspaceId: string,
    screen: DesiredScreenRow,
    castRows: HeldCast[],
    emergencyRows: HeldEmergency[],
    content: BatchContent,
    generatedAt: string,
  ): Promise<DesiredState> {
    let assignment: DesiredState['assignment'] = null
    let schedule: Schedule | null = null
    let library: LibraryEntry[] | undefined
    // Content that cannot play (recalled, processing, failed, emptied) is left out of the
    // state: an unplayable assignment becomes null (the screen plays nothing), unplayable
    // casts are skipped and the next playable emergency is the one sent. Recall and restore
    // republish every screen concerned (AssignmentService), so this is how they reach screens.
    // An assignment no longer shared to the screen's location (unshared, screen moved) is
    // left out the same way.
    if (screen.content_kind && screen.content_id) {
      const ref = { kind: screen.content_kind as ContentKind, id: screen.content_id }
      if ((await content.playable(ref.kind, ref.id)) && (await content.availableAt(ref, screen.node_id))) {
        const described = await content.describe(ref)
        assignment = { contentKind: ref.kind, contentId: ref.id, ...(described ? { content: described } : {}) }
        if (ref.kind === 'schedule') {
          const resolved = await content.schedule(ref.id)
          if (resolved) {
            schedule = resolved.schedule
            library = resolved.library
          }
        }
      }
    }

    let emergencyRow: HeldEmergency | undefined
    for (const r of emergencyRows) {
      // An emergency without content always shows (its message is all it has).
      if (r.content_kind === null || r.content_id === null || (await content.playable(r.content_kind, r.content_id))) {
        emergencyRow = r
        break
      }
    }
    let emergency: DesiredEmergency | null = null
    if (emergencyRow && (emergencyRow.content_kind === null || emergencyRow.content_id === null)) {
      // Message only. What an agent that predates `messageOnly` reads: a schedule takeover
      // with nothing to evaluate (it plays what runs beneath) shown as a banner, so the
      // warning still reaches the screen, in a band over the running content.
      emergency = {
        id: emergencyRow.id,
        contentKind: 'schedule',
        contentId: emergencyRow.id,
        ...(emergencyRow.message ? { message: emergencyRow.message } : {}),
        presentation: 'banner',
        ...(emergencyRow.alert ? { alert: JSON.parse(emergencyRow.alert) as EmergencyAlert } : {}),
        messageOnly: emergencyRow.presentation === 'banner' ? 'banner' : 'fullscreen',
        startedAt: emergencyRow.started_at,
      }
    } else if (emergencyRow) {
      const described = await this.describe(content, emergencyRow as HeldEmergency & { content_kind: string; content_id: string })
      emergency = {
        id: emergencyRow.id,
        contentKind: emergencyRow.content_kind as ContentKind,
        contentId: emergencyRow.content_id!,
        ...(described ? { content: described } : {}),
        ...(emergencyRow.message ? { message: emergencyRow.message } : {}),
        ...(emergencyRow.presentation === 'banner' ? { presentation: 'banner' as const } : {}),
        ...(emergencyRow.alert ? { alert: JSON.parse(emergencyRow.alert) as EmergencyAlert } : {}),
        startedAt: emergencyRow.started_at,
      }
    }

    const casts: DesiredCast[] = []
    for (const r of castRows) {
      if (!(await content.playable(r.content_kind, r.content_id))) continue
      const described = await this.describe(content, r)
      // `paused` is an additive field (objects are open): the device already ranks the
      // emergency above casts; it tells a reader why the cast is not on screen.
      casts.push({
        id: r.id,
        contentKind: r.content_kind as ContentKind,
        contentId: r.content_id,
        ...(described ? { content: described } : {}),
        triggeredAt: r.triggered_at,
        expiresAt: r.expires_at,
        ...(emergency ? { paused: true } : {}),
      } as DesiredCast)
    }

    return {
      version: Number(screen.desired_version),
      screenId: screen.id,
      timezone: screen.timezone,
      assignment,
      schedule,
      ...(library ? { library } : {}),
      casts,
      emergency,
      panel: this.panel ? await this.panel(workspaceId, screen.id) : panelOf(screen),
      generatedAt,
    }
  }

  private async describe(content: BatchContent, r: { content_kind: string; content_id: string; content_name: string | null }) {
    const d = await content.describe({ kind: r.content_kind as ContentKind, id: r.content_id })
    if (d) return d
    return r.content_name ? { name: r.content_name } : null
  }
}

function groupBy<T extends { screen_id: string }>(rows: T[]): Map<string, T[]> {
  const m = new Map<string, T[]>()
  for (const r of rows) {
    const list = m.get(r.screen_id)
    if (list) list.push(r)
    else m.set(r.screen_id, [r])
  }
  return m
}
