// Property: for random screens (tags, names, locations, panel protocols, agent versions) and
// random rules, the members the cloud resolves in SQL are the ones the in-memory oracle
// (ruleOracle.ts) picks, on both engines. The seed is printed; SVC_RULE_SEED replays one.
import t from 'tap'
import { servicesOf } from '../../src/app.js'
import type { Condition, Rule } from '../../src/domains/targeting/rules.js'
import { forEngines } from '../db/engines.js'
import { screenRow } from '../fixtures/screenRows.js'
import { matches, type OracleScreen, type OracleWorld } from './ruleOracle.js'
import { seededRandom } from '@svc/shared/testing'

const AT = '2026-06-01T12:00:00.000Z'
const SCREENS = 80
const RULES = 60

/** Seeded helpers over mulberry32, so a failure can be replayed. */
function seeded(seed: number) {
  const next = seededRandom(seed)
  const int = (n: number) => Math.floor(next() * n)
  const pick = <T>(list: readonly T[]): T => list[int(list.length)]!
  return { next, int, pick }
}

const TAGS = ['kiosk', 'format:kiosk', 'format:menu', 'floor:1', 'floor:2', 'floor:10', 'panel:samsung', 'panel:lg', 'a_b', 'a-b', 'x.y/z']
const NAMES = ['Lobby 1', 'lobby 2', 'Front_Door', 'Front%Door', 'back office', 'Till 10', 'TILL 1', 'Menu*Board', 'a\\b', 'Café']
const GLOBS = ['lobby*', '*1', '*_*', '*%*', 'front*door', '*', 'till 1', 't*1*', 'a\\b', '*board', 'caf*', '*\\*']
const VERSIONS = [null, '1.2.3', '1.10.0', '1.2.10', '2.0.0', '0.9.12', '1.2.3-beta.1', '10.0.1', '1.2', 'garbage', '1.2.3.4', '01.2.3', '1.2.1234567890']
const PROTOCOLS = [null, 'samsung-mdc', 'lg-sicp']
const BOUNDS = ['1.2.3', '1.10.0', '0.0.0', '2.0.0', '1.2.10']

forEngines(t, (t, build) => {
  t.test('SQL members equal the oracle for random screens and rules', async (t) => {
    const seed = Number(process.env.SVC_RULE_SEED ?? Math.floor(Math.random() * 2 ** 31))
    t.comment(`seed ${seed}`)
    const r = seeded(seed)
    const h = await build(t)
    const { apiKey, workspaceId } = await h.workspace()
    const db = servicesOf(h.app).db.kysely

    // A small location tree.
    const parents = new Map<string, string | null>()
    const nodes: string[] = []
    for (let i = 0; i < 7; i++) {
      const parentId = nodes.length && r.next() < 0.6 ? r.pick(nodes) : null
      const res = await h.req('POST', '/v1/nodes', apiKey, { name: `N${i}`, kind: 'location', parentId })
      const id = res.json().data.id as string
      parents.set(id, parentId)
      nodes.push(id)
    }

    const screens: OracleScreen[] = []
    for (let i = 0; i < SCREENS; i++) {
      const tags = [...new Set(Array.from({ length: r.int(4) }, () => r.pick(TAGS)))]
      screens.push({
        id: `scr_${String(i).padStart(3, '0')}`,
        name: r.pick(NAMES),
        nodeId: r.next() < 0.2 ? null : r.pick(nodes),
        tags,
        panelProtocol: r.pick(PROTOCOLS),
        agentVersion: r.pick(VERSIONS),
      })
    }
    await db
      .insertInto('screens')
      .values(
        screens.map((s) =>
          screenRow(s.id, workspaceId, AT, { name: s.name, node_id: s.nodeId, panel_protocol: s.panelProtocol, agent_version: s.agentVersion }),
        ),
      )
      .execute()
    const tagRows = screens.flatMap((s) => s.tags.map((tag) => ({ screen_id: s.id, workspace_id: workspaceId, tag })))
    if (tagRows.length) await db.insertInto('screen_tags').values(tagRows).execute()

    const world: OracleWorld = { parents, groups: new Map() }
    const groupIds: string[] = []
    for (let i = 0; i < 2; i++) {
      const screenIds = screens.filter(() => r.next() < 0.3).map((s) => s.id)
      const g = (await h.req('POST', '/v1/groups', apiKey, { name: `S${i}`, kind: 'static', screenIds })).json().data.id as string
      world.groups.set(g, { kind: 'static', screenIds })
      groupIds.push(g)
    }

    const cond = (depth: number): Condition => {
      const kinds = depth < 3 ? 10 : 7
      switch (r.int(kinds)) {
        case 0:
          return { tag: r.pick(TAGS).toUpperCase() }
        case 1:
          return { tagPrefix: r.pick(['floor:', 'format:', 'f', 'a', 'panel:s', 'x.y/']) }
        case 2:
          return { name: r.pick(GLOBS) }
        case 3:
          return { nodeId: r.pick(nodes) }
        case 4:
          return { panelProtocol: r.pick(PROTOCOLS.filter((p) => p !== null)) as string }
        case 5: {
          const ops = (['lt', 'lte', 'gt', 'gte'] as const).filter(() => r.next() < 0.4)
          const chosen = ops.length ? ops : [r.pick(['lt', 'lte', 'gt', 'gte'] as const)]
          return { agentVersion: Object.fromEntries(chosen.map((op) => [op, r.pick(BOUNDS)])) }
        }
        case 6:
          return groupIds.length ? { group: r.pick(groupIds) } : { tag: 'kiosk' }
        case 7:
          return { not: cond(depth + 1) }
        default:
          return rule(depth + 1)
      }
    }
    const rule = (depth: number): Rule => {
      const items = Array.from({ length: 1 + r.int(3) }, () => cond(depth))
      return r.next() < 0.5 ? { all: items } : { any: items }
    }

    for (let i = 0; i < RULES; i++) {
      const rl = rule(0)
      const expected = screens.filter((s) => matches(world, s, rl)).map((s) => s.id)
      const res = await h.req('POST', '/v1/groups', apiKey, { name: `D${i}`, kind: 'dynamic', rule: rl })
      t.equal(res.statusCode, 201, res.body)
      const g = res.json().data
      const members = (await h.req('GET', `/v1/groups/${g.id}/members`, apiKey)).json().data.map((m: { id: string }) => m.id)
      if (!t.same(members, expected, `rule ${JSON.stringify(rl)}`)) break
      t.equal(g.memberCount, expected.length)
      const preview = (await h.req('POST', '/v1/groups/preview', apiKey, { rule: rl })).json().data
      t.same([preview.count, preview.screens.map((m: { id: string }) => m.id)], [expected.length, expected.slice(0, 20)])
      // Later rules may name this one: a group of groups.
      world.groups.set(g.id, { kind: 'dynamic', rule: rl })
      groupIds.push(g.id)
    }
  })
})
