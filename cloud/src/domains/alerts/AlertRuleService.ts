// Alert rules (/v1/alert-rules): what to watch (trigger codes, scope, thresholds) and whom
// to tell (channels, recipients, chat URLs). Webhook and chat URLs are credentials: kept
// whole in the database, masked in every answer (domains/alerts/masking.ts), checked with the
// outbound guard. Each rule has its own signing secret for its webhook recipients, shown
// once at creation like a webhook endpoint's.
import { Type, type Static } from '@sinclair/typebox'
import type { Clock, IdGenerator, RandomSource } from '../../platform/clock.js'
import type { Database } from '../../platform/db/Database.js'
import type { AlertRuleRow } from './tables.js'
import { AlertRepository } from './AlertRepository.js'
import { ApiError, notFound, validation } from '../../platform/errors.js'
import type { Principal } from '../../platform/http/Principal.js'
import { pageOf, type Page, type PageRequest } from '../../platform/paging.js'
import { Nullable, StringEnum, Timestamp } from '../../platform/contract.js'
import { isUnsafeUrlError, type OutboundGuard } from '../../platform/net/OutboundGuard.js'
import type { NodeService } from '../nodes/index.js'
import type { ScreenService } from '../screens/index.js'
import type { GroupService } from '../targeting/index.js'
import { newSigningSecret } from '../webhooks/index.js'
import { isMasked, isUrlLike, maskUrl, unmask } from './masking.js'

export const ALERT_CODES = ['connection-lost', 'display-off', 'storage-critical', 'play-log-limited', 'drift', 'panel-not-obeying'] as const
export type AlertCode = (typeof ALERT_CODES)[number]
export const SCOPE_KINDS = ['workspace', 'org_unit', 'location', 'screen_group', 'screen', 'group'] as const
export const CHANNELS = ['in-app', 'email', 'webhook', 'chat'] as const
export const SEVERITIES = ['info', 'warning', 'critical'] as const
export const DEFAULT_SEVERITY: Record<AlertCode, (typeof SEVERITIES)[number]> = {
  'connection-lost': 'critical',
  'display-off': 'warning',
  'storage-critical': 'warning',
  'play-log-limited': 'warning',
  drift: 'warning',
  'panel-not-obeying': 'warning',
}
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export interface AlertRuleConfig {
  codes: AlertCode[]
  severity: string
  scopeKind: (typeof SCOPE_KINDS)[number]
  scopeId: string
  thresholds: Record<string, unknown>
  channels: string[]
  recipients: string[]
  chatUrls: string[]
  [k: string]: unknown
}

export type { AlertRuleRow }

/** A rule's config as the API answers it (URLs masked); open to keys a trigger adds. */
export const AlertRuleConfigSchema = Type.Object(
  {
    codes: Type.Array(StringEnum(ALERT_CODES)),
    severity: Type.String(),
    scopeKind: StringEnum(SCOPE_KINDS),
    scopeId: Type.String(),
    thresholds: Type.Object({}, { additionalProperties: true }),
    channels: Type.Array(Type.String()),
    recipients: Type.Array(Type.String({ description: 'E-mail addresses, `role:` tokens, webhook URLs (masked).' })),
    chatUrls: Type.Array(Type.String({ description: 'Masked.' })),
  },
  { additionalProperties: true },
)
const RuleFields = {
  id: Type.String(),
  spaceId: Type.String(),
  name: Type.String(),
  trigger: StringEnum(ALERT_CODES),
  config: AlertRuleConfigSchema,
  enabled: Type.Boolean(),
  nodeId: Nullable(Type.String()),
  webhookSecretPreview: Type.String({ description: "First 8 characters of the secret that signs this rule's webhook notifications." }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  deletedAt: Nullable(Timestamp),
}
/** A rule as the API answers it: the routes' response schema, and AlertRuleView is derived from it. */
export const AlertRule = Type.Object(RuleFields)
export type AlertRuleView = Static<typeof AlertRule>
/** The create answer: the rule with its webhook secret, shown only there. */
export const CreatedRule = Type.Object({
  ...RuleFields,
  webhookSecret: Type.String({ description: 'Signing secret for webhook recipients, 64 hex characters; shown only here.' }),
})

export interface AlertRuleInput {
  name?: string
  trigger?: string
  config?: Record<string, unknown>
  enabled?: boolean
  nodeId?: string | null
}

export function parseConfig(r: Pick<AlertRuleRow, 'config'>): AlertRuleConfig {
  return JSON.parse(r.config) as AlertRuleConfig
}

function maskConfig(c: AlertRuleConfig): AlertRuleConfig {
  return { ...c, recipients: c.recipients.map((v) => (isUrlLike(v) ? maskUrl(v) : v)), chatUrls: c.chatUrls.map(maskUrl) }
}

export function ruleView(r: AlertRuleRow): AlertRuleView {
  return {
    id: r.id,
    spaceId: r.workspace_id,
    name: r.name,
    trigger: r.trigger_code as AlertCode,
    config: maskConfig(parseConfig(r)),
    enabled: r.enabled === 1,
    nodeId: r.node_id,
    webhookSecretPreview: r.webhook_secret.slice(0, 8),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    deletedAt: r.deleted_at,
  }
}

const strings = (v: unknown, field: string): string[] => {
  if (v === undefined || v === null) return []
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw validation(`config.${field} must be an array of strings.`)
  return (v as string[]).map((s) => s.trim()).filter(Boolean)
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** RFC 7396 merge of `patch` into `target` (both left untouched). A non-object patch replaces. */
export function mergePatch(target: Record<string, unknown>, patch: unknown): Record<string, unknown> {
  if (!isPlainObject(patch)) return patch as Record<string, unknown>
  const out: Record<string, unknown> = { ...target }
  for (const [k, v] of Object.entries(patch)) {
    if (k === '__proto__') continue
    if (v === null) delete out[k]
    else if (isPlainObject(v)) out[k] = mergePatch(isPlainObject(out[k]) ? (out[k] as Record<string, unknown>) : {}, v)
    else out[k] = v
  }
  return out
}

export class AlertRuleService {
  readonly repo: AlertRepository

  constructor(
    db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly nodes: NodeService,
    private readonly screens: ScreenService,
    private readonly groups: Pick<GroupService, 'memberCondition'>,
    private readonly outbound: OutboundGuard,
    private readonly random?: RandomSource,
  ) {
    this.repo = new AlertRepository(db.kysely)
  }

  private checkUrl(raw: string, field: string): string {
    try {
      return this.outbound.check(raw).toString()
    } catch (e) {
      if (isUnsafeUrlError(e)) throw new ApiError('unsafe_url', `config.${field}: ${raw.slice(0, 60)} is not a public https address: ${(e as Error).message}.`)
      throw e
    }
  }

  /** A URL list entry: a masked value must match a stored URL (kept); a full URL is checked. */
  private resolveUrl(v: string, field: string, stored: string[]): string {
    if (isMasked(v)) {
      const s = unmask(v, stored)
      if (!s) throw validation(`config.${field}: a masked URL must be sent back exactly as it was received; send the full URL to replace it.`)
      return s
    }
    return this.checkUrl(v, field)
  }

  private async validate(
    p: Principal,
    input: { trigger?: string | undefined; config: Record<string, unknown> },
    stored: AlertRuleConfig | null,
  ): Promise<{ trigger: AlertCode; config: AlertRuleConfig }> {
    const c = input.config
    if (!c || typeof c !== 'object' || Array.isArray(c)) throw validation('config must be an object.')
    const codes = strings(c.codes, 'codes')
    if (!codes.length) throw validation('config.codes must name at least one trigger code.')
    const unknown = codes.find((x) => !(ALERT_CODES as readonly string[]).includes(x))
    if (unknown) throw validation(`config.codes: unknown trigger code ${JSON.stringify(unknown)}; known: ${ALERT_CODES.join(', ')}.`)
    const trigger = (input.trigger ?? codes[0]) as AlertCode
    if (trigger !== codes[0]) throw validation('trigger must equal the first entry of config.codes.')
    const severity = c.severity === undefined ? DEFAULT_SEVERITY[trigger] : c.severity
    if (typeof severity !== 'string' || !(SEVERITIES as readonly string[]).includes(severity))
      throw validation(`config.severity must be one of ${SEVERITIES.join(', ')}.`)
    const scopeKind = (c.scopeKind ?? 'workspace') as AlertRuleConfig['scopeKind']
    if (!(SCOPE_KINDS as readonly string[]).includes(scopeKind)) throw validation(`config.scopeKind must be one of ${SCOPE_KINDS.join(', ')}.`)
    let scopeId = c.scopeId
    if (scopeKind === 'workspace') scopeId = p.workspaceId
    else if (typeof scopeId !== 'string' || !scopeId) throw validation('config.scopeId is required for this scopeKind.')
    else if (scopeKind === 'group') {
      // A group of this workspace the credential sees (422 naming the field otherwise, whichever workspace it is in).
      await this.groups.memberCondition(p, scopeId, 'config.scopeId')
    } else if (scopeKind !== 'screen') {
      const node = await this.nodes.get(p, scopeId).catch(() => null)
      if (!node || node.kind !== scopeKind)
        throw new ApiError('invalid_node', `config.scopeId ${JSON.stringify(scopeId)} is not a ${scopeKind} in this workspace.`)
    } else if (stored?.scopeKind !== 'screen' || stored.scopeId !== scopeId) {
      // A screen of this workspace the credential reaches (a rule kept on a screen deleted
      // since stays editable: only a new screen scope is checked).
      const screen = await this.screens.get(p, scopeId).catch(() => null)
      if (!screen) throw validation(`config.scopeId ${JSON.stringify(scopeId)} is not a screen in this workspace.`)
    }
    const thresholds = c.thresholds === undefined ? {} : c.thresholds
    if (!thresholds || typeof thresholds !== 'object' || Array.isArray(thresholds)) throw validation('config.thresholds must be an object.')
    for (const k of ['minutes', 'percent'] as const) {
      const v = (thresholds as Record<string, unknown>)[k]
      if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v < 0)) throw validation(`config.thresholds.${k} must be a number >= 0.`)
    }
    const channels = strings(c.channels ?? ['in-app'], 'channels')
    const badChannel = channels.find((x) => !(CHANNELS as readonly string[]).includes(x))
    if (badChannel) throw validation(`config.channels: unknown channel ${JSON.stringify(badChannel)}; known: ${CHANNELS.join(', ')}.`)
    const storedUrls = stored ? [...stored.recipients.filter(isUrlLike), ...stored.chatUrls] : []
    const recipients = strings(c.recipients, 'recipients').map((r) => {
      if (isMasked(r) || isUrlLike(r)) return this.resolveUrl(r, 'recipients', storedUrls)
      if (/^role:[a-z_-]+$/i.test(r)) return r.toLowerCase()
      if (EMAIL.test(r)) return r.toLowerCase()
      throw validation(`config.recipients: ${JSON.stringify(r.slice(0, 60))} is not an e-mail address, a role: token or an https URL.`)
    })
    const chatUrls = strings(c.chatUrls, 'chatUrls').map((u) => this.resolveUrl(u, 'chatUrls', storedUrls))
    return {
      trigger,
      config: {
        ...c,
        codes: [...new Set(codes)] as AlertCode[],
        severity,
        scopeKind,
        scopeId: scopeId as string,
        thresholds: thresholds as Record<string, unknown>,
        channels: [...new Set(channels)],
        recipients,
        chatUrls,
      },
    }
  }

  async row(p: Principal, id: string): Promise<AlertRuleRow> {
    const r = await this.repo.rule(p.workspaceId, id, await this.nodes.scopeIds(p))
    if (!r) throw notFound('No such alert rule.')
    return r
  }

  async get(p: Principal, id: string): Promise<AlertRuleView> {
    return ruleView(await this.row(p, id))
  }

  async list(p: Principal, page: PageRequest, search?: string): Promise<Page<AlertRuleView>> {
    const scopeIds = await this.nodes.scopeIds(p)
    const total = page.count ? await this.repo.countRules(p.workspaceId, scopeIds, search) : undefined
    const rows = await this.repo.rules(p.workspaceId, scopeIds, search, page)
    return pageOf(rows, page, ruleView, total)
  }

  async create(p: Principal, input: AlertRuleInput): Promise<AlertRuleView & { webhookSecret: string }> {
    const name = (input.name ?? '').trim()
    if (!name) throw validation('name is required.')
    if (!input.config) throw validation('config is required.')
    const { trigger, config } = await this.validate(p, { trigger: input.trigger, config: input.config }, null)
    const nodeId = await this.nodes.resolveHome(p, input.nodeId)
    const id = this.ids.next('alertRule')
    const now = this.clock.now().toISOString()
    const secret = newSigningSecret(this.random)
    await this.repo.insertRule({
      id,
      workspace_id: p.workspaceId,
      name: name.slice(0, 200),
      trigger_code: trigger,
      config: JSON.stringify(config),
      scope_id: config.scopeId,
      webhook_secret: secret,
      enabled: input.enabled === false ? 0 : 1,
      node_id: nodeId,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    })
    return { ...(await this.get(p, id)), webhookSecret: secret }
  }

  async update(p: Principal, id: string, input: AlertRuleInput): Promise<AlertRuleView> {
    const cur = await this.row(p, id)
    const stored = parseConfig(cur)
    let name = cur.name
    if (input.name !== undefined) {
      name = input.name.trim().slice(0, 200)
      if (!name) throw validation('name must not be empty.')
    }
    let trigger = cur.trigger_code
    let config = stored
    if (input.config !== undefined || input.trigger !== undefined) {
      // A PATCH merges into the stored config (JSON merge patch: objects such as thresholds
      // merge key by key, null removes a key, arrays replace); untouched keys pass through.
      const base = { ...stored, recipients: ruleView(cur).config.recipients, chatUrls: ruleView(cur).config.chatUrls } as Record<string, unknown>
      const v = await this.validate(p, { trigger: input.trigger, config: input.config === undefined ? base : mergePatch(base, input.config) }, stored)
      trigger = v.trigger
      config = v.config
    }
    const nodeId = input.nodeId !== undefined ? await this.nodes.resolveHome(p, input.nodeId) : cur.node_id
    const enabled = input.enabled === undefined ? cur.enabled : input.enabled ? 1 : 0
    const now = this.clock.now().toISOString()
    await this.repo.updateRule(id, {
      name,
      trigger_code: trigger,
      config: JSON.stringify(config),
      scope_id: config.scopeId,
      enabled,
      node_id: nodeId,
      updated_at: now,
    })
    if (enabled === 0) await this.closeOpenEvents(id, 'rule switched off')
    return this.get(p, id)
  }

  async remove(p: Principal, id: string): Promise<{ id: string; deleted: true }> {
    await this.row(p, id)
    const now = this.clock.now().toISOString()
    await this.repo.deleteRule(id, now)
    await this.closeOpenEvents(id, 'rule deleted')
    return { id, deleted: true }
  }

  /** Open events of a rule that stops watching are closed and kept as history. */
  private async closeOpenEvents(ruleId: string, why: string): Promise<void> {
    const now = this.clock.now().toISOString()
    await this.repo.closeRuleEvents(ruleId, now, JSON.stringify({ kind: 'outage-history', reason: why }))
  }

  /** Live rules homed at the node or scoped to it. */
  countAtNode(workspaceId: string, nodeId: string): Promise<number> {
    return this.repo.countAtNode(workspaceId, nodeId)
  }

  /** Active rules of a workspace watching `code` (the evaluator filters by scope). */
  async activeFor(workspaceId: string, code: AlertCode): Promise<AlertRuleRow[]> {
    const rows = await this.repo.activeRules(workspaceId)
    return rows.filter((r) => parseConfig(r).codes.includes(code))
  }
}
