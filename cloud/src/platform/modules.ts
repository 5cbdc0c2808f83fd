// The wiring contract of the cloud's domain modules. A module names what it needs and what
// it provides, and builds its provisions from its needs alone:
//
//   export const nodesModule = domainModule({
//     name: 'nodes',
//     needs: ['db', 'clock', 'ids'],
//     provides: ['nodes', 'nodeUsage'],
//     create: ({ db, clock, ids }) => { … },
//   })
//
// (domains/provisions.ts types the names: what `create` receives and returns follows from
// the two lists.) wireModules() checks the whole list before it builds anything: every need
// provided by the platform or by exactly one module, and no module needing (through others)
// what it provides. A broken list is a boot error naming both sides. Modules are then built
// in dependency order (the list's own order where it has a choice); each sees only what it
// declared. Cross-module reactions go through hooks a module provides (platform/hooks.ts),
// never through setters called after construction.
//
// One lifecycle: what a module runs while the cloud runs (interval workers, device-job
// deliveries, presence) is built in `create` and added to the platform's `running`
// (`running.add(name, { start, stop })`); what it opens is closed by a stop step
// (`stopSteps`, `drainSteps`, `releaseSteps`: platform/lifecycle.ts). startModules() wires
// the list, then starts everything added to `running`, in the order added (wiring order),
// each stop becoming a stop step that runs before every step added while wiring. The app's
// boot (app.ts) and the tests' domain harness (test/domains.ts) both call it; route plugins
// serve HTTP only.
import type { StopSteps } from './lifecycle.js'
import { IntervalWorker } from './workers/Worker.js'

/** One `true` per key of T: a list of names the compiler checks is complete (the platform's, domains/provisions.ts). */
export type Names<T> = { readonly [K in keyof T]-?: true }

export interface Module<Needs extends object, Provides extends object> {
  readonly name: string
  /** The names of what `create` receives. */
  readonly needs: readonly (keyof Needs & string)[]
  /** The names of what `create` returns. */
  readonly provides: readonly (keyof Provides & string)[]
  /** Builds the provisions. Stop steps and workers are registered here, through the platform's needs. */
  create(needs: Needs): Provides | Promise<Provides>
}

/** A module of whatever needs, as a list of modules holds it. */
export interface AnyModule {
  readonly name: string
  readonly needs: readonly string[]
  readonly provides: readonly string[]
  create(needs: never): unknown
}

export class WiringError extends Error {
  override name = 'WiringError'
}

/** Everything provided to a list of modules, by name. */
export type Provisions = Record<string, unknown>

/**
 * The order modules are built in; throws WiringError for a need nobody provides, a name
 * provided twice, or modules that need each other. `platform` names what is there before
 * any module (the database, the broker, the clock…).
 */
export function wiringOrder(modules: readonly AnyModule[], platform: Iterable<string>): AnyModule[] {
  const provider = new Map<string, string>()
  for (const name of platform) provider.set(name, 'platform')
  const byName = new Map<string, AnyModule>()
  const position = new Map(modules.map((m, i) => [m.name, i]))
  for (const m of modules) {
    if (byName.has(m.name)) throw new WiringError(`two modules are named "${m.name}"`)
    byName.set(m.name, m)
    for (const p of m.provides) {
      const other = provider.get(p)
      if (other) throw new WiringError(`"${p}" is provided by both ${describe(other)} and module "${m.name}"`)
      provider.set(p, m.name)
    }
  }
  for (const m of modules) {
    for (const n of m.needs) {
      if (!provider.has(n)) throw new WiringError(`module "${m.name}" needs "${n}", which neither the platform nor any module provides`)
    }
  }
  // Depth-first, in list order; a module met again while its own needs are being built is a circle.
  const order: AnyModule[] = []
  const state = new Map<string, 'building' | 'built'>()
  const path: { module: string; need: string }[] = []
  const visit = (m: AnyModule): void => {
    const s = state.get(m.name)
    if (s === 'built') return
    if (s === 'building') throw new WiringError(circle(path, m.name))
    state.set(m.name, 'building')
    // The modules it needs, in list order.
    const deps = m.needs
      .map((need) => ({ need, from: provider.get(need)! }))
      .filter((d) => d.from !== 'platform' && d.from !== m.name)
      .sort((a, b) => position.get(a.from)! - position.get(b.from)!)
    for (const d of deps) {
      path.push({ module: m.name, need: d.need })
      visit(byName.get(d.from)!)
      path.pop()
    }
    state.set(m.name, 'built')
    order.push(m)
  }
  for (const m of modules) visit(m)
  return order
}

/** Builds every module in wiring order; resolves to the platform's provisions and all the modules'. */
export async function wireModules(modules: readonly AnyModule[], platform: Provisions): Promise<Provisions> {
  const all: Provisions = { ...platform }
  for (const m of wiringOrder(modules, Object.keys(platform))) {
    const needs: Provisions = {}
    for (const n of m.needs) needs[n] = all[n]
    const made = (await m.create(needs as never)) as Provisions
    for (const p of m.provides) {
      if (!(p in made)) throw new WiringError(`module "${m.name}" declares "${p}" but did not provide it`)
      all[p] = made[p]
    }
    for (const p of Object.keys(made)) {
      if (!(m.provides as readonly string[]).includes(p)) throw new WiringError(`module "${m.name}" provided "${p}", which it does not declare`)
    }
  }
  return all
}

/** Something a module runs while the cloud runs: started once every module is wired, stopped on close. */
export interface Running {
  start(): unknown
  /** Stops it (and waits for work under way); absent when there is nothing to stop. */
  stop?(): unknown
}

/** Where modules add what they run (the platform's `running`). */
export interface Runs {
  add(name: string, run: Running): void
}

/** The platform's side of `running`: what the modules added, started by startModules(). */
export class ModuleRuns implements Runs {
  private readonly list: { name: string; run: Running }[] = []
  private started = false

  add(name: string, run: Running): void {
    if (this.started) throw new WiringError(`"${name}" added to running after the modules started`)
    this.list.push({ name, run })
  }

  /** The interval workers added, by name (their runs are metrics). */
  workers(): [string, IntervalWorker][] {
    return this.list.filter((r) => r.run instanceof IntervalWorker).map((r) => [r.name, r.run as IntervalWorker])
  }

  /** The names added, in start order. */
  names(): string[] {
    return this.list.map((r) => r.name)
  }

  /**
   * Starts each in the order added; its stop becomes a stop step first (so a start that
   * fails half-way is stopped with the rest when the caller closes its lifecycle).
   */
  async start(stops: StopSteps): Promise<void> {
    this.started = true
    for (const { name, run } of this.list) {
      if (run.stop) stops.add(name, () => run.stop!())
      await run.start()
    }
  }
}

/**
 * The modules' one lifecycle: wires `modules` (wireModules), then starts what they added to
 * `runs` (the platform's `running`), each stop added to `stops`. Resolves to every provision.
 */
export async function startModules(modules: readonly AnyModule[], platform: Provisions, runs: ModuleRuns, stops: StopSteps): Promise<Provisions> {
  const provided = await wireModules(modules, platform)
  await runs.start(stops)
  return provided
}

function describe(provider: string): string {
  return provider === 'platform' ? 'the platform' : `module "${provider}"`
}

/** `module "a" needs "x" from module "b", which needs "y" from module "a"`. */
function circle(path: { module: string; need: string }[], again: string): string {
  const start = path.findIndex((p) => p.module === again)
  const loop = path.slice(start)
  const steps = loop.map((p, i) => `${i === 0 ? `module "${p.module}"` : 'which'} needs "${p.need}" from module "${(loop[i + 1] ?? { module: again }).module}"`)
  return `modules need each other: ${steps.join(', ')}`
}
