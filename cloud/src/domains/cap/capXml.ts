// Reading Common Alerting Protocol 1.2 documents (OASIS CAP 1.2) and Atom feeds of them.
// fast-xml-parser reads the XML with entity processing off; a document declaring a DTD or
// an entity is refused before it is parsed (no external entities, no entity expansion).
// Anything that is not CAP 1.2 is refused with a message naming the element.
import { XMLParser, XMLValidator } from 'fast-xml-parser'

export const CAP12_NS = 'urn:oasis:names:tc:emergency:cap:1.2'
const ATOM_NS = 'http://www.w3.org/2005/Atom'

export const CAP_STATUSES = ['Actual', 'Exercise', 'System', 'Test', 'Draft'] as const
export const CAP_MSG_TYPES = ['Alert', 'Update', 'Cancel', 'Ack', 'Error'] as const
export const CAP_SEVERITIES = ['Extreme', 'Severe', 'Moderate', 'Minor', 'Unknown'] as const
export const CAP_URGENCIES = ['Immediate', 'Expected', 'Future', 'Past', 'Unknown'] as const
export const CAP_CERTAINTIES = ['Observed', 'Likely', 'Possible', 'Unlikely', 'Unknown'] as const
const SCOPES = ['Public', 'Restricted', 'Private'] as const

export type CapStatus = (typeof CAP_STATUSES)[number]
export type CapMsgType = (typeof CAP_MSG_TYPES)[number]
export type CapSeverity = (typeof CAP_SEVERITIES)[number]

/** A circle: centre and radius in kilometres. */
export interface CapCircle {
  lat: number
  lon: number
  radiusKm: number
}

export interface CapArea {
  areaDesc: string
  /** Each polygon as [lat, lon] pairs (CAP order), closed. */
  polygons: [number, number][][]
  circles: CapCircle[]
  /** `valueName:value`, e.g. `SAME:006037`. */
  geocodes: string[]
}

export interface CapInfo {
  language: string
  event: string
  urgency: string
  severity: CapSeverity
  certainty: string
  senderName: string | null
  headline: string | null
  description: string | null
  instruction: string | null
  /** ISO 8601, UTC; null = no expiry. */
  expires: string | null
  areas: CapArea[]
}

export interface CapAlert {
  identifier: string
  sender: string
  /** ISO 8601 as sent (its own zone). */
  sent: string
  status: CapStatus
  msgType: CapMsgType
  /** `sender,identifier,sent` triples this message updates or cancels. */
  references: { sender: string; identifier: string; sent: string }[]
  infos: CapInfo[]
}

/** A document that is not CAP 1.2 (or not well-formed, or declares a DTD): `message` names the element. */
export class CapFormatError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'CapFormatError'
  }
}

const ARRAYS = new Set(['info', 'area', 'polygon', 'circle', 'geocode', 'parameter', 'resource', 'eventCode', 'category', 'responseType', 'entry', 'link'])

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  processEntities: false,
  htmlEntities: false,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  // Prefixed names (`cap:alert`) are read by their local name; the namespace is checked on the root.
  transformTagName: (name) => name.replace(/^[^:]+:/, ''),
  isArray: (name) => ARRAYS.has(name.replace(/^[^:]+:/, '')),
})

type Node = Record<string, unknown>

/** Parses XML safely: refuses DTDs and entity declarations, then anything not well-formed. */
function parseXml(text: string): Node {
  if (/<!DOCTYPE/i.test(text) || /<!ENTITY/i.test(text)) throw new CapFormatError('DOCTYPE: document type declarations (DTDs) and entities are not accepted.')
  const valid = XMLValidator.validate(text)
  if (valid !== true) throw new CapFormatError(`not well-formed XML (line ${valid.err.line}): ${valid.err.msg}`)
  return parser.parse(text) as Node
}

/** The root element's name and node, with the namespace it declares for itself. */
function root(doc: Node): { name: string; node: Node; ns: string | null } {
  const names = Object.keys(doc).filter((k) => !k.startsWith('@') && k !== '#text')
  if (names.length !== 1) throw new CapFormatError('alert: the document must have exactly one root element.')
  const name = names[0]!
  const node = doc[name]
  const n = (typeof node === 'object' && node !== null ? node : {}) as Node
  let ns: string | null = null
  for (const [k, v] of Object.entries(n)) if (k === '@xmlns' || k.startsWith('@xmlns:')) if (v === CAP12_NS || v === ATOM_NS) ns = v as string
  return { name, node: n, ns }
}

const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" }

/** XML's five predefined entities and character references, which the parser (entities off) leaves as written. */
function decode(v: string): string {
  return v.replace(/&(lt|gt|amp|quot|apos|#[0-9]{1,7}|#x[0-9a-fA-F]{1,6});/g, (m, e: string) => {
    if (e[0] !== '#') return PREDEFINED[e] ?? m
    const cp = e[1] === 'x' ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1))
    return cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : m
  })
}

function text(node: Node, name: string, path: string, required: true): string
function text(node: Node, name: string, path: string, required: false): string | null
function text(node: Node, name: string, path: string, required: boolean): string | null {
  const v = node[name]
  if (v === undefined || v === '') {
    if (required) throw new CapFormatError(`${path}/${name}: required by CAP 1.2 and missing.`)
    return null
  }
  if (typeof v === 'object') {
    if (v !== null && !Array.isArray(v) && typeof (v as Node)['#text'] === 'string') return decode((v as Node)['#text'] as string)
    throw new CapFormatError(`${path}/${name}: must be text.`)
  }
  return decode(String(v))
}

function oneOf<T extends string>(node: Node, name: string, path: string, values: readonly T[]): T {
  const v = text(node, name, path, true)
  if (!(values as readonly string[]).includes(v))
    throw new CapFormatError(`${path}/${name}: ${JSON.stringify(v.slice(0, 40))} is not one of ${values.join(', ')}.`)
  return v as T
}

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?([+-]\d{2}:\d{2}|Z)$/

function dateTime(node: Node, name: string, path: string, required: boolean): string | null {
  const v = required ? text(node, name, path, true) : text(node, name, path, false)
  if (v === null) return null
  if (!DATE_TIME.test(v) || Number.isNaN(Date.parse(v)))
    throw new CapFormatError(`${path}/${name}: ${JSON.stringify(v.slice(0, 40))} is not a CAP date-time (e.g. 2026-12-02T10:00:00-05:00).`)
  return v
}

function list(node: Node, name: string): Node[] {
  const v = node[name]
  if (v === undefined) return []
  return (Array.isArray(v) ? v : [v]).map((x) => (typeof x === 'object' && x !== null ? (x as Node) : ({ '#text': String(x) } as Node)))
}

function pointPair(raw: string, path: string): [number, number] {
  const [a, b, ...rest] = raw.split(',')
  const lat = Number(a)
  const lon = Number(b)
  if (rest.length || !Number.isFinite(lat) || !Number.isFinite(lon) || Math.abs(lat) > 90 || Math.abs(lon) > 180)
    throw new CapFormatError(`${path}: ${JSON.stringify(raw.slice(0, 40))} is not a WGS 84 "lat,lon" pair.`)
  return [lat, lon]
}

function area(node: Node, path: string): CapArea {
  const areaDesc = text(node, 'areaDesc', path, true)
  const polygons = list(node, 'polygon').map((p, i) => {
    const at = `${path}/polygon[${i + 1}]`
    const points = String(p['#text'] ?? '')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map((pair) => pointPair(pair, at))
    const first = points[0]
    const last = points[points.length - 1]
    if (points.length < 4 || !first || !last || first[0] !== last[0] || first[1] !== last[1])
      throw new CapFormatError(`${at}: a polygon needs at least four points, the first and last the same.`)
    return points
  })
  const circles = list(node, 'circle').map((c, i) => {
    const at = `${path}/circle[${i + 1}]`
    const m = /^(\S+)\s+(\S+)$/.exec(String(c['#text'] ?? '').trim())
    const radiusKm = Number(m?.[2])
    if (!m || !Number.isFinite(radiusKm) || radiusKm < 0) throw new CapFormatError(`${at}: a circle is "lat,lon radius" with the radius in kilometres.`)
    const [lat, lon] = pointPair(m[1]!, at)
    return { lat, lon, radiusKm }
  })
  const geocodes = list(node, 'geocode').map((g, i) => {
    const at = `${path}/geocode[${i + 1}]`
    return `${text(g, 'valueName', at, true)}:${text(g, 'value', at, true)}`
  })
  return { areaDesc, polygons, circles, geocodes }
}

function info(node: Node, path: string): CapInfo {
  if (!list(node, 'category').length) throw new CapFormatError(`${path}/category: required by CAP 1.2 and missing.`)
  const expires = dateTime(node, 'expires', path, false)
  return {
    language: text(node, 'language', path, false) ?? 'en-US',
    event: text(node, 'event', path, true),
    urgency: oneOf(node, 'urgency', path, CAP_URGENCIES),
    severity: oneOf(node, 'severity', path, CAP_SEVERITIES),
    certainty: oneOf(node, 'certainty', path, CAP_CERTAINTIES),
    senderName: text(node, 'senderName', path, false),
    headline: text(node, 'headline', path, false),
    description: text(node, 'description', path, false),
    instruction: text(node, 'instruction', path, false),
    expires: expires === null ? null : new Date(expires).toISOString(),
    areas: list(node, 'area').map((a, i) => area(a, `${path}/area[${i + 1}]`)),
  }
}

function alertOf(node: Node): CapAlert {
  const path = 'alert'
  const msgType = oneOf(node, 'msgType', path, CAP_MSG_TYPES)
  oneOf(node, 'scope', path, SCOPES)
  const references = (text(node, 'references', path, false) ?? '')
    .split(/\s+/)
    .filter(Boolean)
    .map((triple) => {
      const [sender, identifier, sent] = triple.split(',')
      if (!sender || !identifier || !sent) throw new CapFormatError(`alert/references: ${JSON.stringify(triple.slice(0, 60))} is not "sender,identifier,sent".`)
      return { sender, identifier, sent }
    })
  if ((msgType === 'Update' || msgType === 'Cancel') && !references.length)
    throw new CapFormatError(`alert/references: an ${msgType} must name the alert(s) it ${msgType === 'Update' ? 'updates' : 'cancels'}.`)
  const infos = list(node, 'info').map((x, i) => info(x, `alert/info[${i + 1}]`))
  if (msgType === 'Alert' && !infos.length) throw new CapFormatError('alert/info: an Alert needs at least one info block to show.')
  const identifier = text(node, 'identifier', path, true)
  const sender = text(node, 'sender', path, true)
  if (/[\s,<&]/.test(identifier) || /[\s,<&]/.test(sender))
    throw new CapFormatError('alert/identifier: identifier and sender must not contain spaces, commas, < or &.')
  return {
    identifier: identifier.slice(0, 200),
    sender: sender.slice(0, 200),
    sent: dateTime(node, 'sent', path, true)!,
    status: oneOf(node, 'status', path, CAP_STATUSES),
    msgType,
    references,
    infos,
  }
}

/** One CAP 1.2 document; throws CapFormatError naming the element otherwise. */
export function parseCap(xml: string): CapAlert {
  const r = root(parseXml(xml))
  if (r.name !== 'alert') throw new CapFormatError(`${r.name}: the root element must be a CAP 1.2 <alert>.`)
  if (r.ns !== CAP12_NS) throw new CapFormatError(`alert: the namespace must be ${CAP12_NS} (CAP 1.2).`)
  return alertOf(r.node)
}

/** What a pull URL served: one CAP document, or an Atom feed's entries (the CAP documents they link, or carry inline). */
export type Fetched = { kind: 'cap'; alert: CapAlert } | { kind: 'atom'; entries: { url: string | null; alert: CapAlert | null }[] }

export function parseFetched(xml: string): Fetched {
  const r = root(parseXml(xml))
  if (r.name === 'alert') return { kind: 'cap', alert: parseCap(xml) }
  if (r.name !== 'feed' || r.ns !== ATOM_NS) throw new CapFormatError(`${r.name}: expected a CAP 1.2 <alert> or an Atom <feed> of CAP entries.`)
  return {
    kind: 'atom',
    entries: list(r.node, 'entry').map((e) => {
      // An entry carrying the alert inline (<content type="application/cap+xml"><alert …>).
      const content = e.content as Node | undefined
      if (content && typeof content === 'object' && content.alert) return { url: null, alert: alertOf(content.alert as Node) }
      const links = list(e, 'link')
      const cap = links.find((l) => l['@type'] === 'application/cap+xml') ?? links.find((l) => (l['@rel'] ?? 'alternate') === 'alternate') ?? links[0]
      const href = (cap?.['@href'] as string | undefined) ?? (typeof e.id === 'string' && e.id.startsWith('https://') ? e.id : null)
      return { url: href ?? null, alert: null }
    }),
  }
}
