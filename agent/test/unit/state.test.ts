// The state reconciler: shared-parser validation, newer versions only, desired.json
// survives a restart (casts expire on the device clock), `reported` on every change.
import t, { type Test } from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import type { DesiredState, Reported } from '@svc/shared/mqtt/index'
import { DesiredStore } from '../../src/state/DesiredStore.js'
import { StateReconciler } from '../../src/state/StateReconciler.js'
import { FakeTime, captureLog, tempDir } from '../helpers.js'

function desired(version: number, extra: Partial<DesiredState> = {}): DesiredState {
  return {
    version,
    screenId: 'scr_1',
    timezone: 'UTC',
    assignment: { contentKind: 'media', contentId: 'med_loop', content: { name: 'Loop', url: 'https://cdn.example/loop.mp4', mimeType: 'video/mp4' } },
    schedule: null,
    casts: [],
    emergency: null,
    panel: null,
    generatedAt: '2026-06-01T12:00:00.000Z',
    ...extra,
  }
}

function harness(t: Test, dataDir: string, time: FakeTime) {
  const sent: Reported[] = []
  const publisher = {
    connected: true,
    async publish(_kind: 'reported', message: Reported) {
      sent.push(message)
    },
  }
  const { log, lines } = captureLog(time.clock)
  const state = new StateReconciler({
    screenId: 'scr_1',
    store: new DesiredStore(dataDir),
    publisher,
    log,
    clock: time.clock,
    timers: time,
    storage: async () => ({ usedBytes: 10, totalBytes: 100 }),
  })
  t.after(() => state.stop())
  return { state, sent, lines, publisher }
}

t.test('applies newer versions only, ignores invalid or foreign ones, reports each change', async (t) => {
  const dir = tempDir(t)
  const time = new FakeTime('2026-06-01T12:00:00.000Z')
  const { state, sent, lines } = harness(t, dir, time)
  await state.start()
  t.equal(state.decision.source, 'none')

  t.equal(await state.handleDesired(JSON.stringify(desired(2))), true)
  await state.report()
  t.equal(state.version, 2)
  t.match(sent.at(-1), {
    version: 2,
    playing: { source: 'assignment', contentKind: 'media', contentId: 'med_loop' },
    storage: { usedBytes: 10, totalBytes: 100 },
  })

  t.equal(await state.handleDesired(JSON.stringify(desired(2, { assignment: null }))), false, 'same version: duplicate')
  t.equal(await state.handleDesired(JSON.stringify(desired(1, { assignment: null }))), false, 'older version: stale')
  t.equal(await state.handleDesired('{"version": "three"}'), false, 'invalid')
  t.equal(await state.handleDesired('not json'), false, 'not JSON')
  t.equal(await state.handleDesired(JSON.stringify({ ...desired(9), screenId: 'scr_other' })), false, 'another screen')
  t.equal(state.version, 2)
  t.ok(
    lines.some((l) => l.msg === 'ignoring an invalid desired state' && Array.isArray(l.issues)),
    'invalid message logged with its issues',
  )

  const count = sent.length
  await state.handleDesired(JSON.stringify(desired(3)))
  await state.report()
  t.equal(sent.length, count + 1, 'a new version with the same decision is still reported')
  t.equal(sent.at(-1)!.version, 3)
  await state.report()
  t.equal(sent.length, count + 1, 'nothing new, nothing sent')
  await state.report(true)
  t.equal(sent.length, count + 2, 'forced on (re)connect')
})

t.test('desired.json survives a restart; a cast expires on the device clock while offline', async (t) => {
  const dir = tempDir(t)
  const time = new FakeTime('2026-06-01T12:00:00.000Z')
  const first = harness(t, dir, time)
  await first.state.start()
  const cast = {
    id: 'cast_1',
    contentKind: 'media' as const,
    contentId: 'med_promo',
    triggeredAt: '2026-06-01T11:59:00.000Z',
    expiresAt: '2026-06-01T12:10:00.000Z',
  }
  await first.state.handleDesired(JSON.stringify(desired(5, { casts: [cast] })))
  t.equal(first.state.decision.source, 'cast')
  const file = path.join(dir, 'desired.json')
  t.equal(JSON.parse(fs.readFileSync(file, 'utf8')).version, 5, 'persisted')
  t.equal(fs.statSync(file).mode & 0o777, 0o600)
  await first.state.stop()

  // "Restart" with nothing connected: the stored state plays at once.
  const second = harness(t, dir, time)
  second.publisher.connected = false
  await second.state.start()
  t.equal(second.state.version, 5)
  t.match(second.state.decision, { source: 'cast', castId: 'cast_1', contentId: 'med_promo' })
  const changes: string[] = []
  second.state.on('change', (d) => changes.push(d.source))
  time.advance(10 * 60_000)
  t.match(second.state.decision, { source: 'assignment', contentId: 'med_loop' }, 'the cast ended at its expiresAt by the device clock')
  t.same(changes, ['assignment'])
  t.equal(second.sent.length, 0, 'nothing published while disconnected')
  second.publisher.connected = true
  await second.state.report(true)
  t.match(second.sent.at(-1), { version: 5, playing: { source: 'assignment' } })

  // A restart after the expiry starts on the assignment straight away.
  await second.state.stop()
  const third = harness(t, dir, time)
  await third.state.start()
  t.equal(third.state.decision.source, 'assignment')
})

t.test('a damaged or foreign desired.json is logged and ignored', async (t) => {
  const dir = tempDir(t)
  const time = new FakeTime('2026-06-01T12:00:00.000Z')
  fs.writeFileSync(path.join(dir, 'desired.json'), '{"version": 1}')
  const a = harness(t, dir, time)
  await a.state.start()
  t.equal(a.state.version, 0)
  t.ok(a.lines.some((l) => l.level === 'warn' && /not a valid desired state/.test(String(l.msg))))
  await a.state.stop()

  fs.writeFileSync(path.join(dir, 'desired.json'), JSON.stringify({ ...desired(4), screenId: 'scr_old' }))
  const b = harness(t, dir, time)
  await b.state.start()
  t.equal(b.state.version, 0, 'another screen’s state does not play here')
})

t.test('a heartbeat sends `reported` again when nothing changed', async (t) => {
  const dir = tempDir(t)
  const time = new FakeTime('2026-06-01T12:00:00.000Z')
  const sent: Reported[] = []
  const { log } = captureLog(time.clock)
  const state = new StateReconciler({
    screenId: 'scr_1',
    store: new DesiredStore(dir),
    publisher: {
      connected: true,
      async publish(_k: 'reported', m: Reported) {
        sent.push(m)
      },
    },
    log,
    clock: time.clock,
    timers: time,
    heartbeatMs: 300_000,
    storage: async () => ({ usedBytes: 10, totalBytes: 100 }),
  })
  t.after(() => state.stop())
  await state.start()
  await state.handleDesired(JSON.stringify(desired(2)))
  await state.report()
  const before = sent.length
  time.advance(299_999)
  await state.report()
  t.equal(sent.length, before, 'nothing changed and the heartbeat is not due: nothing sent')
  time.advance(1)
  await state.report()
  t.equal(sent.length, before + 1, 'the heartbeat re-sends the same state')
  t.equal(sent.at(-1)?.at, '2026-06-01T12:05:00.000Z')
  time.advance(300_000)
  await state.report()
  t.equal(sent.length, before + 2, 'and keeps doing so')
  await state.stop()
  time.advance(300_000)
  t.equal(sent.length, before + 2, 'stopped: no more heartbeats')
})
