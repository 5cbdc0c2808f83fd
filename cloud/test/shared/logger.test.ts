// One Logger type for every package: Fastify's pino logger (what the cloud passes around)
// and the agent's JSON-line logger both satisfy the shared `Logger`, and both write the
// fields and the message of a `(fields, msg)` call the same way. The assignments below are
// the type-level part (the typecheck fails if either stops fitting); the lines the two
// loggers write are the runtime part.
import t, { type Test } from 'tap'
import Fastify from 'fastify'
import { ManualClock, silentLogger, type Logger } from '@svc/shared'
import { JsonLogger } from '../../../agent/src/runtime/Logger.js'

function pinoLogger(): { log: Logger; lines: Record<string, unknown>[]; close: () => Promise<void> } {
  const lines: Record<string, unknown>[] = []
  const app = Fastify({ logger: { level: 'debug', stream: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } } })
  const log: Logger = app.log
  return { log, lines, close: () => app.close() }
}

function jsonLogger(): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = []
  const log: Logger = new JsonLogger({ write: (l) => lines.push(JSON.parse(l) as Record<string, unknown>), level: 'debug', clock: new ManualClock() })
  return { log, lines }
}

/** Code written against the shared type only. */
function useLogger(log: Logger): void {
  log.info({ screenId: 'scr_1', version: 3 }, 'applied desired state')
  log.warn('plain message')
  log.child({ component: 'link' }).error({ err: new Error('boom') }, 'publish failed')
  log.debug({ inMs: 500 }, 'reconnecting')
  // @ts-expect-error the message comes after the fields (pino's order), never before them
  if (log === silentLogger) log.info('wrong order', { screenId: 'scr_1' })
}

function check(t: Test, lines: Record<string, unknown>[], levelOf: (l: Record<string, unknown>) => string): void {
  t.equal(lines.length, 4)
  t.match(lines[0], { msg: 'applied desired state', screenId: 'scr_1', version: 3 })
  t.equal(levelOf(lines[0]!), 'info')
  t.match(lines[1], { msg: 'plain message' })
  t.equal(levelOf(lines[1]!), 'warn')
  t.match(lines[2], { msg: 'publish failed', component: 'link', err: { message: 'boom' } })
  t.equal(levelOf(lines[2]!), 'error')
  t.match(lines[3], { msg: 'reconnecting', inMs: 500 })
  t.equal(levelOf(lines[3]!), 'debug')
}

t.test("Fastify's pino logger is a shared Logger", async (t) => {
  const p = pinoLogger()
  t.teardown(p.close)
  useLogger(p.log)
  const names: Record<number, string> = { 20: 'debug', 30: 'info', 40: 'warn', 50: 'error' }
  check(t, p.lines, (l) => names[l.level as number]!)
})

t.test("the agent's JsonLogger is a shared Logger", async (t) => {
  const j = jsonLogger()
  useLogger(j.log)
  check(t, j.lines, (l) => l.level as string)
  t.equal(j.lines[0]!.t, '2026-01-01T00:00:00.000Z', 'stamped by the injected clock')
  t.same(j.lines[2]!.err, { message: 'boom' }, 'an error becomes {message, code}: no stack on the line')
})

t.test('the silent logger drops everything and is a Logger too', async (t) => {
  t.doesNotThrow(() => useLogger(silentLogger))
  t.equal(silentLogger.child({ a: 1 }), silentLogger)
})
