// The play log's bounds on a real disk: past its size bound the file is cut from the front
// (acknowledged plays first, then the oldest unsent ones, with a warning) down to half the
// bound; plays older than the age bound go on start and hourly; a batch read before a trim
// is acknowledged correctly after it; a new PlayLog (an agent restart) keeps the cursor.
import t from 'tap'
import fs from 'node:fs'
import { PlayLog } from '../../src/playback/PlayLog.js'
import { FakeTime, captureLog, tempDir } from '../helpers.js'

const play = (itemId: string) => ({
  screenId: 'scr_1',
  source: 'schedule',
  contentKind: 'playlist',
  contentId: 'pl_1',
  castId: null,
  emergencyId: null,
  itemKind: 'media',
  itemId,
  zone: null,
})

function record(pl: PlayLog, time: FakeTime, itemId: string, lengthMs = 1000): void {
  pl.start('1:main', play(itemId))
  time.advance(lengthMs)
  pl.end('1:main')
}

t.test('over the size bound the oldest plays are cut, acknowledged ones first; the cursor follows', async (t) => {
  const dataDir = tempDir(t)
  const time = new FakeTime('2026-01-01T10:00:00Z')
  const { log, lines } = captureLog()
  const pl = new PlayLog({ dataDir, log, clock: time.clock, maxBytes: 4000 })
  for (let i = 0; i < 10; i++) record(pl, time, `m${i}`)
  await pl.flush()
  const lineBytes = fs.statSync(pl.file).size / 10
  t.ok(lineBytes > 150 && lineBytes < 400, `a record is ~${Math.round(lineBytes)} bytes`)
  // Six sent and acknowledged; a batch of the next two read but not yet acknowledged.
  await pl.ack((await pl.batch('scr_1', 6)).cursor)
  const inFlight = await pl.batch('scr_1', 2)
  t.same(
    inFlight.records.map((r) => r.itemId),
    ['m6', 'm7'],
  )
  // Appends past 4000 bytes: the file is cut to at most 2000 bytes.
  let i = 10
  let trimmedOnce = false
  for (let guard = 0; guard < 40 && !trimmedOnce; guard++) {
    const before = fs.statSync(pl.file).size
    record(pl, time, `m${i++}`)
    await pl.flush()
    trimmedOnce = fs.statSync(pl.file).size < before
  }
  t.ok(trimmedOnce, `the file was cut once it passed 4000 bytes (after m${i - 1})`)
  const size = fs.statSync(pl.file).size
  t.ok(size <= 2000, `cut to ${size} bytes (at most half the bound)`)
  t.ok(
    lines.some((l) => l.msg === 'play log trimmed'),
    'trimmed',
  )
  const kept = (await pl.all()).map((r) => r.itemId)
  t.equal(kept.at(-1), `m${i - 1}`, 'the newest play is kept')
  t.ok(pl.droppedUnsent > 0, `${pl.droppedUnsent} unsent plays were dropped to stay in bounds`)
  t.ok(
    lines.some((l) => l.msg === 'plays never sent were cut from the play log (over its size or age bound)'),
    'with a warning',
  )
  // The batch read before the trim is acknowledged: the next batch starts at the first kept
  // record not yet sent (nothing re-sent before it, nothing kept skipped).
  await pl.ack(inFlight.cursor)
  const next = await pl.batch('scr_1', 100)
  const firstUnsent = Math.max(8, Number(kept[0]!.slice(1)))
  t.same(
    next.records.map((r) => r.itemId),
    kept.filter((id) => Number(id.slice(1)) >= firstUnsent),
    'after the trim the cursor still points just past what was acknowledged',
  )
  await pl.ack(next.cursor)
  const again = new PlayLog({ dataDir, log, clock: time.clock, maxBytes: 4000 })
  t.same((await again.batch('scr_1')).records, [], 'a restart keeps the cursor')
  t.same(
    (await again.all()).map((r) => r.itemId),
    kept,
    'and the file',
  )
})

t.test('while under the size bound, acknowledged plays stay; plays older than the age bound go on start and hourly', async (t) => {
  const dataDir = tempDir(t)
  const time = new FakeTime('2026-01-01T10:00:00Z')
  const { log } = captureLog()
  const day = 86_400_000
  const pl = new PlayLog({ dataDir, log, clock: time.clock, maxAgeMs: 2 * day })
  record(pl, time, 'old1')
  record(pl, time, 'old2')
  await pl.ack((await pl.batch('scr_1')).cursor)
  time.advance(day)
  record(pl, time, 'mid')
  await pl.flush()
  t.same(
    (await pl.all()).map((r) => r.itemId),
    ['old1', 'old2', 'mid'],
    'nothing cut while in bounds (acknowledged plays stay)',
  )
  // A restart 1.5 days later: old1 and old2 are past two days; `mid` is not.
  time.advance(day + day / 2)
  const restarted = new PlayLog({ dataDir, log, clock: time.clock, maxAgeMs: 2 * day })
  t.equal(await restarted.trim(), 2, 'two plays past the age bound cut on start')
  t.same(
    (await restarted.batch('scr_1')).records.map((r) => r.itemId),
    ['mid'],
    'the unsent play is still to send, once',
  )
  // Running: an append more than an hour after the last check applies the age bound.
  record(restarted, time, 'new')
  await restarted.flush()
  time.advance(day)
  record(restarted, time, 'newer')
  await restarted.flush()
  t.same(
    (await restarted.all()).map((r) => r.itemId),
    ['new', 'newer'],
    'the play past two days went with the hourly check',
  )
  t.equal(restarted.droppedUnsent, 1, 'it was never sent: counted')
})
