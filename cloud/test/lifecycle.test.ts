// Teardown (platform/lifecycle.ts): stop steps run in reverse, each guarded, once, and a
// hanging one only as long as its timeout. Through the real app: a stop step that fails
// (the broker's) does not leave the SQLite file open, the failure is logged, and the steps
// run in their declared order (the database last, the broker after presence and sessions).
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import t, { type Test } from 'tap'
import { settle, type Logger } from '@svc/shared'
import { redis, toolTest } from '@svc/shared/testing'
import { Lifecycle } from '../src/platform/lifecycle.js'
import { buildApp, type AppDeps, servicesOf } from '../src/app.js'
import { testConfig, type Config } from '../src/config.js'
import { ManualClock } from '../src/platform/clock.js'

interface Line {
  level: string
  fields: Record<string, unknown>
  msg?: string
}

/** A Logger that keeps every line. */
function recordingLog(lines: Line[]): Logger {
  const at =
    (level: string) =>
    (fields: object | string, msg?: string): void =>
      void lines.push(typeof fields === 'string' ? { level, fields: {}, msg: fields } : { level, fields: fields as Record<string, unknown>, msg })
  const log: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => log }
  return log
}

const errorsOf = (lines: Line[]) => lines.filter((l) => l.level === 'error').map((l) => ({ step: l.fields.step, message: (l.fields.err as Error).message }))

t.test('steps run last-added first', async (t) => {
  const ran: string[] = []
  const lc = new Lifecycle()
  for (const name of ['database', 'redis', 'broker', 'sessions']) lc.add(name, () => void ran.push(name))
  t.same(lc.names(), ['sessions', 'broker', 'redis', 'database'])
  await lc.close()
  t.same(ran, ['sessions', 'broker', 'redis', 'database'])
})

t.test('a group runs its steps, in their own reverse order, at the place it was reserved', async (t) => {
  const ran: string[] = []
  const lc = new Lifecycle()
  lc.add('database', () => void ran.push('database'))
  const afterBroker = lc.group()
  lc.add('broker', () => void ran.push('broker'))
  afterBroker.add('mailer', () => void ran.push('mailer'))
  lc.add('sessions', () => void ran.push('sessions'))
  afterBroker.add('presence drops', () => void ran.push('presence drops'))
  t.same(lc.names(), ['sessions', 'broker', 'presence drops', 'mailer', 'database'])
  await lc.close()
  t.same(ran, lc.names())
})

t.test("a group('added') runs its steps in the order they were added, at its place", async (t) => {
  const ran: string[] = []
  const lc = new Lifecycle()
  lc.add('database', () => void ran.push('database'))
  const release = lc.group()
  const drain = lc.group('added')
  lc.add('broker', () => void ran.push('broker'))
  release.add('mailer', () => void ran.push('mailer'))
  drain.add('presence drops', () => void ran.push('presence drops'))
  release.add('outbound', () => void ran.push('outbound'))
  drain.add('takeover counts', () => void ran.push('takeover counts'))
  t.same(lc.names(), ['broker', 'presence drops', 'takeover counts', 'outbound', 'mailer', 'database'])
  await lc.close()
  t.same(ran, lc.names())
})

t.test('a step that throws and one that rejects are logged; the others still run', async (t) => {
  const lines: Line[] = []
  const ran: string[] = []
  const lc = new Lifecycle({ log: recordingLog(lines) })
  lc.add('database', () => void ran.push('database'))
  lc.add('media', async () => {
    throw new Error('media rejected')
  })
  lc.add('outbound', () => void ran.push('outbound'))
  lc.add('broker', () => {
    throw new Error('broker threw')
  })
  lc.add('sessions', () => void ran.push('sessions'))
  await lc.close()
  t.same(ran, ['sessions', 'outbound', 'database'])
  t.same(errorsOf(lines), [
    { step: 'broker', message: 'broker threw' },
    { step: 'media', message: 'media rejected' },
  ])
  t.ok(
    lines.some((l) => l.level === 'debug' && l.fields.step === 'database' && typeof l.fields.ms === 'number'),
    'each step that ends logs its duration at debug',
  )
})

t.test('closing twice runs each step once; the second close waits for the first', async (t) => {
  let release = (): void => undefined
  const counts = { slow: 0, last: 0 }
  const lc = new Lifecycle()
  lc.add('last', () => void counts.last++)
  lc.add('slow', () => {
    counts.slow++
    return new Promise<void>((r) => {
      release = r
    })
  })
  let secondDone = false
  const first = lc.close()
  const second = lc.close().then(() => {
    secondDone = true
  })
  await settle()
  t.equal(secondDone, false, 'the second close waits while a step of the first is running')
  release()
  await Promise.all([first, second])
  await lc.close()
  t.same(counts, { slow: 1, last: 1 })
  t.throws(() => lc.add('late', () => undefined), /added after the close began/)
})

t.test('a hanging step with a timeout does not hold the close', async (t) => {
  const lines: Line[] = []
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const ran: string[] = []
  // Both limits run on the ManualClock.
  const CLOSE_TIMEOUT_MS = 60_000
  const STEP_TIMEOUT_MS = 500
  const lc = new Lifecycle({ log: recordingLog(lines), timers: clock, timeoutMs: CLOSE_TIMEOUT_MS })
  lc.add('database', () => void ran.push('database'))
  lc.add('hangs', () => new Promise(() => undefined), { timeoutMs: STEP_TIMEOUT_MS })
  lc.add('first', () => void ran.push('first'))
  let done = false
  const closing = lc.close().then(() => {
    done = true
  })
  await settle()
  t.same(ran, ['first'])
  clock.advance(499)
  await settle()
  t.equal(done, false, 'the step has its whole timeout')
  clock.advance(1)
  await closing
  t.same(ran, ['first', 'database'])
  t.same(errorsOf(lines), [{ step: 'hangs', message: 'stop step "hangs" took longer than 500 ms; the close goes on without it' }])
  t.equal(clock.timers.size, 0, 'no timer is left behind')
})

/** An app on its own SQLite file (the app opens and owns the database). */
async function appOnFile(t: Test, config: Partial<Config> = {}, deps: AppDeps = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-lifecycle-'))
  const file = path.join(dir, 'svc.sqlite')
  const app = await buildApp(testConfig({ dataDir: dir, dbFile: file, ...config }), { clock: new ManualClock('2026-06-01T12:00:00.000Z'), ...deps })
  t.after(async () => {
    await app.close().catch(() => undefined)
    await servicesOf(app)
      .db.close()
      .catch(() => undefined)
    fs.rmSync(dir, { recursive: true, force: true })
  })
  await app.ready()
  return { app, file }
}

t.test('a broker that fails to close does not keep the database open; the failure is logged', async (t) => {
  const { app, file } = await appOnFile(t)
  const ws = await servicesOf(app).workspaces.create('Lobby', 'us')
  t.ok(fs.existsSync(`${file}-wal`), 'the open database keeps its write-ahead log')
  const errors: { step?: unknown; err?: unknown }[] = []
  const error = app.log.error.bind(app.log)
  app.log.error = ((fields: object, msg?: string) => {
    errors.push(fields as { step?: unknown; err?: unknown })
    error(fields, msg)
  }) as typeof app.log.error
  const broker = servicesOf(app).broker
  const closeBroker = broker.close.bind(broker)
  t.after(closeBroker)
  broker.close = async () => {
    throw new Error('the broker would not close')
  }
  await t.resolves(app.close(), 'the close itself does not fail')
  t.same(
    errors.map((e) => ({ step: e.step, message: (e.err as Error | undefined)?.message })),
    [{ step: 'broker', message: 'the broker would not close' }],
  )
  await t.rejects(servicesOf(app).db.get('SELECT id FROM workspaces WHERE id = ?', [ws.id]), 'the database handle is closed')
  t.notOk(fs.existsSync(`${file}-wal`), 'SQLite checkpointed and removed its log: no connection to the file is left')
})

t.test('a start that fails stops what it had opened, the database included', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-lifecycle-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'svc.sqlite')
  const config = testConfig({ dataDir: dir, dbFile: file })
  const failing: AppDeps = {
    brokerPersistence: async () => {
      t.ok(fs.existsSync(`${file}-wal`), 'the database is open when the broker starts')
      throw new Error('broker storage unavailable')
    },
  }
  await t.rejects(buildApp(config, failing), /broker storage unavailable/)
  t.notOk(fs.existsSync(`${file}-wal`), 'the database was closed')
})

t.test('the app stops in its declared order: presence and device sessions, then the broker, the database last', async (t) => {
  const { app } = await appOnFile(t)
  const names = app.lifecycle.names()
  const at = (name: string) => {
    const i = names.indexOf(name)
    t.not(i, -1, `${name} has a stop step`)
    return i
  }
  t.equal(names.at(-1), 'database')
  t.ok(at('presence timers') < at('broker'), 'presence timers stop before the broker closes')
  t.ok(at('device sessions') < at('broker'), 'device sessions stop before the broker closes')
  t.ok(at('play log') < at('broker'))
  t.ok(at('broker') < at('presence drops recorded'), "presence records the broker's drops after it closes")
  t.ok(at('presence drops recorded') < at('takeover delivery counts'))
  t.ok(at('presence drops recorded') < at('api key last-used flush'))
  t.same(new Set(names).size, names.length, 'each step once')
})

toolTest(t, redis, 'with Redis: the shared presence and the Redis channels stop after the broker, Redis before the database', async (t) => {
  const { app } = await appOnFile(t, { redisUrl: process.env.SVC_TEST_REDIS_URL ?? null, redisPrefix: `svc-test-${randomUUID()}:` })
  const names = app.lifecycle.names()
  const at = (name: string) => names.indexOf(name)
  t.same(names.slice(-2), ['redis', 'database'])
  t.ok(at('broker') < at('shared presence heartbeat'))
  t.ok(at('presence drops recorded') < at('shared presence of this instance'), 'this instance is forgotten once its drops are recorded')
  for (const channel of ['credential changes channel', 'data changes channel', 'shared presence of this instance'])
    t.ok(at('broker') < at(channel) && at(channel) < at('redis'), `${channel} between the broker and Redis`)
})
