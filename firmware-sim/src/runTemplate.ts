/**
 * `run-template`: sends each command of a serial template (the API's JSON)
 * to an in-process simulated panel and reports bytes sent, the reply and what
 * the panel did. Installers use it to check a template before it reaches a
 * real screen; bytes come from the same shared encoder the cloud uses.
 */
import { RawReplyCollector, isPanelProtocolError, panelProtocols, type Framer, type PanelReply } from '@svc/shared/panels/index'
import { encodeCommand, hexPreview, isSerialEncodingError } from '@svc/shared/serial/index'
import type { Faults } from './faults.js'
import type { PanelChange } from './PanelModel.js'
import type { SimProtocol } from './personalities/Personality.js'
import type { PersonalityOptions } from './personalities/index.js'
import { SimulatedPanel } from './SimulatedPanel.js'

export interface TemplateItem {
  id: string
  name: string
  value: unknown
  encoding?: unknown
  eol?: unknown
}

export interface SerialTemplateLike {
  name: string
  items: TemplateItem[]
}

/** Reads a template from the API's JSON: the SerialTemplate object or `{data: SerialTemplate}`. */
export function parseTemplateJson(text: string): SerialTemplateLike {
  let doc: unknown
  try {
    doc = JSON.parse(text)
  } catch (err) {
    throw new TypeError(`template is not valid JSON: ${(err as Error).message}`)
  }
  if (isObject(doc) && isObject(doc.data) && !('items' in doc)) doc = doc.data
  if (!isObject(doc) || !Array.isArray(doc.items)) {
    throw new TypeError('template must be a SerialTemplate object with an "items" array, or {"data": SerialTemplate}')
  }
  const items = doc.items.map((raw: unknown, i: number): TemplateItem => {
    if (!isObject(raw)) throw new TypeError(`template item ${i + 1} is not an object`)
    const id = typeof raw.id === 'string' && raw.id ? raw.id : `#${i + 1}`
    return {
      id,
      name: typeof raw.name === 'string' ? raw.name : id,
      value: raw.value,
      encoding: raw.encoding,
      eol: raw.eol,
    }
  })
  return { name: typeof doc.name === 'string' ? doc.name : '(unnamed template)', items }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

export type CommandOutcome = 'ok' | 'nak' | 'timeout' | 'invalid' | 'failed'

export interface TemplateCommandResult {
  id: string
  name: string
  sentHex: string | null
  replyHex: string | null
  outcome: CommandOutcome
  /** Why, for anything but ok. */
  reason?: string
  reply?: PanelReply
  changes: { field: PanelChange['field']; from: unknown; to: unknown }[]
}

export interface RunTemplateOptions {
  protocol: SimProtocol
  template: SerialTemplateLike
  /** Only this item (by id, or by name when no id matches). */
  itemId?: string
  /** Panel set id (default 1). */
  id?: number
  faults?: Faults
  personalityOptions?: PersonalityOptions
  /** How long to wait for a reply. */
  timeoutMs?: number
  /** Raw protocol: a reply ends after this much silence. */
  rawSilenceMs?: number
}

export interface RunTemplateResult {
  template: string
  protocol: SimProtocol
  greeting: string | null
  results: TemplateCommandResult[]
  ok: boolean
}

export class UnknownItemError extends TypeError {}

export async function runTemplate(opts: RunTemplateOptions): Promise<RunTemplateResult> {
  let items = opts.template.items
  if (opts.itemId !== undefined) {
    const byId = items.filter((i) => i.id === opts.itemId)
    items = byId.length ? byId : items.filter((i) => i.name === opts.itemId)
    if (!items.length) throw new UnknownItemError(`no item with id or name "${opts.itemId}" in the template`)
  }
  const panel = new SimulatedPanel({
    protocol: opts.protocol,
    state: { id: opts.id ?? 1 },
    ...(opts.faults ? { faults: opts.faults } : {}),
    ...(opts.personalityOptions ? { personalityOptions: opts.personalityOptions } : {}),
  })
  const host = new HostSide(opts.protocol, opts.rawSilenceMs ?? 50)
  const session = panel.attach({ label: 'run-template', write: (b) => host.receive(b) })
  const timeoutMs = opts.timeoutMs ?? 1000
  let greeting: string | null = null
  if (opts.protocol === 'pjlink') {
    const g = await host.next(timeoutMs)
    greeting = g ? g.toString('latin1').trim() : null
  }
  const results: TemplateCommandResult[] = []
  try {
    for (const item of items) {
      const changes: TemplateCommandResult['changes'] = []
      const onState = (c: PanelChange) => changes.push({ field: c.field, from: c.from, to: c.to })
      panel.on('state', onState)
      try {
        results.push(await runOne(item, host, session, timeoutMs, opts.protocol, changes))
      } finally {
        panel.off('state', onState)
      }
    }
  } finally {
    session.close()
    panel.close()
    host.close()
  }
  return {
    template: opts.template.name,
    protocol: opts.protocol,
    greeting,
    results,
    ok: results.every((r) => r.outcome === 'ok'),
  }
}

async function runOne(
  item: TemplateItem,
  host: HostSide,
  session: { feed(b: Buffer): void; idle(): Promise<void> },
  timeoutMs: number,
  protocol: SimProtocol,
  changes: TemplateCommandResult['changes'],
): Promise<TemplateCommandResult> {
  const base = { id: item.id, name: item.name, changes }
  let bytes: Buffer
  try {
    bytes = encodeCommand(item)
  } catch (err) {
    if (!isSerialEncodingError(err)) throw err
    return { ...base, sentHex: null, replyHex: null, outcome: 'failed', reason: `invalid command: ${err.message}` }
  }
  host.reset()
  session.feed(bytes)
  const reply = await host.next(timeoutMs)
  await session.idle()
  const sentHex = hexPreview(bytes)
  if (!reply) return { ...base, sentHex, replyHex: null, outcome: 'timeout', reason: `no reply within ${timeoutMs} ms` }
  const replyHex = hexPreview(reply)
  if (protocol === 'raw') return { ...base, sentHex, replyHex, outcome: 'ok' }
  try {
    const parsed = panelProtocols[protocol].parseReply(reply)
    if (!parsed.ok) {
      return { ...base, sentHex, replyHex, outcome: 'nak', reason: `panel rejected the command (error ${String(parsed.errorCode)})`, reply: parsed }
    }
    return { ...base, sentHex, replyHex, outcome: 'ok', reply: parsed }
  } catch (err) {
    if (!isPanelProtocolError(err)) throw err
    return { ...base, sentHex, replyHex, outcome: 'invalid', reason: `${err.code}: ${err.message}` }
  }
}

/** The host end: frames replies with the protocol's reply framer, or by silence for raw. */
class HostSide {
  private readonly framer: Framer | null
  private readonly raw: RawReplyCollector | null
  private readonly frames: Buffer[] = []
  private waiter: ((b: Buffer | null) => void) | null = null
  private rawTimer: NodeJS.Timeout | null = null

  constructor(protocol: SimProtocol, rawSilenceMs: number) {
    this.framer = protocol === 'raw' ? null : panelProtocols[protocol].createReplyFramer()
    this.raw = protocol === 'raw' ? new RawReplyCollector({ kind: 'raw', silenceMs: rawSilenceMs, maxBytes: 4096 }) : null
  }

  receive(bytes: Buffer): void {
    if (this.framer) {
      for (const f of this.framer.push(bytes)) this.deliver(f)
      return
    }
    const full = this.raw!.push(bytes, Date.now())
    if (full) this.deliver(full)
    else this.armRaw()
  }

  next(timeoutMs: number): Promise<Buffer | null> {
    const ready = this.frames.shift()
    if (ready) return Promise.resolve(ready)
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiter = null
        resolve(null)
      }, timeoutMs)
      this.waiter = (b) => {
        clearTimeout(timer)
        this.waiter = null
        resolve(b)
      }
    })
  }

  reset(): void {
    this.frames.length = 0
    this.framer?.reset()
    this.raw?.reset()
  }

  close(): void {
    if (this.rawTimer) clearTimeout(this.rawTimer)
    this.waiter?.(null)
  }

  private deliver(frame: Buffer): void {
    if (this.waiter) this.waiter(frame)
    else this.frames.push(frame)
  }

  private armRaw(): void {
    if (this.rawTimer) clearTimeout(this.rawTimer)
    const deadline = this.raw!.deadline()
    if (deadline === null) return
    this.rawTimer = setTimeout(
      () => {
        this.rawTimer = null
        const f = this.raw!.poll(Date.now())
        if (f) this.deliver(f)
        else this.armRaw()
      },
      Math.max(0, deadline - Date.now()),
    )
  }
}

/** Human-readable report lines for one command. */
export function formatResult(r: TemplateCommandResult, index: number, total: number): string {
  const lines = [`[${index}/${total}] ${r.id} "${r.name}": ${r.outcome.toUpperCase()}`]
  lines.push(`  sent:  ${r.sentHex ?? '(nothing)'}`)
  lines.push(`  reply: ${r.replyHex ?? '(none)'}${r.reply ? `  ${describeReply(r.reply)}` : ''}`)
  if (r.reason) lines.push(`  why:   ${r.reason}`)
  lines.push(`  panel: ${r.changes.length ? r.changes.map((c) => `${c.field} ${String(c.from)} -> ${String(c.to)}`).join(', ') : 'no change'}`)
  return lines.join('\n')
}

function describeReply(r: PanelReply): string {
  const parts = [r.ok ? 'ack' : 'nak', r.kind]
  if (r.value !== undefined) parts.push(String(r.value))
  if (r.errorCode !== undefined) parts.push(`error ${String(r.errorCode)}`)
  return `(${parts.join(' ')})`
}
