// The agent's recent lines in memory: a ring keeps its last N lines, each message bounded
// and without NUL; what a `logs` job uploads is the lines since a time, the newest N, within
// the byte bound, truncated exactly when a matching line is left out; the RingLogger writes
// through and records at its level, with the line's fields; the player page's feed hands
// kiosk console messages to the agent (real HTTP and WebSocket), and no others.
import t from 'tap'
import WebSocket from 'ws'
import { AGENT_LOG_LIMITS } from '@svc/shared/mqtt/index'
import { LogRing, RingLogger, boundedMessage, collectLogs, consoleLevel } from '../../src/runtime/LogRing.js'
import { PlayerServer, type ConsoleEvent } from '../../src/player/PlayerServer.js'
import { FakeTime, captureLog, until } from '../helpers.js'

const T0 = Date.parse('2030-01-01T00:00:00.000Z')
const at = (s: number) => new Date(T0 + s * 1000)

t.test('a ring keeps its last lines, oldest first, and knows what it let go of', async (t) => {
  const ring = new LogRing('agent', 3)
  t.throws(() => new LogRing('agent', 0), TypeError)
  for (let i = 0; i < 5; i++) ring.add(at(i), 'info', `line ${i}`)
  t.equal(ring.size, 3)
  const all = ring.since(null)
  t.same(
    all.lines.map((l) => l.message),
    ['line 2', 'line 3', 'line 4'],
  )
  t.equal(all.dropped, true, 'lines 0 and 1 are gone')
  t.same(all.lines[0], { at: '2030-01-01T00:00:02.000Z', level: 'info', source: 'agent', message: 'line 2' })
  const recent = ring.since(T0 + 2000)
  t.same(
    recent.lines.map((l) => l.message),
    ['line 2', 'line 3', 'line 4'],
  )
  t.equal(recent.dropped, false, 'nothing at or after line 2 was let go')
  t.equal(ring.since(T0 + 1000).dropped, true, 'line 1 was')
  t.same(ring.since(T0 + 9000).lines, [])
})

t.test('a message is bounded, ends with … when cut, and carries no NUL', async (t) => {
  const long = 'x'.repeat(AGENT_LOG_LIMITS.messageLength + 10)
  const cut = boundedMessage(long)
  t.equal(cut.length, AGENT_LOG_LIMITS.messageLength)
  t.ok(cut.endsWith('…'))
  t.equal(boundedMessage('a\u0000b'), 'a\uFFFDb')
  t.equal(boundedMessage('short'), 'short')
  const ring = new LogRing('kiosk', 2)
  ring.add(at(0), 'error', long)
  t.equal(ring.since(null).lines[0]!.message.length, AGENT_LOG_LIMITS.messageLength)
})

t.test('collectLogs: both sources by time, since, the newest N, the byte bound, and truncated', async (t) => {
  const agent = new LogRing('agent', 10)
  const kiosk = new LogRing('kiosk', 10)
  agent.add(at(1), 'info', 'a1')
  kiosk.add(at(2), 'error', 'k2')
  agent.add(at(3), 'warn', 'a3')
  agent.add(at(3), 'info', 'a3 again')
  kiosk.add(at(4), 'info', 'k4')
  const every = collectLogs([agent, kiosk], null, 100)
  t.same(
    every.lines.map((l) => `${l.source}:${l.message}`),
    ['agent:a1', 'kiosk:k2', 'agent:a3', 'agent:a3 again', 'kiosk:k4'],
  )
  t.equal(every.truncated, false)
  const since = collectLogs([agent, kiosk], T0 + 2000, 100)
  t.same(
    since.lines.map((l) => l.message),
    ['k2', 'a3', 'a3 again', 'k4'],
  )
  t.equal(since.truncated, false, 'lines before since are not missing lines')
  const newest = collectLogs([agent, kiosk], null, 2)
  t.same(
    newest.lines.map((l) => l.message),
    ['a3 again', 'k4'],
  )
  t.equal(newest.truncated, true)
  const exact = collectLogs([agent, kiosk], T0 + 3000, 3)
  t.equal(exact.truncated, false, 'exactly the matching lines')

  // The byte bound: the body `{"lines":[…],"truncated":…}` stays within it, newest kept.
  const big = new LogRing('agent', 50)
  for (let i = 0; i < 50; i++) big.add(at(i), 'info', `${i} ${'y'.repeat(AGENT_LOG_LIMITS.messageLength - 10)}`)
  const bounded = collectLogs([big], null, 50, 20_000)
  t.ok(bounded.lines.length < 50 && bounded.lines.length > 0, `${bounded.lines.length} lines fit`)
  t.ok(Buffer.byteLength(JSON.stringify({ lines: bounded.lines, truncated: true })) <= 20_000, 'within the bound')
  t.equal(bounded.lines.at(-1)!.message.split(' ')[0], '49', 'the newest line is kept')
  t.equal(bounded.truncated, true)
  const full = collectLogs([big], null, AGENT_LOG_LIMITS.maxLines)
  t.ok(Buffer.byteLength(JSON.stringify(full)) <= AGENT_LOG_LIMITS.maxBytes)

  // A ring that let go of matching lines makes the answer truncated.
  const small = new LogRing('agent', 2)
  for (let i = 0; i < 3; i++) small.add(at(i), 'info', `s${i}`)
  t.equal(collectLogs([small], null, 100).truncated, true)
  t.equal(collectLogs([small], T0 + 1000, 100).truncated, false)
})

t.test('the RingLogger writes through and records at its level, with the line’s fields', async (t) => {
  const time = new FakeTime('2030-01-01T00:00:00.000Z')
  const { log: inner, lines: written } = captureLog(time.clock, 'debug')
  const ring = new LogRing('agent', 100)
  const log = new RingLogger(inner, ring, { clock: time.clock })
  log.debug('not recorded at info')
  log.info('plain')
  time.advance(1000)
  const child = log.child({ part: 'link', screenId: 'scr_1' })
  child.warn({ url: 'mqtt://x', err: Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }) }, 'link lost')
  child.error(new Error('boom'), 'failed')
  child.info('bare')
  t.equal(written.length, 5, 'every line is written through, debug too')
  t.same(written[2], {
    t: '2030-01-01T00:00:01.000Z',
    level: 'warn',
    msg: 'link lost',
    part: 'link',
    screenId: 'scr_1',
    url: 'mqtt://x',
    err: { message: 'refused', code: 'ECONNREFUSED' },
  })
  t.same(ring.since(null).lines, [
    { at: '2030-01-01T00:00:00.000Z', level: 'info', source: 'agent', message: 'plain' },
    {
      at: '2030-01-01T00:00:01.000Z',
      level: 'warn',
      source: 'agent',
      message: 'link lost {"part":"link","screenId":"scr_1","url":"mqtt://x","err":{"message":"refused","code":"ECONNREFUSED"}}',
    },
    { at: '2030-01-01T00:00:01.000Z', level: 'error', source: 'agent', message: 'failed {"part":"link","screenId":"scr_1","err":{"message":"boom"}}' },
    { at: '2030-01-01T00:00:01.000Z', level: 'info', source: 'agent', message: 'bare {"part":"link","screenId":"scr_1"}' },
  ])
  const verbose = new LogRing('agent', 10)
  new RingLogger(inner, verbose, { clock: time.clock, level: 'debug' }).debug('kept at debug')
  t.equal(verbose.size, 1)
  const circular: Record<string, unknown> = {}
  circular.self = circular
  log.info({ circular }, 'odd fields')
  t.match(ring.since(null).lines.at(-1), { message: 'odd fields {"note":"fields could not be serialised"}' })
})

t.test('console levels as the page names them', async (t) => {
  t.equal(consoleLevel('log'), 'info')
  for (const l of ['debug', 'info', 'warn', 'error']) t.equal(consoleLevel(l), l)
  for (const bad of ['trace', 'fatal', 3, null, undefined]) t.equal(consoleLevel(bad), null)
})

t.test('the feed hands a kiosk page’s console messages to the agent; a capture’s and malformed ones are ignored', async (t) => {
  const server = new PlayerServer({ port: 0, log: captureLog().log })
  await server.start()
  t.after(() => server.stop())
  const heard: ConsoleEvent[] = []
  server.on('console', (e) => heard.push(e))
  const connect = async (query = '') => {
    const ws = new WebSocket(`ws://127.0.0.1:${server.port}/feed${query}`)
    t.after(() => ws.terminate())
    await new Promise((r, j) => ws.once('open', r).once('error', j))
    return ws
  }
  const capture = await connect('?capture=1')
  capture.send(JSON.stringify({ type: 'console', level: 'error', message: 'from a capture' }))
  const kiosk = await connect()
  for (const bad of ['not json', '[1]', '{"type":"console","level":"fatal","message":"x"}', '{"type":"console","level":"info","message":7}']) kiosk.send(bad)
  kiosk.send(JSON.stringify({ type: 'console', level: 'log', message: 'hello from the page' }))
  kiosk.send(JSON.stringify({ type: 'console', level: 'error', message: 'Uncaught TypeError' }))
  t.ok(await until(5 * 60_000, () => (heard.length >= 2 ? true : undefined)))
  t.same(heard, [
    { page: 1, level: 'info', message: 'hello from the page' },
    { page: 1, level: 'error', message: 'Uncaught TypeError' },
  ])
  // A message over the feed's bound closes that page's connection (it reconnects).
  const closed = new Promise<number>((r) => kiosk.once('close', (code) => r(code)))
  kiosk.send('x'.repeat(70 * 1024))
  t.equal(await closed, 1009, 'message too big')
})
