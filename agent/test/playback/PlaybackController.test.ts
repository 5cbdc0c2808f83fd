import t from 'tap'
import type { DesiredState } from '@svc/shared/mqtt/index'
import type { PlaybackDecision } from '@svc/shared/playback/index'
import { PlaybackController } from '../../src/playback/index.js'
import { FakeTime } from '../helpers.js'

function desired(version: number, extra: Partial<DesiredState> = {}): DesiredState {
  return {
    version,
    screenId: 'scr_1',
    timezone: 'UTC',
    assignment: { contentKind: 'playlist', contentId: 'pl_main' },
    schedule: null,
    casts: [],
    emergency: null,
    panel: null,
    generatedAt: '2026-03-08T00:00:00.000Z',
    ...extra,
  }
}

function setup(iso = '2026-03-08T12:00:00.000Z', maxDelayMs?: number) {
  const time = new FakeTime(iso)
  const ctl = new PlaybackController({ clock: time.clock, setTimer: time.setTimer, clearTimer: time.clearTimer, ...(maxDelayMs ? { maxDelayMs } : {}) })
  const changes: PlaybackDecision[] = []
  ctl.on('change', (d) => changes.push(d))
  const what = () => changes.map((d) => `${d.source}:${d.contentId}`)
  return { time, ctl, changes, what }
}

t.test('constructor checks its dependencies', async (t) => {
  t.throws(() => new PlaybackController({} as never), TypeError)
  const time = new FakeTime('2026-03-08T12:00:00Z')
  t.throws(() => new PlaybackController({ clock: time.clock, setTimer: time.setTimer } as never), TypeError)
  t.throws(() => new PlaybackController({ clock: time.clock, setTimer: time.setTimer, clearTimer: time.clearTimer, maxDelayMs: 0 }), TypeError)
})

t.test('applies only newer versions', async (t) => {
  const { ctl, what } = setup()
  ctl.start()
  t.equal(ctl.version, 0)
  t.equal(ctl.decision.source, 'none')
  t.ok(ctl.apply(desired(3)))
  t.same(what(), ['assignment:pl_main'])
  t.notOk(ctl.apply(desired(3, { assignment: { contentKind: 'media', contentId: 'med_dup' } })), 'same version ignored')
  t.notOk(ctl.apply(desired(2, { assignment: { contentKind: 'media', contentId: 'med_old' } })), 'older version ignored')
  t.equal(ctl.decision.contentId, 'pl_main')
  t.ok(ctl.apply(desired(4)), 'newer version with the same content')
  t.same(what(), ['assignment:pl_main'], 'no change event when the decision is unchanged')
  t.ok(ctl.apply(desired(5, { assignment: { contentKind: 'media', contentId: 'med_new' } })))
  t.same(what(), ['assignment:pl_main', 'assignment:med_new'])
  t.equal(ctl.version, 5)
  t.equal(ctl.desired?.version, 5)
})

t.test('a cast expires on the controller timer while offline', async (t) => {
  const { time, ctl, what } = setup('2026-03-08T12:00:00.000Z', 10 * 60_000)
  ctl.start()
  ctl.apply(
    desired(1, {
      casts: [
        { id: 'c2', contentKind: 'media', contentId: 'med_c2', triggeredAt: '2026-03-08T11:59:00Z', expiresAt: '2026-03-08T12:05:00Z' },
        { id: 'c1', contentKind: 'media', contentId: 'med_c1', triggeredAt: '2026-03-08T11:00:00Z', expiresAt: '2026-03-08T12:07:30Z' },
      ],
    }),
  )
  t.same(what(), ['cast:med_c2'])
  t.equal(time.delays.at(-1), 5 * 60_000, 'timer set for the expiry')
  time.advance(5 * 60_000 - 1)
  t.same(what(), ['cast:med_c2'], 'not a millisecond early')
  time.advance(1)
  t.same(what(), ['cast:med_c2', 'cast:med_c1'])
  t.equal(ctl.decision.castId, 'c1')
  time.advanceTo('2026-03-08T12:07:30.000Z')
  t.same(what(), ['cast:med_c2', 'cast:med_c1', 'assignment:pl_main'])
  t.equal(time.pending, 1, 'one timer at a time')
})

t.test('schedule boundaries drive the timer; long waits are capped', async (t) => {
  const { time, ctl, changes, what } = setup('2026-03-08T10:00:00.000Z')
  ctl.start()
  ctl.apply(
    desired(1, {
      timezone: 'Europe/London',
      assignment: { contentKind: 'schedule', contentId: 'sch_1' },
      schedule: {
        rules: [{ id: 'r', content: { kind: 'playlist', id: 'pl_r' }, priority: 1, start: '11:00', end: '11:30' }],
        fallback: { kind: 'media', id: 'med_fb' },
      },
    }),
  )
  t.same(what(), ['schedule:med_fb'])
  t.equal(time.delays.at(-1), 60_000, 'capped at maxDelayMs (default 60 s)')
  time.advanceTo('2026-03-08T11:00:00.000Z')
  t.same(what(), ['schedule:med_fb', 'schedule:pl_r'])
  t.equal(changes.at(-1)?.ruleId, 'r')
  time.advanceTo('2026-03-08T11:30:00.000Z')
  t.same(what(), ['schedule:med_fb', 'schedule:pl_r', 'schedule:med_fb'])
  t.equal(changes.length, 3, 'capped re-checks emit nothing when nothing changed')
})

t.test('a wall-clock jump is noticed at the next re-check', async (t) => {
  const { time, ctl, what } = setup('1970-01-01T00:00:00.000Z')
  ctl.start()
  ctl.apply(
    desired(1, { casts: [{ id: 'c', contentKind: 'media', contentId: 'med_c', triggeredAt: '2026-03-08T11:00:00Z', expiresAt: '2026-03-08T12:00:00Z' }] }),
  )
  t.same(what(), ['cast:med_c'], 'a device booted at 1970 thinks the cast runs')
  time.nowMs = Date.parse('2026-03-08T13:00:00Z') // NTP sync: wall clock jumps, timers do not
  time.advance(60_000)
  t.same(what(), ['cast:med_c', 'assignment:pl_main'])
  ctl.recompute()
  t.same(what(), ['cast:med_c', 'assignment:pl_main'], 'recompute without change emits nothing')
})

t.test('emergency over a cast, cast resumes after clear', async (t) => {
  const { ctl, what } = setup()
  ctl.start()
  const c = { id: 'c', contentKind: 'media' as const, contentId: 'med_c', triggeredAt: '2026-03-08T11:00:00Z', expiresAt: null }
  ctl.apply(desired(1, { casts: [c] }))
  ctl.apply(desired(2, { casts: [c], emergency: { id: 'e', contentKind: 'media', contentId: 'med_e', startedAt: '2026-03-08T12:00:00Z' } }))
  ctl.apply(desired(3, { casts: [c] }))
  t.same(what(), ['cast:med_c', 'emergency:med_e', 'cast:med_c'])
})

t.test('stop cancels the timer; start is idempotent; nothing runs before start', async (t) => {
  const { time, ctl, what } = setup()
  ctl.apply(desired(1))
  t.same(what(), [], 'applied but not started')
  t.equal(time.pending, 0)
  ctl.start()
  ctl.start()
  t.same(what(), ['assignment:pl_main'])
  t.equal(time.pending, 1)
  ctl.stop()
  t.equal(time.pending, 0)
  ctl.stop()
  time.advance(3_600_000)
  t.equal(ctl.decision.contentId, 'pl_main', 'last decision stays readable')
})
