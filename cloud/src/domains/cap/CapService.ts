// CAP feeds: Common Alerting Protocol 1.2 messages that start, update and clear emergencies.
// A feed is push (senders POST documents with a secret shown once, stored as its SHA-256 and
// compared in constant time) or pull (a CAP document or an Atom feed of them fetched through
// the outbound address checks every intervalSeconds, with ETag / Last-Modified).
//
// Alerts are keyed by (feed, sender, identifier): the first instance to insert that row
// handles the document, so each is handled once per cloud; a repeat changes nothing. An
// `Alert` starts an emergency on the feed's target, an `Update` replaces the message of the
// alert it references, a `Cancel` clears it (a Cancel for an alert not received yet is
// remembered, and the alert ignored when it arrives), and the latest `<expires>` clears it
// on the cloud's clock (CapWorker). The row holding an active emergency has holding = 1.
import type { Clock, IdGenerator, RandomSource } from '../../platform/clock.js'
import type { Database } from '../../platform/db/Database.js'
import type { Principal } from '../../platform/http/Principal.js'
import { ApiError, isApiError, notFound, validation } from '../../platform/errors.js'
import { type Page, type PageRequest, pageOf } from '../../platform/paging.js'
import { hashSecret, randomToken, secretMatches } from '../../platform/secrets.js'
import type { OutboundGuard } from '../../platform/net/OutboundGuard.js'
import type { NodeService } from '../nodes/index.js'
import type { TargetScope } from '../screens/index.js'
import type { EmergencyService, Presentation } from '../takeovers/index.js'
import type { ContentKind, EmergencyAlert } from '@svc/shared/mqtt/index'
import { CAP_SEVERITIES, CapFormatError, parseCap, parseFetched, type CapAlert, type CapInfo } from './capXml.js'
import { CapRepository, type CapAlertRow, type CapFeedRow } from './CapRepository.js'
import type { GeoMatcher } from './geo.js'
import { SAMPLE_SENDER, sampleAlertDoc, sampleCancelDoc, sampleScreen, sampleSource } from './sample.js'

export const CAP_MAX_BYTES = 1024 * 1024
/** How long an instance owns a document it claimed; past it, a row still `received` is handled again (the instance died). */
export const CAP_LEASE_MS = 60_000
export const FEED_MODES = ['push', 'pull'] as const
export const AREA_MATCHES = ['target', 'geo'] as const
export const ALERT_STATES = ['received', 'started', 'updated', 'cleared', 'expired', 'ignored'] as const
export type AlertState = (typeof ALERT_STATES)[number]

export interface Accept {
  status: string[]
  severity: string[]
  urgency: string[]
  certainty: string[]
  events: string[]
}

export interface PresentationBySeverity {
  fullscreen: string[]
  banner: string[]
}

export interface CapFeedInput {
  name?: string | undefined
  mode?: (typeof FEED_MODES)[number] | undefined
  url?: string | null | undefined
  intervalSeconds?: number | undefined
  accept?: Partial<Accept> | undefined
  target?: TargetScope | undefined
  /** Both or neither; null (on a change) removes the content: alerts show their message alone. */
  contentKind?: ContentKind | null | undefined
  contentId?: string | null | undefined
  areaMatch?: (typeof AREA_MATCHES)[number] | undefined
  presentation?: Partial<PresentationBySeverity> | undefined
  language?: string | undefined
}

export interface CapFeedView {
  id: string
  name: string
  mode: (typeof FEED_MODES)[number]
  url: string | null
  pushUrl: string | null
  intervalSeconds: number
  accept: Accept
  target: TargetScope
  contentKind: string | null
  contentId: string | null
  areaMatch: string
  presentation: PresentationBySeverity
  language: string
  lastFetchedAt: string | null
  lastError: string | null
  createdAt: string
  updatedAt: string
}

export interface CapAlertView {
  id: string
  identifier: string
  sender: string
  sent: string
  msgType: string
  status: string
  event: string | null
  severity: string | null
  urgency: string | null
  certainty: string | null
  headline: string | null
  expires: string | null
  state: AlertState
  reason: string | null
  emergencyId: string | null
  screensTargeted: number | null
  receivedAt: string
}

export interface PushAnswer {
  alertId: string
  state: AlertState
  emergencyId: string | null
}

/** What happened to a document: its log row's state and why, and the emergency it holds. */
interface Outcome {
  state: AlertState
  reason?: string
  emergencyId?: string
  screensTargeted?: number
  holding?: boolean
}

const DEFAULT_ACCEPT: Accept = { status: ['Actual'], severity: [], urgency: [], certainty: [], events: [] }
const DEFAULT_PRESENTATION: PresentationBySeverity = { fullscreen: ['Extreme', 'Severe'], banner: ['Moderate', 'Minor', 'Unknown'] }

const feedView = (r: CapFeedRow): CapFeedView => ({
  id: r.id,
  name: r.name,
  mode: r.mode === 'pull' ? 'pull' : 'push',
  url: r.url,
  pushUrl: r.mode === 'push' ? `/v1/cap-feeds/${r.id}/alerts` : null,
  intervalSeconds: r.interval_seconds,
  accept: JSON.parse(r.accept) as Accept,
  target: JSON.parse(r.target) as TargetScope,
  contentKind: r.content_kind,
  contentId: r.content_id,
  areaMatch: r.area_match,
  presentation: JSON.parse(r.presentation) as PresentationBySeverity,
  language: r.language,
  lastFetchedAt: r.last_fetched_at,
  lastError: r.last_error,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
})

const alertView = (r: CapAlertRow): CapAlertView => ({
  id: r.id,
  identifier: r.identifier,
  sender: r.sender,
  sent: r.sent,
  msgType: r.msg_type,
  status: r.status,
  event: r.event,
  severity: r.severity,
  urgency: r.urgency,
  certainty: r.certainty,
  headline: r.headline,
  expires: r.expires,
  state: r.state as AlertState,
  reason: r.reason,
  emergencyId: r.emergency_id,
  screensTargeted: r.screens_targeted,
  receivedAt: r.received_at,
})

/** The info block in the feed's language (`en` matches `en-US`), else the first. */
export function chooseInfo(alert: CapAlert, language: string): CapInfo | undefined {
  const want = language.toLowerCase()
  return alert.infos.find((i) => i.language.toLowerCase() === want || i.language.toLowerCase().startsWith(`${want}-`)) ?? alert.infos[0]
}

/** The message an emergency shows: headline, description, instruction on its own line, then who sent it and when. */
export function messageOf(alert: CapAlert, info: CapInfo, test: boolean): string {
  const lines = [
    `${test ? 'TEST: ' : ''}${info.headline ?? info.event}`,
    info.description,
    info.instruction,
    `${info.senderName ?? alert.sender} · ${alert.sent}`,
  ].filter((l): l is string => Boolean(l?.trim()))
  // The last line (sender and time) is kept whole: the description gives way first.
  const last = lines.pop()!
  return `${lines.join('\n').slice(0, 1000 - last.length - 1)}\n${last}`
}

/** The alert's text field by field, for the player's layout (each cut as the message would be). */
export function alertOf(alert: CapAlert, info: CapInfo, test: boolean): EmergencyAlert {
  const cut = (s: string | null | undefined, n: number) => (s?.trim() ? s.trim().slice(0, n) : undefined)
  const description = cut(info.description, 600)
  const instruction = cut(info.instruction, 400)
  return {
    severity: info.severity,
    headline: cut(info.headline, 200) ?? info.event.slice(0, 200),
    ...(description ? { description } : {}),
    ...(instruction ? { instruction } : {}),
    senderName: (info.senderName ?? alert.sender).slice(0, 200),
    sent: alert.sent,
    ...(test ? { test: true } : {}),
  }
}

/** The latest `<expires>` of the alert's info blocks (null when one has none: it lasts until cancelled). */
function expiresOf(alert: CapAlert): string | null {
  let latest: string | null = null
  for (const i of alert.infos) {
    if (i.expires === null) return null
    if (latest === null || i.expires > latest) latest = i.expires
  }
  return latest
}

function cleanList(values: string[] | undefined, field: string, allowed?: readonly string[]): string[] {
  const out = [...new Set((values ?? []).map((v) => v.trim()).filter(Boolean))]
  if (allowed) for (const v of out) if (!allowed.includes(v)) throw validation(`${field}: ${JSON.stringify(v)} is not one of ${allowed.join(', ')}.`)
  return out
}

export class CapService {
  private readonly repo: CapRepository

  constructor(
    db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly random: RandomSource | undefined,
    private readonly nodes: NodeService,
    private readonly emergencies: EmergencyService,
    private readonly outbound: OutboundGuard,
    private readonly geo: GeoMatcher,
  ) {
    this.repo = new CapRepository(db.kysely)
  }

  private async row(p: Principal, id: string): Promise<CapFeedRow> {
    const r = await this.repo.feed(p.workspaceId, id)
    if (!r || !(await this.nodes.reaches(p, r.node_id))) throw notFound('No such CAP feed.')
    return r
  }

  /** The principal a feed acts as: what its creator reached (its home node), every permission. */
  private principalOf(feed: CapFeedRow): Principal {
    return {
      actor: { kind: 'key', id: feed.id, name: `CAP feed ${feed.name}`, nodeId: feed.node_id },
      workspaceId: feed.workspace_id,
      grant: 'all',
      nodeId: feed.node_id,
    }
  }

  async list(p: Principal): Promise<CapFeedView[]> {
    return (await this.repo.feeds(p.workspaceId, await this.nodes.scopeIds(p))).map(feedView)
  }

  async get(p: Principal, id: string): Promise<CapFeedView> {
    return feedView(await this.row(p, id))
  }

  /** Checks and normalises a feed's fields; `was` is the stored feed on an update. */
  private async settings(p: Principal, input: CapFeedInput, was?: CapFeedRow) {
    const mode = input.mode ?? (was?.mode as 'push' | 'pull' | undefined) ?? 'push'
    if (was && mode !== was.mode) throw validation('mode cannot change; create another feed.')
    const url = input.url !== undefined ? input.url : (was?.url ?? null)
    if (mode === 'pull') {
      if (!url) throw validation('url: a pull feed needs the https address of a CAP document or an Atom feed.')
      try {
        this.outbound.check(url)
      } catch (err) {
        throw new ApiError('unsafe_url', `url: ${(err as Error).message}.`)
      }
    } else if (url) throw validation('url is only used with mode "pull".')
    const prevAccept = was ? (JSON.parse(was.accept) as Accept) : DEFAULT_ACCEPT
    const a = input.accept
    const accept: Accept = {
      status: a?.status !== undefined ? cleanList(a.status, 'accept.status', ['Actual', 'Exercise', 'Test', 'System', 'Draft']) : prevAccept.status,
      severity: a?.severity !== undefined ? cleanList(a.severity, 'accept.severity', CAP_SEVERITIES) : prevAccept.severity,
      urgency: a?.urgency !== undefined ? cleanList(a.urgency, 'accept.urgency', ['Immediate', 'Expected', 'Future', 'Past', 'Unknown']) : prevAccept.urgency,
      certainty:
        a?.certainty !== undefined
          ? cleanList(a.certainty, 'accept.certainty', ['Observed', 'Likely', 'Possible', 'Unlikely', 'Unknown'])
          : prevAccept.certainty,
      events: a?.events !== undefined ? cleanList(a.events, 'accept.events') : prevAccept.events,
    }
    if (!accept.status.length) throw validation('accept.status: name at least one status (e.g. "Actual").')
    const prevPresentation = was ? (JSON.parse(was.presentation) as PresentationBySeverity) : DEFAULT_PRESENTATION
    const presentation: PresentationBySeverity = {
      fullscreen:
        input.presentation?.fullscreen !== undefined
          ? cleanList(input.presentation.fullscreen, 'presentation.fullscreen', CAP_SEVERITIES)
          : prevPresentation.fullscreen,
      banner: input.presentation?.banner !== undefined ? cleanList(input.presentation.banner, 'presentation.banner', CAP_SEVERITIES) : prevPresentation.banner,
    }
    const both = presentation.fullscreen.filter((s) => presentation.banner.includes(s))
    if (both.length) throw validation(`presentation: ${both.join(', ')} is both full screen and banner.`)
    const target: TargetScope = input.target ?? (was ? (JSON.parse(was.target) as TargetScope) : { scopeKind: 'all' })
    const contentKind = input.contentKind !== undefined ? input.contentKind : ((was?.content_kind ?? null) as ContentKind | null)
    const contentId = input.contentId !== undefined ? input.contentId : (was?.content_id ?? null)
    if (!contentKind !== !contentId) throw validation('contentKind and contentId go together: name both, or neither for alerts that show their message alone.')
    // The target and the content are checked as an emergency would check them (a dry run);
    // without content the alert's message is what shows.
    await this.emergencies.plan(p, { ...target, ...this.contentOf({ content_kind: contentKind, content_id: contentId }), message: 'check' })
    return {
      mode,
      url: mode === 'pull' ? url : null,
      interval_seconds: input.intervalSeconds ?? was?.interval_seconds ?? 60,
      accept: JSON.stringify(accept),
      target: JSON.stringify(target),
      content_kind: contentKind,
      content_id: contentId,
      area_match: input.areaMatch ?? was?.area_match ?? 'target',
      presentation: JSON.stringify(presentation),
      language: input.language?.trim() || was?.language || 'en',
    }
  }

  async create(p: Principal, input: CapFeedInput): Promise<CapFeedView & { pushSecret?: string }> {
    const name = input.name?.trim()
    if (!name) throw validation('name is required.')
    const s = await this.settings(p, input)
    const now = this.clock.now().toISOString()
    const id = this.ids.next('capFeed')
    const secret = s.mode === 'push' ? `capk_${randomToken(40, this.random)}` : null
    await this.repo.insertFeed({
      id,
      workspace_id: p.workspaceId,
      // The feed acts with its creator's reach: a pinned credential's feed stays inside its location.
      node_id: p.nodeId,
      name: name.slice(0, 200),
      ...s,
      push_secret_hash: secret ? hashSecret(secret) : null,
      etag: null,
      last_modified: null,
      next_fetch_at: s.mode === 'pull' ? now : null,
      last_fetched_at: null,
      last_error: null,
      created_at: now,
      updated_at: now,
    })
    const v = feedView((await this.repo.feed(p.workspaceId, id))!)
    return secret ? { ...v, pushSecret: secret } : v
  }

  async update(p: Principal, id: string, input: CapFeedInput): Promise<CapFeedView> {
    const was = await this.row(p, id)
    const s = await this.settings(p, input, was)
    const name = input.name !== undefined ? input.name.trim() : was.name
    if (!name) throw validation('name must not be empty.')
    const urlChanged = s.url !== was.url
    await this.repo.updateFeed(id, {
      ...s,
      name: name.slice(0, 200),
      updated_at: this.clock.now().toISOString(),
      ...(urlChanged ? { etag: null, last_modified: null, next_fetch_at: this.clock.now().toISOString() } : {}),
    })
    return feedView((await this.repo.feed(p.workspaceId, id))!)
  }

  /**
   * Deletes the feed and clears the emergencies its alerts still hold: once the feed is gone
   * nothing its sender sends (an Update, a Cancel) can reach them and their expiry is no
   * longer watched, so they would stay on screen until someone cleared them by hand.
   * Answers how many it cleared.
   */
  async remove(p: Principal, id: string): Promise<{ emergenciesCleared: number }> {
    const feed = await this.row(p, id)
    await this.repo.deleteFeed(id)
    let emergenciesCleared = 0
    for (const held of await this.repo.holdingOfFeed(id)) {
      if (!held.emergency_id) continue
      if (await this.clearEmergency(feed, held.emergency_id)) emergenciesCleared++
      await this.repo.release(held.id, { reason: `${held.reason ? `${held.reason}; ` : ''}cleared: its feed was deleted`.slice(0, 500) })
    }
    return { emergenciesCleared }
  }

  async alerts(p: Principal, id: string, page: PageRequest): Promise<Page<CapAlertView>> {
    await this.row(p, id)
    const limit = page.limit ?? 100
    const rows = await this.repo.alerts(id, page.after, limit + 1)
    return pageOf(rows, { ...page, limit }, alertView)
  }

  // ---- samples ----

  /**
   * Sends a sample alert (CAP status Test) through the feed to one screen the caller reaches:
   * handled as a pushed document is, logged in the feed's alert log, shown marked as a test.
   */
  async sample(p: Principal, id: string, screenId: string): Promise<PushAnswer> {
    const feed = await this.row(p, id)
    // The caller must reach the screen (404 otherwise), checked as an emergency would be.
    await this.emergencies.plan(p, { scopeKind: 'screens', screenIds: [screenId], ...this.contentOf(feed), message: 'check' })
    const xml = sampleAlertDoc({
      identifier: this.ids.next('capAlert'),
      sent: this.clock.now(),
      language: feed.language,
      feedName: feed.name,
      screenName: `screen ${screenId}`,
    })
    return this.handle(feed, parseCap(xml), sampleSource(screenId))
  }

  /** Clears a sample the feed showed, by a CAP Cancel through the feed (logged as the sender's would be). */
  async clearSample(p: Principal, id: string, alertId: string): Promise<PushAnswer> {
    const feed = await this.row(p, id)
    const sample = await this.repo.alertById(alertId)
    const screenId = sampleScreen(sample?.source_url ?? null)
    if (!sample || sample.feed_id !== feed.id || sample.sender !== SAMPLE_SENDER || sample.msg_type !== 'Alert' || !screenId)
      throw notFound('No such sample alert on this feed.')
    const xml = sampleCancelDoc({
      identifier: this.ids.next('capAlert'),
      sent: this.clock.now(),
      cancels: { identifier: sample.identifier, sent: sample.sent },
    })
    return this.handle(feed, parseCap(xml), sampleSource(screenId))
  }

  // ---- receiving ----

  /** A pushed document: 401 unless the feed is a push feed and the secret matches. */
  /** `proven` hears the feed once its push secret holds (the audit log records the push as the feed's). */
  async push(
    feedId: string,
    secret: string | null,
    body: string,
    proven?: (feed: { id: string; workspaceId: string; name: string }) => void,
  ): Promise<PushAnswer> {
    const feed = await this.repo.feedById(feedId)
    // The same answer for an unknown feed and a wrong secret; the hash is compared in constant time.
    if (feed?.mode !== 'push' || !feed.push_secret_hash || !secret || !secretMatches(secret, feed.push_secret_hash)) {
      throw new ApiError('invalid_credentials', 'Unknown feed or wrong push secret.')
    }
    proven?.({ id: feed.id, workspaceId: feed.workspace_id, name: feed.name })
    if (Buffer.byteLength(body) > CAP_MAX_BYTES) throw new ApiError('too_large', 'A CAP document is at most 1 MiB.')
    let alert: CapAlert
    try {
      alert = parseCap(body)
    } catch (err) {
      if (err instanceof CapFormatError) throw validation(`Not a CAP 1.2 document: ${err.message}`)
      throw err
    }
    return this.handle(feed, alert, null)
  }

  /** Handles one document for the feed, once per cloud: a repeated (sender, identifier) answers what happened the first time. */
  async handle(feed: CapFeedRow, alert: CapAlert, sourceUrl: string | null): Promise<PushAnswer> {
    const info = chooseInfo(alert, feed.language)
    const id = this.ids.next('capAlert')
    const lease = this.leaseEnd()
    const claimed = await this.repo.claimAlert({
      id,
      feed_id: feed.id,
      workspace_id: feed.workspace_id,
      sender: alert.sender,
      identifier: alert.identifier,
      sent: alert.sent,
      status: alert.status,
      msg_type: alert.msgType,
      event: info?.event.slice(0, 200) ?? null,
      severity: info?.severity ?? null,
      urgency: info?.urgency ?? null,
      certainty: info?.certainty ?? null,
      headline: info?.headline?.slice(0, 500) ?? null,
      expires: expiresOf(alert),
      source_url: sourceUrl,
      state: 'received',
      reason: null,
      emergency_id: null,
      screens_targeted: null,
      received_at: this.clock.now().toISOString(),
      // Kept while it is handled: an instance that dies mid-handling leaves it for recoverStuck.
      document: JSON.stringify(alert),
      lease_until: lease,
    })
    if (!claimed) {
      const was = (await this.repo.alertByKey(feed.id, alert.sender, alert.identifier))!
      return { alertId: was.id, state: was.state as AlertState, emergencyId: was.emergency_id }
    }
    return this.finish(feed, id, lease, () => this.decide(feed, alert, info, id, sampleScreen(sourceUrl)))
  }

  private leaseEnd(): string {
    return new Date(this.clock.now().getTime() + CAP_LEASE_MS).toISOString()
  }

  /** Decides what a claimed document does and writes its outcome, if this instance still holds its lease. */
  private async finish(feed: CapFeedRow, id: string, lease: string, decide: () => Promise<Outcome>): Promise<PushAnswer> {
    const outcome: Outcome = await decide().catch((err: unknown) => ({
      state: 'ignored' as const,
      reason: `failed: ${isApiError(err) ? err.message : 'internal error'}`.slice(0, 500),
    }))
    const set = {
      state: outcome.state,
      reason: outcome.reason?.slice(0, 500) ?? null,
      emergency_id: outcome.emergencyId ?? null,
      screens_targeted: outcome.screensTargeted ?? null,
      document: null,
      lease_until: null,
    }
    if (await this.repo.finishAlert(id, lease, outcome.holding ? { ...set, holding: 1 } : set)) {
      return { alertId: id, state: outcome.state, emergencyId: outcome.emergencyId ?? null }
    }
    // Too slow: its lease ran out and another run handled the document. An emergency this run
    // started is a second one: cleared, so the alert shows once.
    if (outcome.state === 'started' && outcome.emergencyId) {
      const adopted = await this.repo.alertById(id)
      if (adopted?.emergency_id !== outcome.emergencyId) await this.clearEmergency(feed, outcome.emergencyId)
    }
    const now = (await this.repo.alertById(id))!
    return { alertId: id, state: now.state as AlertState, emergencyId: now.emergency_id }
  }

  /**
   * Handles again the documents left `received` past their lease (the instance handling them
   * died, or the cloud stopped mid-handling); answers how many. An emergency the interrupted
   * run had already started is adopted, not started twice; an Update that had taken the
   * emergency over writes its message again.
   */
  async recoverStuck(): Promise<number> {
    const now = this.clock.now().toISOString()
    let n = 0
    for (const row of await this.repo.stuck(now, 50)) {
      const lease = this.leaseEnd()
      if (!(await this.repo.renewLease(row.id, row.lease_until, lease))) continue
      n++
      const feed = await this.repo.feedById(row.feed_id)
      const alert = row.document ? (JSON.parse(row.document) as CapAlert) : null
      if (!feed || !alert) {
        await this.repo.finishAlert(row.id, lease, {
          state: 'ignored',
          reason: feed ? 'handling was interrupted' : 'its feed was deleted',
          document: null,
          lease_until: null,
        })
        continue
      }
      const info = chooseInfo(alert, feed.language)
      await this.finish(feed, row.id, lease, async (): Promise<Outcome> => {
        const started = await this.emergencies.activeFromCapAlert(feed.workspace_id, row.id)
        if (started)
          return {
            state: 'started',
            reason: 'recovered after an interrupted handling',
            emergencyId: started.id,
            screensTargeted: started.screenCount,
            holding: true,
          }
        if (row.holding && row.emergency_id && info && alert.msgType === 'Update') {
          const test = alert.status !== 'Actual'
          await this.emergencies.replaceMessage(
            feed.workspace_id,
            row.emergency_id,
            messageOf(alert, info, test),
            this.presentationOf(feed, info),
            alertOf(alert, info, test),
          )
          return { state: 'updated', reason: 'recovered after an interrupted handling', emergencyId: row.emergency_id, holding: true }
        }
        return this.decide(feed, alert, info, row.id, sampleScreen(row.source_url))
      })
    }
    return n
  }

  /** `sampleTo`: the screen a console sample goes to (it skips the feed's filters, target and area). */
  private async decide(feed: CapFeedRow, alert: CapAlert, info: CapInfo | undefined, alertId: string, sampleTo: string | null): Promise<Outcome> {
    const accept = JSON.parse(feed.accept) as Accept
    if (!sampleTo && !accept.status.includes(alert.status)) return { state: 'ignored', reason: `status ${alert.status} is not accepted by this feed` }
    if (alert.msgType === 'Ack' || alert.msgType === 'Error') return { state: 'ignored', reason: `${alert.msgType} messages show nothing` }
    if (alert.msgType === 'Cancel') return this.cancel(feed, alert, alertId)
    const test = alert.status !== 'Actual'
    if (!info) return { state: 'ignored', reason: 'no info block to show' }
    if (alert.msgType === 'Update') {
      for (const ref of alert.references) {
        const held = await this.repo.alertByKey(feed.id, ref.sender, ref.identifier)
        if (!held?.holding || !held.emergency_id) continue
        if (!(await this.repo.passHolding(held.id, alertId, held.emergency_id, expiresOf(alert)))) continue
        await this.emergencies.replaceMessage(
          feed.workspace_id,
          held.emergency_id,
          messageOf(alert, info, test),
          this.presentationOf(feed, info),
          alertOf(alert, info, test),
        )
        return { state: 'updated', reason: `replaces the message of ${ref.identifier}`, emergencyId: held.emergency_id, holding: true }
      }
      for (const ref of alert.references) {
        if (await this.repo.cancelled(feed.id, ref.sender, ref.identifier))
          return { state: 'ignored', reason: `the alert it updates (${ref.identifier}) was cancelled` }
        if (await this.repo.alertByKey(feed.id, ref.sender, ref.identifier))
          return { state: 'ignored', reason: `the alert it updates (${ref.identifier}) is no longer active` }
      }
      // An update of an alert never received stands for it: it starts the emergency.
    }
    const cancel = await this.repo.cancelled(feed.id, alert.sender, alert.identifier)
    if (cancel) return { state: 'ignored', reason: `cancelled before it arrived (by ${cancel.cancel_alert_id})` }
    const miss = sampleTo ? null : this.filtered(accept, info)
    if (miss) return { state: 'ignored', reason: miss }
    const expires = expiresOf(alert)
    if (expires !== null && expires <= this.clock.now().toISOString()) return { state: 'expired', reason: `expired on arrival (${expires})` }
    const p = this.principalOf(feed)
    let target = sampleTo ? ({ scopeKind: 'screens', screenIds: [sampleTo] } as TargetScope) : (JSON.parse(feed.target) as TargetScope)
    if (feed.area_match === 'geo' && !sampleTo) {
      const screenIds = await this.geo.inside(p, target, info.areas)
      if (!screenIds.length) return { state: 'ignored', reason: 'no target screen is inside the alert area', screensTargeted: 0 }
      target = { scopeKind: 'screens', screenIds }
    }
    try {
      const e = await this.emergencies.start(p, {
        ...target,
        ...this.contentOf(feed),
        message: messageOf(alert, info, test),
        presentation: this.presentationOf(feed, info),
        alert: alertOf(alert, info, test),
        source: { capFeedId: feed.id, alertId },
      })
      return {
        state: 'started',
        ...(sampleTo
          ? { reason: 'a sample sent from the console: shown marked as a test' }
          : test
            ? { reason: `${alert.status}: shown marked as a test` }
            : {}),
        emergencyId: e.id,
        screensTargeted: e.screenCount,
        holding: true,
      }
    } catch (err) {
      if (isApiError(err) && err.code === 'no_screens') return { state: 'ignored', reason: 'the target matched no screen', screensTargeted: 0 }
      throw err
    }
  }

  /** The content a feed's emergencies show beneath the message: none when it names none. */
  private contentOf(feed: Pick<CapFeedRow, 'content_kind' | 'content_id'>): { contentKind?: ContentKind; contentId?: string } {
    return feed.content_kind && feed.content_id ? { contentKind: feed.content_kind as ContentKind, contentId: feed.content_id } : {}
  }

  private presentationOf(feed: CapFeedRow, info: CapInfo): Presentation {
    const p = JSON.parse(feed.presentation) as PresentationBySeverity
    return p.banner.includes(info.severity) ? 'banner' : 'fullscreen'
  }

  private filtered(accept: Accept, info: CapInfo): string | null {
    if (accept.severity.length && !accept.severity.includes(info.severity)) return `severity ${info.severity} is not accepted by this feed`
    if (accept.urgency.length && !accept.urgency.includes(info.urgency)) return `urgency ${info.urgency} is not accepted by this feed`
    if (accept.certainty.length && !accept.certainty.includes(info.certainty)) return `certainty ${info.certainty} is not accepted by this feed`
    if (accept.events.length && !accept.events.some((e) => e.toLowerCase() === info.event.toLowerCase()))
      return `event ${JSON.stringify(info.event)} is not accepted by this feed`
    return null
  }

  private async cancel(feed: CapFeedRow, alert: CapAlert, alertId: string): Promise<Outcome> {
    let cleared: string | undefined
    for (const ref of alert.references) {
      const held = await this.repo.alertByKey(feed.id, ref.sender, ref.identifier)
      if (!held) {
        await this.repo.rememberCancel(feed.id, ref.sender, ref.identifier, alertId)
        continue
      }
      if (!held.holding || !held.emergency_id) continue
      // Cleared before the row lets go: a cancel interrupted between the two is redone whole.
      await this.clearEmergency(feed, held.emergency_id)
      if (await this.repo.release(held.id, {})) cleared = held.emergency_id
    }
    // An update's row holds the emergency after the alert it updated: cancel names the first alert.
    if (!cleared) {
      for (const ref of alert.references) {
        const holder = await this.holderOf(feed.id, ref.sender, ref.identifier)
        if (!holder?.emergency_id) continue
        await this.clearEmergency(feed, holder.emergency_id)
        if (await this.repo.release(holder.id, {})) cleared = holder.emergency_id
      }
    }
    if (cleared) return { state: 'cleared' as const, reason: 'cancelled by the sender', emergencyId: cleared }
    return { state: 'ignored' as const, reason: 'nothing active to cancel; an alert it names that arrives later is ignored' }
  }

  /** The row holding the emergency an alert started (itself, or an Update that took it over). */
  private async holderOf(feedId: string, sender: string, identifier: string): Promise<CapAlertRow | undefined> {
    const first = await this.repo.alertByKey(feedId, sender, identifier)
    if (!first?.emergency_id) return undefined
    return this.repo.holding(first.emergency_id)
  }

  /** Clears an emergency the feed started: true when it was still active. */
  private async clearEmergency(feed: CapFeedRow, emergencyId: string): Promise<boolean> {
    try {
      const v = await this.emergencies.clear(this.principalOf(feed), emergencyId)
      return v.status === 'cleared'
    } catch (err) {
      // Cleared by hand meanwhile, or out of the feed's reach: nothing left to clear.
      if (!isApiError(err)) throw err
      return false
    }
  }

  // ---- the worker's runs ----

  /** Clears the emergencies whose alerts' expiry has come (on the cloud's clock); answers how many. */
  async expireDue(): Promise<number> {
    const now = this.clock.now().toISOString()
    let n = 0
    for (const row of await this.repo.expired(now, 200)) {
      if (!(await this.repo.release(row.id, { state: 'expired', reason: `expired at ${row.expires}` }))) continue
      const feed = await this.repo.feedById(row.feed_id)
      if (feed && row.emergency_id) await this.clearEmergency(feed, row.emergency_id)
      n++
    }
    return n
  }

  /** Fetches the pull feeds that are due, each on one instance (the claim of its next fetch time). */
  async pullDue(log: { warn(obj: unknown, msg: string): void }): Promise<void> {
    const now = this.clock.now()
    for (const feed of await this.repo.due(now.toISOString(), 20)) {
      const next = new Date(now.getTime() + feed.interval_seconds * 1000).toISOString()
      if (!(await this.repo.claimFetch(feed.id, feed.next_fetch_at!, next))) continue
      try {
        const entryError = await this.fetchFeed(feed)
        await this.repo.updateFeed(feed.id, { last_fetched_at: this.clock.now().toISOString(), last_error: entryError })
      } catch (err) {
        const message = err instanceof CapFormatError ? `not CAP 1.2: ${err.message}` : (err as Error).message
        log.warn({ err, feedId: feed.id }, 'fetching a CAP feed failed')
        await this.repo.updateFeed(feed.id, { last_fetched_at: this.clock.now().toISOString(), last_error: message.slice(0, 500) })
      }
    }
  }

  /** Fetches and handles the feed's documents; answers the last entry's failure, if any. */
  private async fetchFeed(feed: CapFeedRow): Promise<string | null> {
    const headers: Record<string, string> = { accept: 'application/cap+xml, application/atom+xml, application/xml;q=0.9' }
    if (feed.etag) headers['if-none-match'] = feed.etag
    if (feed.last_modified) headers['if-modified-since'] = feed.last_modified
    const res = await this.outbound.request(feed.url!, { method: 'GET', headers, maxBytes: CAP_MAX_BYTES })
    if (res.status === 304) return null
    if (res.status !== 200) throw new Error(`the feed answered HTTP ${res.status}`)
    const fetched = parseFetched(res.body.toString('utf8'))
    const header = (name: string) => {
      const v = res.headers[name]
      return typeof v === 'string' ? v.slice(0, 500) : null
    }
    await this.repo.updateFeed(feed.id, { etag: header('etag'), last_modified: header('last-modified') })
    if (fetched.kind === 'cap') {
      await this.handle(feed, fetched.alert, null)
      return null
    }
    let failed: string | null = null
    for (const entry of fetched.entries) {
      if (entry.alert) {
        await this.handle(feed, entry.alert, null)
        continue
      }
      if (!entry.url || (await this.repo.seenUrl(feed.id, entry.url))) continue
      try {
        const doc = await this.outbound.request(entry.url, {
          method: 'GET',
          headers: { accept: 'application/cap+xml, application/xml' },
          maxBytes: CAP_MAX_BYTES,
        })
        if (doc.status !== 200) throw new Error(`${entry.url} answered HTTP ${doc.status}`)
        await this.handle(feed, parseCap(doc.body.toString('utf8')), entry.url)
      } catch (err) {
        failed = `${entry.url}: ${err instanceof CapFormatError ? `not CAP 1.2: ${err.message}` : (err as Error).message}`.slice(0, 500)
      }
    }
    return failed
  }
}
