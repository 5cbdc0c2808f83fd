// Serial templates: saved RS232 commands for one
// panel model, homed at a location. Command bytes come from the shared encoder, so the
// `hexPreview` shown here is exactly what a job built from the command sends.
//
// Decisions the API leaves open (docs/serial.md):
// - An item id on PATCH must name a command already in the template; an unknown id is a 422
//   (ids are issued by the service; guessing one would silently break saved buttons).
//   On POST there are no stored ids: a given id must look like `sti_…` and is kept, so a
//   template exported with GET can be re-created with the same item ids.
// - Command `name` and the template `model` are trimmed and cut to 120 characters like `name`.
// - Moving or creating at a location the credential does not reach is 403 forbidden
//   (the credential lacks `screen.edit` there); a node that is not in the workspace is 422
//   invalid_node.
import { normalizeEncoding, normalizeEol, tryEncodeCommand, type SerialEncoding, type SerialEol } from '@svc/shared/serial/index'
import { hasPrefix } from '@svc/shared'
import type { Clock, IdGenerator } from '../../platform/clock.js'
import type { Database } from '../../platform/db/Database.js'
import { ApiError, validation } from '../../platform/errors.js'
import type { Principal } from '../../platform/http/Principal.js'
import type { NodeService } from '../nodes/index.js'
import { SerialTemplateRepository } from './SerialRepository.js'
import type { SerialTemplatesTable } from './tables.js'
import type { Selectable } from 'kysely'

export const SERIAL_TEMPLATE_NAME_MAX = 120
export const SERIAL_TEMPLATE_MAX_ITEMS = 200

type TemplateRow = Selectable<SerialTemplatesTable>

interface StoredItem {
  id: string
  name: string
  value: string
  encoding: SerialEncoding
  eol: SerialEol
}

export interface SerialTemplateItemView extends StoredItem {
  hexPreview: string
}

export interface SerialTemplateView {
  id: string
  spaceId: string
  name: string
  model: string | null
  nodeId: string | null
  createdAt: string
  updatedAt: string
  items: SerialTemplateItemView[]
}

export interface SerialTemplateInput {
  name?: unknown
  model?: unknown
  nodeId?: unknown
  items?: unknown
}

/** A command resolved for sending. */
export interface ResolvedCommand {
  bytes: Buffer
  templateId: string
  itemId: string
}

function itemView(i: StoredItem): SerialTemplateItemView {
  const r = tryEncodeCommand(i)
  return { ...i, hexPreview: r.ok ? r.hexPreview : '' }
}

export class SerialTemplateService {
  private readonly repo: SerialTemplateRepository

  constructor(
    db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly nodes: NodeService,
  ) {
    this.repo = new SerialTemplateRepository(db.kysely)
  }

  private view(r: TemplateRow): SerialTemplateView {
    return {
      id: r.id,
      spaceId: r.workspace_id,
      name: r.name,
      model: r.model,
      nodeId: r.node_id,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
      items: (JSON.parse(r.items) as StoredItem[]).map(itemView),
    }
  }

  private async row(p: Principal, id: string): Promise<TemplateRow> {
    return this.nodes.findReachable<TemplateRow>(p, 'serial_templates', id, 'serial template')
  }

  /** Every template the credential reaches, oldest first; not paged. */
  async list(p: Principal): Promise<SerialTemplateView[]> {
    const rows = await this.repo.list(p.workspaceId, await this.nodes.scopeIds(p))
    return rows.map((r) => this.view(r))
  }

  async get(p: Principal, id: string): Promise<SerialTemplateView> {
    return this.view(await this.row(p, id))
  }

  async create(p: Principal, input: SerialTemplateInput): Promise<SerialTemplateView> {
    if (input.name === undefined || input.name === null) throw validation('name is required.')
    const name = cleanText(input.name, 'name')
    const model = cleanModel(input.model)
    const nodeId = await this.destination(p, input.nodeId)
    const items = this.checkItems(input.items ?? [], new Set())
    const now = this.clock.now().toISOString()
    const id = this.ids.next('serialTemplate')
    await this.repo.insert({ id, workspace_id: p.workspaceId, node_id: nodeId, name, model, items: JSON.stringify(items), created_at: now, updated_at: now })
    return this.get(p, id)
  }

  async update(p: Principal, id: string, input: SerialTemplateInput): Promise<SerialTemplateView> {
    const current = await this.row(p, id)
    const name = input.name !== undefined ? cleanText(input.name, 'name') : current.name
    const model = input.model !== undefined ? cleanModel(input.model) : current.model
    const nodeId = input.nodeId !== undefined ? await this.destination(p, input.nodeId) : current.node_id
    const stored = JSON.parse(current.items) as StoredItem[]
    const items = input.items !== undefined ? this.checkItems(input.items, new Set(stored.map((i) => i.id))) : stored
    await this.repo.update(p.workspaceId, id, { name, model, node_id: nodeId, items: JSON.stringify(items), updated_at: this.clock.now().toISOString() })
    return this.get(p, id)
  }

  async remove(p: Principal, id: string): Promise<{ ok: true }> {
    await this.row(p, id)
    await this.repo.delete(p.workspaceId, id)
    return { ok: true }
  }

  /** The bytes of one command, for queueing a job; 404 / 422 when the template or item is absent. */
  async resolve(p: Principal, templateId: string, itemId: string): Promise<ResolvedCommand> {
    const r = await this.repo.byId(p.workspaceId, templateId)
    if (!r || !(await this.nodes.reaches(p, r.node_id)))
      throw validation(`templateId ${JSON.stringify(templateId)} is not a serial template this credential reaches.`)
    const item = (JSON.parse(r.items) as StoredItem[]).find((i) => i.id === itemId)
    if (!item) throw validation(`itemId ${JSON.stringify(itemId)} is not a command of template ${templateId}.`)
    const enc = tryEncodeCommand(item)
    if (!enc.ok) throw validation(`command ${itemId} cannot be encoded: ${enc.error.message}`)
    return { bytes: enc.bytes, templateId, itemId }
  }

  /** Templates homed at a node block deleting it. */
  async countAtNode(workspaceId: string, nodeId: string): Promise<number> {
    return this.repo.countAtNode(workspaceId, nodeId)
  }

  /**
   * The home a request asks for. null / absent on create = the credential's own top. A node
   * of another workspace (or none) is 422 invalid_node; a node of this workspace outside the
   * credential's reach is 403: it does not hold `screen.edit` at that location.
   */
  private async destination(p: Principal, raw: unknown): Promise<string | null> {
    if (raw !== undefined && raw !== null && typeof raw !== 'string') throw validation('nodeId must be a string or null.')
    const nodeId = raw as string | null | undefined
    if (nodeId === undefined) return p.nodeId
    if (nodeId === null) {
      if (p.nodeId !== null) throw new ApiError('forbidden', 'Missing permission: screen.edit')
      return null
    }
    if (!(await this.nodes.exists(p.workspaceId, nodeId)))
      throw new ApiError('invalid_node', `nodeId ${JSON.stringify(nodeId)} is not a location in this workspace.`)
    if (!(await this.nodes.reaches(p, nodeId))) throw new ApiError('forbidden', 'Missing permission: screen.edit')
    return nodeId
  }

  /** Validates a whole items list; `known` holds the ids a PATCH may keep (empty on create). */
  private checkItems(raw: unknown, known: Set<string>): StoredItem[] {
    if (!Array.isArray(raw)) throw validation('items must be an array of commands.')
    if (raw.length > SERIAL_TEMPLATE_MAX_ITEMS) throw validation(`items has ${raw.length} commands; at most ${SERIAL_TEMPLATE_MAX_ITEMS} are allowed.`)
    const creating = known.size === 0
    const seen = new Set<string>()
    const out: StoredItem[] = []
    raw.forEach((it, n) => {
      const at = `items[${n}]`
      if (typeof it !== 'object' || it === null || Array.isArray(it)) throw validation(`${at} must be an object.`)
      const item = it as Record<string, unknown>
      let id: string
      if (item.id === undefined || item.id === null) id = this.ids.next('serialTemplateItem')
      else {
        if (typeof item.id !== 'string' || !hasPrefix(item.id, 'serialTemplateItem') || item.id.length > 100)
          throw validation(`${at}.id must be a command id (sti_…) or left out.`)
        if (seen.has(item.id)) throw validation(`${at}.id ${item.id} is a duplicate id; each command needs its own.`)
        if (!creating && !known.has(item.id)) throw validation(`${at}.id ${item.id} is not a command of this template; leave id out to add a command.`)
        id = item.id
      }
      seen.add(id)
      if (item.name === undefined || item.name === null || (typeof item.name === 'string' && item.name.trim() === ''))
        throw validation(`${at}: name is required.`)
      if (typeof item.name !== 'string') throw validation(`${at}.name must be a string.`)
      const name = item.name.trim().slice(0, SERIAL_TEMPLATE_NAME_MAX)
      if (item.value === undefined || item.value === null || item.value === '') throw validation(`${at} (${name}): value is required.`)
      if (typeof item.value !== 'string') throw validation(`${at} (${name}): value must be a string.`)
      const cmd = { value: item.value, encoding: normalizeEncoding(item.encoding), eol: normalizeEol(item.eol) }
      const enc = tryEncodeCommand(cmd)
      if (!enc.ok) {
        const e = enc.error
        const why = e.code === 'too_long' ? `value is too long: ${e.message}` : e.code === 'empty' ? `value yields no bytes: ${e.message}` : e.message
        throw validation(`${at} (${name}): ${why}.`)
      }
      out.push({ id, name, value: item.value, encoding: cmd.encoding, eol: cmd.eol })
    })
    return out
  }
}

function cleanText(raw: unknown, field: string): string {
  if (typeof raw !== 'string') throw validation(`${field} must be a string.`)
  const v = raw.trim()
  if (!v) throw validation(`${field} must not be empty.`)
  return v.slice(0, SERIAL_TEMPLATE_NAME_MAX)
}

function cleanModel(raw: unknown): string | null {
  if (raw === undefined || raw === null) return null
  if (typeof raw !== 'string') throw validation('model must be a string or null.')
  const v = raw.trim()
  return v ? v.slice(0, SERIAL_TEMPLATE_NAME_MAX) : null
}
