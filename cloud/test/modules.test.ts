// The wiring contract of the domain modules (platform/modules.ts), and the cloud's own list
// of modules (domains/index.ts) checked against it: built in an order their needs allow, a
// broken list refused at boot with a message naming both sides.
import t from 'tap'
import { type AnyModule, type Module, ModuleRuns, startModules, WiringError, wireModules, wiringOrder } from '../src/platform/modules.js'
import { Lifecycle } from '../src/platform/lifecycle.js'
import { Listeners } from '../src/platform/hooks.js'
import { MODULES } from '../src/domains/index.js'
import { PLATFORM_NAMES } from '../src/platform/provisions.js'

const mod = (name: string, needs: string[], provides: string[], made: string[] = []): AnyModule => ({
  name,
  needs,
  provides,
  create: (got: Record<string, unknown>) => {
    made.push(name)
    return Object.fromEntries(provides.map((p) => [p, { from: name, saw: Object.keys(got).sort() }]))
  },
})

t.test('modules are built after what they need, in list order where that leaves a choice', async (t) => {
  const made: string[] = []
  const list = [mod('alerts', ['screens', 'mailer'], ['alerts'], made), mod('mail', ['db'], ['mailer'], made), mod('screens', ['db'], ['screens'], made)]
  t.same(
    wiringOrder(list, ['db']).map((m) => m.name),
    ['mail', 'screens', 'alerts'],
  )
  const all = await wireModules(list, { db: 'the database' })
  t.same(made, ['mail', 'screens', 'alerts'])
  t.same(all.alerts, { from: 'alerts', saw: ['mailer', 'screens'] }, 'a module sees exactly what it declared, nothing else')
  t.equal(all.db, 'the database', "the platform's provisions stay in the result")
})

t.test('a need nobody provides is a boot error naming the module and the need', async (t) => {
  const list = [mod('alerts', ['screens'], ['alerts'])]
  t.throws(() => wiringOrder(list, ['db']), new WiringError('module "alerts" needs "screens", which neither the platform nor any module provides'))
  await t.rejects(wireModules(list, { db: 1 }), WiringError, 'nothing is built')
})

t.test('modules that need each other are refused, naming both sides', async (t) => {
  const made: string[] = []
  const list = [mod('content', ['approvals'], ['content'], made), mod('approvals', ['content'], ['approvals'], made)]
  t.throws(
    () => wiringOrder(list, []),
    new WiringError('modules need each other: module "content" needs "approvals" from module "approvals", which needs "content" from module "content"'),
  )
  const three = [mod('a', ['y'], ['x']), mod('b', ['z'], ['y']), mod('c', ['x'], ['z'])]
  const err = t.throws(() => wiringOrder(three, [])) as Error
  t.match(err.message, /module "a" needs "y" from module "b", which needs "z" from module "c", which needs "x" from module "a"/)
  await t.rejects(wireModules(list, {}))
  t.same(made, [], 'nothing is built when the list is refused')
})

t.test('a name provided twice, a module named twice, a provision missing or undeclared: refused', async (t) => {
  t.throws(() => wiringOrder([mod('a', [], ['x']), mod('b', [], ['x'])], []), new WiringError('"x" is provided by both module "a" and module "b"'))
  t.throws(() => wiringOrder([mod('a', [], ['db'])], ['db']), new WiringError('"db" is provided by both the platform and module "a"'))
  t.throws(() => wiringOrder([mod('a', [], []), mod('a', [], [])], []), /two modules are named "a"/)
  const lazy: Module<object, { x: number }> = { name: 'lazy', needs: [], provides: ['x'], create: () => ({}) as { x: number } }
  await t.rejects(wireModules([lazy], {}), new WiringError('module "lazy" declares "x" but did not provide it'))
  const eager: Module<object, { x: number }> = { name: 'eager', needs: [], provides: ['x'], create: () => ({ x: 1, y: 2 }) as { x: number } }
  await t.rejects(wireModules([eager], {}), new WiringError('module "eager" provided "y", which it does not declare'))
})

t.test('one lifecycle: what modules add to running starts once all are wired, and stops first on close', async (t) => {
  const events: string[] = []
  const runner = (name: string, needs: string[], provides: string[]): AnyModule => ({
    name,
    needs: ['running', 'stopSteps', ...needs],
    provides,
    create: ((got: { running: ModuleRuns; stopSteps: Lifecycle }) => {
      events.push(`create ${name}`)
      got.stopSteps.add(`${name} closed`, () => void events.push(`close ${name}`))
      got.running.add(name, { start: () => void events.push(`start ${name}`), stop: () => void events.push(`stop ${name}`) })
      return Object.fromEntries(provides.map((p) => [p, name]))
    }) as (needs: never) => unknown,
  })
  const lifecycle = new Lifecycle()
  const running = new ModuleRuns()
  await startModules([runner('worker', ['x'], []), runner('source', [], ['x'])], { running, stopSteps: lifecycle }, running, lifecycle)
  t.same(events, ['create source', 'create worker', 'start source', 'start worker'], 'started in wiring order, after every module was built')
  t.throws(() => running.add('late', { start: () => undefined }), WiringError, 'nothing joins after the start')
  await lifecycle.close()
  t.same(events.slice(4), ['stop worker', 'stop source', 'close worker', 'close source'], 'what runs stops before what the modules opened')
})

t.test('a start that fails leaves what started (and itself) to the close', async (t) => {
  const stopped: string[] = []
  const lifecycle = new Lifecycle()
  const running = new ModuleRuns()
  running.add('ok', { start: () => undefined, stop: () => void stopped.push('ok') })
  running.add('broken', {
    start: () => {
      throw new Error('no')
    },
    stop: () => void stopped.push('broken'),
  })
  running.add('never', { start: () => void stopped.push('never started'), stop: () => void stopped.push('never') })
  await t.rejects(startModules([], {}, running, lifecycle), /no/)
  await lifecycle.close()
  t.same(stopped, ['broken', 'ok'], 'the failed one and those before it are stopped; the rest never started')
})

t.test('a hook: listeners in the order added, each removable', async (t) => {
  const hook = new Listeners<(n: number) => number>()
  const off = hook.add((n) => n + 1)
  hook.add((n) => n * 2)
  t.same(
    hook.all().map((f) => f(3)),
    [4, 6],
  )
  off()
  t.equal(hook.size, 1)
})

t.test("the cloud's modules: every need provided, each name by one module, no circle", async (t) => {
  const platform = Object.keys(PLATFORM_NAMES)
  const order = wiringOrder(MODULES, platform).map((m) => m.name)
  t.equal(order.length, MODULES.length)
  const at = (name: string) => order.indexOf(name)
  t.ok(at('approvals') < at('content'), 'content holds changes through approvals, which apply them through the heldChanges hook')
  t.ok(at('devicelink') < at('alerts') && at('playlog') < at('alerts'), 'the alerts listen to the device link and the play log')
  const provided = MODULES.flatMap((m) => m.provides)
  t.equal(new Set(provided).size, provided.length, 'each name provided once')
})
