// The test oracle for group rules: the same grammar evaluated in memory over plain screen
// objects. The cloud resolves rules in SQL only; this exists to check it.
import type { Condition } from '../../src/domains/targeting/rules.js'

export interface OracleScreen {
  id: string
  name: string
  nodeId: string | null
  tags: string[]
  panelProtocol: string | null
  agentVersion: string | null
}

export interface OracleWorld {
  /** Parent of each node (null for a top-level one). */
  parents: Map<string, string | null>
  groups: Map<string, { kind: 'static'; screenIds: string[] } | { kind: 'dynamic'; rule: Condition }>
}

const asciiLower = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase())

function within(world: OracleWorld, nodeId: string | null, ancestor: string): boolean {
  for (let n = nodeId; n !== null; n = world.parents.get(n) ?? null) if (n === ancestor) return true
  return false
}

function globMatches(glob: string, name: string): boolean {
  const re = new RegExp(
    `^${asciiLower(glob)
      .split('*')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
    's',
  )
  return re.test(asciiLower(name))
}

function versionOf(v: string | null): [number, number, number] | null {
  const m = v === null ? null : /^([0-9]{1,9})\.([0-9]{1,9})\.([0-9]{1,9})([^0-9]|$)/.exec(v)
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null
}

function compare(a: [number, number, number], b: [number, number, number]): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! - b[i]!
  return 0
}

export function matches(world: OracleWorld, s: OracleScreen, c: Condition): boolean {
  if ('all' in c) return c.all.every((x) => matches(world, s, x))
  if ('any' in c) return c.any.some((x) => matches(world, s, x))
  if ('not' in c) return !matches(world, s, c.not)
  if ('tag' in c) return s.tags.includes(c.tag.toLowerCase())
  if ('tagPrefix' in c) return s.tags.some((t) => t.startsWith(c.tagPrefix.toLowerCase()))
  if ('name' in c) return globMatches(c.name, s.name)
  if ('nodeId' in c) return within(world, s.nodeId, c.nodeId)
  if ('panelProtocol' in c) return s.panelProtocol === c.panelProtocol
  if ('agentVersion' in c) {
    const v = versionOf(s.agentVersion)
    if (!v) return false
    return Object.entries(c.agentVersion).every(([op, ver]) => {
      const d = compare(v, versionOf(ver!)!)
      return op === 'lt' ? d < 0 : op === 'lte' ? d <= 0 : op === 'gt' ? d > 0 : d >= 0
    })
  }
  const g = world.groups.get(c.group)
  if (!g) return false
  return g.kind === 'static' ? g.screenIds.includes(s.id) : matches(world, s, g.rule)
}
