// Screens: the paired players of a workspace. Each has a home node (pinned credentials
// see only their subtree) and a device credential (stored as a hash) that the embedded
// broker checks when the screen's agent connects. Pairing itself is PairingService; every
// read and write of the rows is ScreenRepository.
import type { RawBuilder } from 'kysely'
import { Listeners } from '../../platform/hooks.js'
import type { Clock, IdGenerator } from '../../platform/clock.js'
import type { Database, Queryable } from '../../platform/db/Database.js'
import type { DataChanges } from '../../platform/db/changes.js'
import type { Principal } from '../../platform/http/Principal.js'
import { ApiError, notFound, validation } from '../../platform/errors.js'
import { basicCredentials, secretMatches } from '../../platform/secrets.js'
import { encodeCursor, type PageRequest } from '../../platform/paging.js'
import { PairingRepository } from './PairingRepository.js'
import { namePattern, ScreenRepository, type ScreenListFilter, type ScreenNames, type ScreenRecord } from './ScreenRepository.js'
import { cleanName, type NodeService } from '../nodes/index.js'
import { ScreenListCache } from './ScreenListCache.js'
import { parseReported, type Reported } from '@svc/shared/mqtt/index'
import { isValidTimeZone } from '@svc/shared/schedule/index'

/** A screen as lists show it (trimmed), plus the home `nodeId`. */
/** Whether a screen does what it was told: `unknown` while offline or before it reports. */
export const DRIFT_STATES = ['in_sync', 'drifting', 'unknown'] as const
export type DriftState = (typeof DRIFT_STATES)[number]
/** What drift compares: the content (applied version and what plays), the panel's power and input. */
export const DRIFT_FIELDS = ['content', 'panel.power', 'panel.input', 'agent.version'] as const
export type DriftField = (typeof DRIFT_FIELDS)[number]

export interface DriftItem {
  field: DriftField
  desired: unknown
  reported: unknown
  /** `panel.power` only: false when the player reports the panel not following its operating hours after its retries. */
  obeying?: boolean
  /** Since when it has differed. */
  since: string
}

export interface ScreenDrift {
  state: DriftState
  /** When the state last changed; null before the first judgement. */
  since: string | null
  items: DriftItem[]
}

/** A stored drift as the views show it. */
export function driftOf(r: Pick<ScreenRecord, 'drift_state' | 'drift_since' | 'drift_items'>): ScreenDrift {
  let items: DriftItem[] = []
  try {
    items = r.drift_items ? (JSON.parse(r.drift_items) as DriftItem[]) : []
  } catch {
    items = []
  }
  return { state: (DRIFT_STATES as readonly string[]).includes(r.drift_state) ? (r.drift_state as DriftState) : 'unknown', since: r.drift_since, items }
}

export interface ScreenListItem {
  id: string
  name: string
  status: string
  contentKind: string | null
  contentId: string | null
  lastSeenAt: string | null
  nodeId: string | null
  /** The agent's version, as its last report said; null before one that carries it. */
  agentVersion: string | null
  drift: ScreenDrift
}

export interface ScreenView extends ScreenListItem {
  model: string | null
  serialNumber: string | null
  timezone: string
  createdAt: string
  updatedAt: string
  /** The last desired-state version published to the screen (0 = none yet). */
  desiredVersion: number
  /** What the device last reported (playing, applied version, panel, storage); null before any. */
  reported: Reported | null
  reportedAt: string | null
}

/** What the broker needs to know about screens: the stored hash of a device secret. */
export interface DeviceDirectory {
  /** The hash of the screen's device secret; null when the screen is unknown or has none yet. */
  credentialHash(screenId: string): Promise<string | null>
}

/**
 * The screen whose device credential `authorization` is (HTTP Basic screenId:deviceSecret,
 * as agents send it on their uploads and downloads over HTTP), or null when the secret does
 * not match (an unknown screen too); without the header, 401 `missing_credentials`. The
 * caller then checks the screen may reach what it asks for (invalid_credentials otherwise).
 */
export async function deviceScreen(db: Database, authorization: string | undefined): Promise<string | null> {
  const cred = basicCredentials(authorization)
  if (!cred) throw new ApiError('missing_credentials', 'Send the device credential: Authorization: Basic base64(screenId:deviceSecret).')
  const hash = await screenDirectory(db).credentialHash(cred.user)
  return hash && secretMatches(cred.secret, hash) ? cred.user : null
}

/** The directory read straight from the database (the broker is built before the modules are wired). */
export function screenDirectory(db: Database): DeviceDirectory {
  // On the writer's connection, not Database.reads: measured in a restart with 5,000 devices
  // reconnecting at once, lookups beside the writes made the devices wait longer (3.6 s
  // from the new process answering until all held their state, against 5.5–5.8 s on the
  // read connection; docs/decisions.md "A read connection beside the writer").
  const repo = new ScreenRepository(db.kysely)
  // The lookups of one tick (the CONNECTs of a connect storm) are one query, and the ones
  // arriving while that query runs are the next one (one read in flight at a time, so the
  // batches grow with the load: a fleet reconnecting at once after a restart). Each connect
  // still reads the database, after its CONNECT arrived, so a deleted or re-paired screen's
  // secret stops working at once.
  type Waiter = { resolve(hash: string | null): void; reject(err: unknown): void }
  let batch: Map<string, Waiter[]> | null = null
  let reading = false
  const next = () => {
    const b = batch
    batch = null
    if (!b) return
    reading = true
    void repo
      .credentialHashes([...b.keys()])
      .then(
        (hashes) => {
          for (const [id, waiters] of b) for (const w of waiters) w.resolve(hashes.get(id) ?? null)
        },
        (err: unknown) => {
          for (const waiters of b.values()) for (const w of waiters) w.reject(err)
        },
      )
      .finally(() => {
        reading = false
        if (batch) setImmediate(next)
      })
  }
  return {
    credentialHash: (screenId) =>
      new Promise((resolve, reject) => {
        if (!batch) {
          batch = new Map<string, Waiter[]>()
          if (!reading) setImmediate(next)
        }
        const list = batch.get(screenId)
        if (list) list.push({ resolve, reject })
        else batch.set(screenId, [{ resolve, reject }])
      }),
  }
}

function storedReported(text: string): Reported | null {
  const r = parseReported(text)
  return r.ok ? r.value : null
}

const view = (r: ScreenRecord): ScreenView => ({
  id: r.id,
  name: r.name,
  status: r.status,
  contentKind: r.content_kind,
  contentId: r.content_id,
  lastSeenAt: r.last_seen_at,
  nodeId: r.node_id,
  agentVersion: r.agent_version,
  drift: driftOf(r),
  model: r.model,
  serialNumber: r.serial_number,
  timezone: r.timezone,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  desiredVersion: Number(r.desired_version),
  // Through the contract's parser again: a row written before reported was bounded shows
  // only the contract's fields, or nothing if it never met them.
  reported: r.reported ? storedReported(r.reported) : null,
  reportedAt: r.reported_at,
})

/** What GET /v1/screens may narrow the list to. */
export interface ScreenListQuery {
  drift?: string | undefined
  status?: string | undefined
  /** Text the name contains, any case. */
  q?: string | undefined
  /** A location: its subtree's screens. */
  nodeId?: string | undefined
  /** A condition on the screen row (tags, a group: the targeting domain builds it). */
  where?: RawBuilder<boolean> | undefined
}

export class ScreenService {
  private readonly repo: ScreenRepository
  /** The same on the read connection (Database.reads). */
  private readonly reads: ScreenRepository
  private readonly registrations: PairingRepository
  /** Pages of the list as answered, until a committed change makes them stale. */
  private readonly listPages: ScreenListCache

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly nodes: NodeService,
    /** Ends the screen's live MQTT connection, if any (called when the screen is deleted). */
    private readonly disconnectDevice: (screenId: string) => void = () => undefined,
    /** How long a list page is kept at most, ms (SVC_SCREEN_LIST_KEEP_MS); 0 = none. */
    listKeepMs = 0,
    /** Committed changes that make kept pages stale: this database's, or the whole cloud's. */
    changes: DataChanges = db.changes,
    /** Told when a screen's own settings change (paired, moved): its desired state is republished. */
    private readonly changeListeners: Listeners<(workspaceId: string, screenId: string) => void> = new Listeners(),
  ) {
    this.listPages = new ScreenListCache(clock, listKeepMs)
    changes.subscribe((c) => this.listPages.drop(c))
    this.repo = new ScreenRepository(db.kysely)
    this.reads = new ScreenRepository(db.reads)
    this.registrations = new PairingRepository(db.kysely)
  }

  changed(workspaceId: string, screenId: string): void {
    for (const l of this.changeListeners.all()) l(workspaceId, screenId)
  }

  private async row(p: Principal, id: string): Promise<ScreenRecord> {
    const r = await this.repo.byId(p.workspaceId, id)
    if (!r || !(await this.nodes.reaches(p, r.node_id))) throw notFound('No such screen.')
    return r
  }

  /**
   * Screens the credential reaches, by id ascending, as the answer's JSON text (the route
   * sends it as it is): the items are serialised by the database (ScreenRepository.listJson),
   * the envelope (`data`, `nextCursor` with a limit, `total` with count=1) here. Answers
   * are kept until a change makes them stale (ScreenListCache).
   */
  async listJson(p: Principal, page: PageRequest, q: ScreenListQuery = {}): Promise<string> {
    // A location narrows the reach to its subtree (422 invalid_node outside the credential's).
    const scopeIds = q.nodeId ? await this.nodes.subtree(p.workspaceId, (await this.nodes.resolveHome(p, q.nodeId))!) : await this.nodes.scopeIds(p)
    const text = q.q?.trim()
    const filter: ScreenListFilter = { drift: q.drift, status: q.status, search: text ? namePattern(text) : undefined, where: q.where }
    const key = `${p.workspaceId}|${scopeIds === null ? '*' : scopeIds.join(',')}|${page.after ?? ''}|${page.limit ?? ''}|${page.count ? 1 : 0}|${filter.drift ?? ''}|${filter.status ?? ''}|${filter.search ?? ''}`
    // A narrowed list is not kept: a change can bring a screen into it that none of its kept
    // items would name (a screen going offline joins `status=offline`).
    const narrowedList = filter.drift !== undefined || filter.status !== undefined || filter.search !== undefined || filter.where !== undefined
    const kept = narrowedList ? undefined : this.listPages.get(key)
    if (kept !== undefined) return kept
    const epoch = this.listPages.begin()
    // On the read connection: a page does not wait behind the device link's writes.
    const [r, total] = await Promise.all([
      this.reads.listJson(this.db.dialect, p.workspaceId, scopeIds, page, filter),
      page.count ? this.reads.count(p.workspaceId, scopeIds, filter) : undefined,
    ])
    let out = `{"data":${r.data}`
    if (page.limit !== null) out += `,"nextCursor":${r.more && r.count >= page.limit && r.lastId ? JSON.stringify(encodeCursor(r.lastId)) : 'null'}`
    if (page.count) out += `,"total":${total ?? r.count}`
    out += '}'
    if (!narrowedList) this.listPages.keep(epoch, key, p.workspaceId, r.ids, out)
    return out
  }

  /**
   * The workspace, name and location of the screen a device credential named, for the audit
   * log once the device's request succeeded (the credential was checked by its route).
   */
  async deviceOrigin(screenId: string): Promise<{ workspaceId: string; name: string; nodeId: string | null } | null> {
    const r = await this.repo.origin(screenId)
    return r ? { workspaceId: r.workspace_id, name: r.name, nodeId: r.node_id } : null
  }

  async get(p: Principal, id: string): Promise<ScreenView> {
    return view(await this.row(p, id))
  }

  /** A screen with the names beside its ids (what is assigned, what plays) and the thumbnail of what plays (GET /v1/screens/<id>). */
  async getNamed(p: Principal, id: string): Promise<ScreenView & ScreenNames> {
    const r = await this.row(p, id)
    return { ...view(r), ...(await this.repo.names(this.db.dialect, p.workspaceId, id)) }
  }

  /** Inserts a freshly paired screen (inside the pairing transaction); returns its id. */
  async insertPaired(
    tx: Queryable,
    input: { workspaceId: string; nodeId: string | null; name: string; model: string | null; serialNumber: string | null },
  ): Promise<string> {
    const id = this.ids.next('screen')
    const now = this.clock.now().toISOString()
    await this.repo.insert(
      {
        id,
        workspace_id: input.workspaceId,
        node_id: input.nodeId,
        name: cleanName(input.name),
        model: input.model,
        serial_number: input.serialNumber,
        created_at: now,
        updated_at: now,
      },
      tx.kysely,
    )
    return id
  }

  async update(p: Principal, id: string, input: { name?: string; nodeId?: string | null; timezone?: string }): Promise<ScreenView> {
    const current = await this.row(p, id)
    const name = input.name !== undefined ? cleanName(input.name) : current.name
    if (input.timezone !== undefined && !isValidTimeZone(input.timezone))
      throw validation(`timezone: unknown time zone ${JSON.stringify(input.timezone)}; use an IANA name such as "Europe/London".`)
    const timezone = input.timezone ?? current.timezone
    const nodeId = input.nodeId !== undefined ? await this.nodes.resolveHome(p, input.nodeId) : current.node_id
    await this.repo.rename(p.workspaceId, id, { name, node_id: nodeId, timezone, updated_at: this.clock.now().toISOString() })
    // A new home or zone changes what the device is told (content reach, schedules' local times).
    if (nodeId !== current.node_id || timezone !== current.timezone) this.changed(p.workspaceId, id)
    return this.get(p, id)
  }

  /** Deletes the screen; its device credential goes with it and a live MQTT connection is closed. */
  async remove(p: Principal, id: string): Promise<{ id: string; deleted: true }> {
    await this.row(p, id)
    await this.db.transaction(async (tx) => {
      await this.registrations.deleteForScreen(id, tx.kysely)
      await this.repo.delete(p.workspaceId, id, tx.kysely)
    })
    this.disconnectDevice(id)
    return { id, deleted: true }
  }

  /** Screens homed at a node block deleting it. */
  async countAtNode(workspaceId: string, nodeId: string): Promise<number> {
    return this.repo.countAtNode(workspaceId, nodeId)
  }

  /** Every screen of the workspace, wherever it is homed (the account's billable screens). */
  countInWorkspace(workspaceId: string): Promise<number> {
    return this.repo.count(workspaceId, null)
  }
}
