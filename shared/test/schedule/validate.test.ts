import t from 'tap'
import { Value } from '@sinclair/typebox/value'
import { ScheduleSchema, evaluateSchedule, isValidSchedule, validateSchedule } from '../../src/schedule/index.js'

const good = {
  timezone: 'Europe/London',
  fallback: { kind: 'playlist', id: 'pl_1' },
  rules: [
    { id: 'r1', content: { kind: 'media', id: 'med_1' }, priority: 2, days: [1, 2, 3], start: '09:00', end: '17:30' },
    { id: 'r2', content: { kind: 'signage', id: 'sig_1' }, priority: 1, dateFrom: '2026-02-28', dateTo: '2026-03-01', end: '24:00' },
  ],
}

t.test('a valid schedule has no issues and passes the TypeBox schema', async (t) => {
  t.same(validateSchedule(good), [])
  t.ok(isValidSchedule(good))
  t.ok(Value.Check(ScheduleSchema, good))
  t.same(validateSchedule({ rules: [], fallback: null }), [])
})

t.test('each problem names its field', async (t) => {
  const issues = validateSchedule({
    timezone: 'Mars/Olympus',
    fallback: { kind: 'video', id: '' },
    rules: [
      { id: 'a', content: { kind: 'media', id: 'm' }, priority: 1, start: '25:00', end: '9:00', days: [7, 1.5, 'mon'] },
      { id: 'a', content: null, priority: 'high', dateFrom: '2026-03-02', dateTo: '2026-03-01' },
      { id: 'c', content: { kind: 'media', id: 'm' }, priority: 1, dateFrom: '2026-02-30', days: [], enabled: 'yes' },
      'nope',
    ],
  })
  const fields = issues.map((i) => i.field)
  t.same(fields.sort(), [
    'fallback.id',
    'fallback.kind',
    'rules[0].days[0]',
    'rules[0].days[1]',
    'rules[0].days[2]',
    'rules[0].end',
    'rules[0].start',
    'rules[1].content',
    'rules[1].dateFrom',
    'rules[1].id',
    'rules[1].priority',
    'rules[2].dateFrom',
    'rules[2].days',
    'rules[2].enabled',
    'rules[3]',
    'timezone',
  ])
  for (const i of issues) t.ok(i.message.startsWith(`${i.field}: `), i.message)
  const msg = (f: string) => issues.find((i) => i.field === f)?.message ?? ''
  t.match(msg('timezone'), /unknown time zone "Mars\/Olympus"/)
  t.match(msg('rules[0].start'), /"25:00" is not a time/)
  t.match(msg('rules[1].dateFrom'), /is after dateTo/)
  t.match(msg('rules[1].id'), /duplicates rules\[0\]\.id/)
  t.match(msg('rules[0].days[0]'), /7 is not a day/)
  t.match(msg('rules[2].dateFrom'), /"2026-02-30" is not a date/)
})

t.test('whole-value problems', async (t) => {
  t.same(
    validateSchedule(null).map((i) => i.field),
    [''],
  )
  t.same(
    validateSchedule({ fallback: null }).map((i) => i.field),
    ['rules'],
  )
  t.same(
    validateSchedule({ rules: [] }).map((i) => i.field),
    ['fallback'],
  )
  t.same(
    validateSchedule({ rules: [], fallback: null, timezone: 5 }).map((i) => i.field),
    ['timezone'],
  )
})

t.test('24:00 is only an end', async (t) => {
  const s = { rules: [{ id: 'x', content: { kind: 'app', id: 'a' }, priority: 0, start: '24:00' }], fallback: null }
  t.same(
    validateSchedule(s).map((i) => i.field),
    ['rules[0].start'],
  )
})

t.test('a range ending beyond the horizon asks for a re-check at the horizon', async (t) => {
  const s = {
    rules: [{ id: 'x', content: { kind: 'app' as const, id: 'a' }, priority: 0, dateTo: '2026-12-31' }],
    fallback: null,
  }
  const r = evaluateSchedule(s, new Date('2026-06-01T00:00:00Z'), 'UTC')
  t.equal(r.ruleId, 'x')
  t.equal(r.nextChangeAt?.toISOString(), '2026-06-09T00:00:00.000Z')
})
