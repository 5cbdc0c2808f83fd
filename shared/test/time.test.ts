// The shared clock and timers: ManualClock moves only when told, firing due timers in
// time order; wait() resolves on the timers or at once on abort.
import t from 'tap'
import { ManualClock, systemClock, wait, type Clock, type Timers } from '../src/index.js'

t.test('ManualClock: now, set, and timers fired in time order by advance()', async (t) => {
  const clock = new ManualClock('2026-03-01T00:00:00.000Z')
  t.equal(clock.now().toISOString(), '2026-03-01T00:00:00.000Z')
  const fired: string[] = []
  clock.setTimer(() => fired.push(`b@${clock.nowMs}`), 200)
  clock.setTimer(() => fired.push(`a@${clock.nowMs}`), 100)
  const c = clock.setTimer(() => fired.push('cleared'), 150)
  clock.clearTimer(c)
  clock.advance(99)
  t.same(fired, [])
  clock.advance(150)
  t.same(fired, [`a@${Date.parse('2026-03-01T00:00:00.100Z')}`, `b@${Date.parse('2026-03-01T00:00:00.200Z')}`])
  t.equal(clock.now().toISOString(), '2026-03-01T00:00:00.249Z')
  t.same(clock.delays, [200, 100, 150])
  t.equal(clock.pending, 0)
  clock.set('2026-04-01T00:00:00.000Z')
  t.equal(clock.now().toISOString(), '2026-04-01T00:00:00.000Z')
})

t.test('ManualClock: a timer set by a firing timer fires in the same advance when due', async (t) => {
  const clock = new ManualClock(0)
  const fired: number[] = []
  clock.setTimer(() => {
    fired.push(clock.nowMs)
    clock.setTimer(() => fired.push(clock.nowMs), 50)
  }, 50)
  clock.advance(120)
  t.same(fired, [50, 100])
})

t.test('wait(): resolves on the timers, or at once when aborted', async (t) => {
  const clock = new ManualClock(0)
  let done = false
  const p = wait(clock, 1000).then(() => (done = true))
  await clock.advanceSettling(999)
  t.equal(done, false)
  await clock.advanceSettling(1)
  await p
  t.equal(done, true)
  const ac = new AbortController()
  const q = wait(clock, 60_000, ac.signal)
  ac.abort()
  await q
  t.equal(clock.pending, 0, 'the aborted wait cleared its timer')
})

t.test('systemClock is a Clock and Timers on the real time', async (t) => {
  const c: Clock & Timers = systemClock
  const before = Date.now()
  await wait(c, 5)
  t.ok(c.now().getTime() >= before + 4)
})
