// Tags and group rules: what a tag may be, and a rule's grammar, checked from the request's
// JSON with errors that name the place (`rule.all[1].not: unknown field "foo"`).
//   rule := {all: [cond, …]} | {any: [cond, …]}
//   cond := {tag} | {tagPrefix} | {name} (a glob with `*`, any case) | {nodeId} (that
//           location and below) | {panelProtocol} | {agentVersion: {lt|lte|gt|gte: "x.y.z"}}
//           | {group: "grp_…"} | {not: cond} | rule
import { validation } from '../../platform/errors.js'
import { cleanTags } from '../screens/index.js'

// What a tag may be is the screens' (a tag is a screen's); the targeting domain selects by them.
export { cleanTags, MAX_TAGS_PER_SCREEN, TAG_PATTERN } from '../screens/index.js'
/** Conditions in one rule, nested ones included. */
export const MAX_RULE_CONDITIONS = 100
export const MAX_RULE_DEPTH = 8
export const VERSION_RE = /^[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}$/
export const VERSION_OPS = ['lt', 'lte', 'gt', 'gte'] as const
export type VersionOp = (typeof VERSION_OPS)[number]

export type Condition =
  | { tag: string }
  | { tagPrefix: string }
  | { name: string }
  | { nodeId: string }
  | { panelProtocol: string }
  | { agentVersion: Partial<Record<VersionOp, string>> }
  | { group: string }
  | { not: Condition }
  | Rule
export type Rule = { all: Condition[] } | { any: Condition[] }

const LEAVES = ['tag', 'tagPrefix', 'name', 'nodeId', 'panelProtocol', 'agentVersion', 'group', 'not', 'all', 'any'] as const

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** The rule in `value`, checked; 422 `validation_error` naming where it is wrong. */
export function parseRule(value: unknown, path = 'rule'): Rule {
  let count = 0
  const str = (v: unknown, at: string, max = 200): string => {
    if (typeof v !== 'string' || v.length < 1 || v.length > max) throw validation(`${at}: a string of 1 to ${max} characters.`)
    return v
  }
  const cond = (v: unknown, at: string, depth: number): Condition => {
    if (depth > MAX_RULE_DEPTH) throw validation(`${at}: rules nest at most ${MAX_RULE_DEPTH} deep.`)
    if (++count > MAX_RULE_CONDITIONS) throw validation(`${path}: at most ${MAX_RULE_CONDITIONS} conditions in a rule.`)
    if (!isObject(v)) throw validation(`${at}: a condition is an object with one field (${LEAVES.join(', ')}).`)
    const keys = Object.keys(v)
    const unknown = keys.find((k) => !(LEAVES as readonly string[]).includes(k))
    if (unknown !== undefined) throw validation(`${at}: unknown field ${JSON.stringify(unknown)}.`)
    if (keys.length !== 1) throw validation(`${at}: a condition has exactly one field (got ${keys.length}).`)
    const key = keys[0] as (typeof LEAVES)[number]
    const arg = v[key]
    switch (key) {
      case 'tag':
        return { tag: cleanTags([str(arg, `${at}.tag`, 64)], `${at}.tag`)[0]! }
      case 'tagPrefix': {
        const p = str(arg, `${at}.tagPrefix`, 64)
        if (!/^[A-Za-z0-9_.:/-]+$/.test(p)) throw validation(`${at}.tagPrefix: letters, digits and "-_.:/" only.`)
        return { tagPrefix: p.toLowerCase() }
      }
      case 'name':
        return { name: str(arg, `${at}.name`) }
      case 'nodeId':
        return { nodeId: str(arg, `${at}.nodeId`, 100) }
      case 'panelProtocol':
        return { panelProtocol: str(arg, `${at}.panelProtocol`, 100) }
      case 'group':
        return { group: str(arg, `${at}.group`, 100) }
      case 'agentVersion': {
        if (!isObject(arg) || !Object.keys(arg).length) throw validation(`${at}.agentVersion: an object with lt, lte, gt or gte.`)
        const out: Partial<Record<VersionOp, string>> = {}
        for (const [op, ver] of Object.entries(arg)) {
          if (!(VERSION_OPS as readonly string[]).includes(op)) throw validation(`${at}.agentVersion: unknown field ${JSON.stringify(op)} (lt, lte, gt, gte).`)
          if (typeof ver !== 'string' || !VERSION_RE.test(ver)) throw validation(`${at}.agentVersion.${op}: a version "x.y.z".`)
          out[op as VersionOp] = ver
        }
        return { agentVersion: out }
      }
      case 'not':
        return { not: cond(arg, `${at}.not`, depth + 1) }
      default:
        return list(key, arg, `${at}.${key}`, depth)
    }
  }
  const list = (key: 'all' | 'any', arg: unknown, at: string, depth: number): Rule => {
    if (!Array.isArray(arg) || !arg.length) throw validation(`${at}: a list of at least one condition.`)
    const items = arg.map((c, i) => cond(c, `${at}[${i}]`, depth + 1))
    return key === 'all' ? { all: items } : { any: items }
  }
  if (!isObject(value)) throw validation(`${path}: {all: [...]} or {any: [...]}.`)
  const keys = Object.keys(value)
  const unknown = keys.find((k) => k !== 'all' && k !== 'any')
  if (unknown !== undefined) throw validation(`${path}: unknown field ${JSON.stringify(unknown)} (a rule is {all: [...]} or {any: [...]}).`)
  if (keys.length !== 1) throw validation(`${path}: {all: [...]} or {any: [...]}, one of them.`)
  return list(keys[0] as 'all' | 'any', value[keys[0]!], `${path}.${keys[0]}`, 0)
}

/** Every `{group}` and `{nodeId}` a rule names (to resolve them before it becomes SQL). */
export function namesIn(rule: Condition, out: { groups: Set<string>; nodes: Set<string> } = { groups: new Set(), nodes: new Set() }) {
  if ('all' in rule) for (const c of rule.all) namesIn(c, out)
  else if ('any' in rule) for (const c of rule.any) namesIn(c, out)
  else if ('not' in rule) namesIn(rule.not, out)
  else if ('group' in rule) out.groups.add(rule.group)
  else if ('nodeId' in rule) out.nodes.add(rule.nodeId)
  return out
}

/** The `x.y.z` numbers a SQL version comparison reads from an agent version (null: none). */
export const AGENT_VERSION_PARTS = /^([0-9]{1,9})\.([0-9]{1,9})\.([0-9]{1,9})([^0-9]|$)/
