// PlayLogSender against a publisher whose PUBACK the test controls: nothing is acknowledged
// in the play log before the PUBACK, a failed publish acknowledges nothing, batches are
// bounded and go one at a time, and records of another screen or that the contract
// refuses are skipped without blocking the rest.
import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { PLAY_LOG_LIMITS, parsePlayLogBatch, encodeMessage } from '@svc/shared/mqtt/index'
import { PlayLog } from '../../src/playback/PlayLog.js'
import { PlayLogSender } from '../../src/playback/PlayLogSender.js'
import { FakeTime, captureLog, tempDir, until } from '../helpers.js'
import { settle } from '@svc/shared'

class Publisher {
  connected = true
  sent: unknown[] = []
  inFlight = 0
  maxInFlight = 0
  pending: Array<{ resolve: () => void; reject: (e: Error) => void }> = []
  publish(kind: 'play-log', message: unknown): Promise<void> {
    this.sent.push(message)
    this.inFlight++
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight)
    return new Promise<void>((resolve, reject) => this.pending.push({ resolve, reject })).finally(() => this.inFlight--)
  }
  /** The broker's PUBACK for the oldest message in flight (or a failure). */
  puback(err?: Error): void {
    const p = this.pending.shift()!
    if (err) p.reject(err)
    else p.resolve()
  }
}

const cursorOf = (dir: string) => (fs.existsSync(path.join(dir, 'play-log.cursor')) ? Number(fs.readFileSync(path.join(dir, 'play-log.cursor'), 'utf8')) : 0)

t.test('acknowledged only after the PUBACK, one batch at a time, bounded', async (t) => {
  const dir = tempDir(t)
  const time = new FakeTime('2026-06-01T10:00:00Z')
  const { log, lines } = captureLog(time.clock)
  const pl = new PlayLog({ dataDir: dir, log, clock: time.clock })
  const play = (itemId: string, screenId = 'scr_1') => ({
    screenId,
    source: 'assignment',
    contentKind: 'playlist',
    contentId: 'pl_1',
    castId: null,
    emergencyId: null,
    itemKind: 'media',
    itemId,
    zone: null,
  })
  const n = PLAY_LOG_LIMITS.maxRecords + 5
  for (let i = 0; i < n; i++) {
    pl.start('1:main', play(`m${i}`))
    time.advance(1000)
  }
  pl.start('1:main', play('x'.repeat(PLAY_LOG_LIMITS.idLength + 1))) // the contract refuses it
  time.advance(1000)
  pl.start('1:main', play('other', 'scr_old')) // written under an earlier pairing
  time.advance(1000)
  pl.start('1:main', play('last'))
  time.advance(1000)
  pl.endAll()
  await pl.flush()

  const pub = new Publisher()
  const sender = new PlayLogSender({ playLog: pl, link: pub, screenId: 'scr_1', log })
  sender.kick()
  sender.kick()
  await until(5 * 60_000, () => (pub.sent.length === 1 ? true : undefined))
  const first = pub.sent[0] as { records: Array<{ itemId: string }> }
  t.equal(first.records.length, PLAY_LOG_LIMITS.maxRecords, 'a full batch')
  t.ok(parsePlayLogBatch(encodeMessage(first)).ok, 'valid by the contract')
  await new Promise((r) => setTimeout(r, 50))
  t.equal(pub.sent.length, 1, 'nothing else while the first is in flight')
  t.equal(cursorOf(dir), 0, 'nothing acknowledged before the PUBACK')

  pub.puback()
  await until(5 * 60_000, () => (pub.sent.length === 2 ? true : undefined))
  const firstCursor = cursorOf(dir)
  t.ok(firstCursor > 0, 'the first batch is acknowledged after its PUBACK')
  const second = pub.sent[1] as { records: Array<{ itemId: string }> }
  t.same(
    second.records.map((r) => r.itemId),
    ['m200', 'm201', 'm202', 'm203', 'm204', 'last'],
    'the rest; the refused and the foreign records skipped',
  )
  t.ok(lines.some((l) => l.msg === 'skipping a play record the cloud would refuse'))

  // The connection drops: the publish fails, nothing more is acknowledged.
  pub.puback(new Error('connection closed'))
  await sender.idle()
  t.equal(cursorOf(dir), firstCursor, 'a failed publish acknowledges nothing')
  t.equal(pub.maxInFlight, 1, 'one message in flight at a time')

  // Offline: nothing is sent. Back online: the same batch again, then acknowledged.
  pub.connected = false
  sender.kick()
  await sender.idle()
  t.equal(pub.sent.length, 2)
  pub.connected = true
  sender.kick()
  await until(5 * 60_000, () => (pub.sent.length === 3 ? true : undefined))
  t.same(pub.sent[2], pub.sent[1], 'the unacknowledged batch is sent again, unchanged')
  pub.puback()
  await sender.idle()
  t.equal(cursorOf(dir), fs.statSync(pl.file).size, 'everything acknowledged')
  t.same((await pl.batch('scr_1')).records, [], 'nothing left to send')
})

t.test('stop waits for the batch in flight: its cursor is written before stop resolves, and nothing after; bounded', async (t) => {
  const dir = tempDir(t)
  const time = new FakeTime('2026-06-01T10:00:00Z')
  const { log } = captureLog(time.clock)
  const pl = new PlayLog({ dataDir: dir, log, clock: time.clock })
  const play = (itemId: string) => {
    pl.start('1:main', {
      screenId: 'scr_1',
      source: 'assignment',
      contentKind: 'playlist',
      contentId: 'pl_1',
      castId: null,
      emergencyId: null,
      itemKind: 'media',
      itemId,
      zone: null,
    })
    time.advance(1000)
  }
  play('a')
  play('b')
  pl.endAll()
  await pl.flush()

  const pub = new Publisher()
  const sender = new PlayLogSender({ playLog: pl, link: pub, screenId: 'scr_1', log })
  sender.kick()
  await until(5 * 60_000, () => (pub.sent.length === 1 ? true : undefined))
  let stopped = false
  const stopping = sender.stop().then(() => (stopped = true))
  await new Promise((r) => setTimeout(r, 20))
  t.notOk(stopped, 'stop waits while the batch is in flight')
  pub.puback()
  await stopping
  t.equal(cursorOf(dir), fs.statSync(pl.file).size, 'the acknowledged batch has its cursor written by the time stop resolves')
  t.equal(pub.sent.length, 1, 'nothing more is sent')

  // A batch whose PUBACK never comes (the link went down): stop gives up after its bound.
  const again = new PlayLogSender({ playLog: pl, link: pub, screenId: 'scr_1', log, timers: time })
  play('c')
  pl.endAll()
  await pl.flush()
  again.kick()
  await until(5 * 60_000, () => (pub.sent.length === 2 ? true : undefined))
  let gaveUp = false
  const givingUp = again.stop(50).then(() => (gaveUp = true))
  time.advance(49)
  await settle()
  t.notOk(gaveUp, 'stop waits for the PUBACK until its bound')
  time.advance(1)
  await givingUp
  t.ok(gaveUp, 'stop returns at its bound (50 ms on the clock) without the PUBACK')
})
