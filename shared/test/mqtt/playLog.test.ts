// The play-log batch contract: bounds (records per batch, every field), real dates and
// start ≤ end, unknown fields dropped, and a batch at its bounds still fits one message.
import t from 'tap'
import { MAX_PAYLOAD_BYTES, PLAY_LOG_LIMITS, encodeMessage, parseForTopic, parsePlayLogBatch, topics, validatePlayRecord } from '../../src/mqtt/index.js'

const rec = (extra: Record<string, unknown> = {}) => ({
  screenId: 'scr_1',
  source: 'cast',
  contentKind: 'playlist',
  contentId: 'pl_1',
  castId: 'cast_1',
  emergencyId: null,
  itemKind: 'media',
  itemId: 'med_1',
  zone: null,
  startedAt: '2026-06-01T10:00:00.000Z',
  endedAt: '2026-06-01T10:00:10.000Z',
  durationMs: 10_000,
  ...extra,
})

t.test('a valid batch parses; unknown fields are dropped', async (t) => {
  const r = parsePlayLogBatch(encodeMessage({ batchId: 'b', records: [rec({ html: '<b>' })], extra: 1 }))
  t.ok(r.ok)
  if (r.ok) t.same(r.value, { batchId: 'b', records: [rec()] })
  t.ok(parseForTopic('play-log', JSON.stringify({ batchId: 'b', records: [rec()] })).ok)
  t.equal(topics.playLog('scr_1'), 'svc/v1/screens/scr_1/play-log')
})

t.test('bounds and semantics', async (t) => {
  const id = 'x'.repeat(PLAY_LOG_LIMITS.idLength + 1)
  const bad: Array<[string, unknown]> = [
    ['no records', { batchId: 'b', records: [] }],
    ['too many records', { batchId: 'b', records: Array.from({ length: PLAY_LOG_LIMITS.maxRecords + 1 }, () => rec()) }],
    ['no batchId', { records: [rec()] }],
    ['long itemId', { batchId: 'b', records: [rec({ itemId: id })] }],
    ['long source', { batchId: 'b', records: [rec({ source: 's'.repeat(PLAY_LOG_LIMITS.kindLength + 1) })] }],
    ['long zone', { batchId: 'b', records: [rec({ zone: 'z'.repeat(PLAY_LOG_LIMITS.zoneLength + 1) })] }],
    ['empty contentId', { batchId: 'b', records: [rec({ contentId: '' })] }],
    ['negative duration', { batchId: 'b', records: [rec({ durationMs: -1 })] }],
    ['huge duration', { batchId: 'b', records: [rec({ durationMs: PLAY_LOG_LIMITS.maxDurationMs + 1 })] }],
    ['not a date', { batchId: 'b', records: [rec({ startedAt: 'yesterday' })] }],
    ['ends before it starts', { batchId: 'b', records: [rec({ endedAt: '2026-06-01T09:59:59.999Z' })] }],
    ['castId missing', { batchId: 'b', records: [Object.fromEntries(Object.entries(rec()).filter(([k]) => k !== 'castId'))] }],
  ]
  for (const [name, v] of bad) {
    const r = parsePlayLogBatch(JSON.stringify(v))
    t.notOk(r.ok, name)
  }
  t.notOk(validatePlayRecord(rec({ endedAt: '2026-06-01T09:00:00Z' })).ok)
  t.ok(validatePlayRecord(rec()).ok)
})

t.test('a batch at its bounds fits one message', async (t) => {
  const long = (n: number) => 'a'.repeat(n)
  const big = rec({
    screenId: long(PLAY_LOG_LIMITS.idLength),
    source: long(PLAY_LOG_LIMITS.kindLength),
    contentKind: long(PLAY_LOG_LIMITS.kindLength),
    contentId: long(PLAY_LOG_LIMITS.idLength),
    castId: long(PLAY_LOG_LIMITS.idLength),
    emergencyId: long(PLAY_LOG_LIMITS.idLength),
    itemKind: long(PLAY_LOG_LIMITS.kindLength),
    itemId: long(PLAY_LOG_LIMITS.idLength),
    zone: long(PLAY_LOG_LIMITS.zoneLength),
    startedAt: '2026-06-01T10:00:00.123456789+05:30',
    endedAt: '2026-06-01T10:00:10.123456789+05:30',
    durationMs: PLAY_LOG_LIMITS.maxDurationMs,
  })
  const payload = encodeMessage({ batchId: long(PLAY_LOG_LIMITS.batchIdLength), records: Array.from({ length: PLAY_LOG_LIMITS.maxRecords }, () => big) })
  t.ok(parsePlayLogBatch(payload).ok, 'valid')
  t.ok(payload.byteLength < MAX_PAYLOAD_BYTES / 2, `${payload.byteLength} bytes, well under ${MAX_PAYLOAD_BYTES}`)
})
