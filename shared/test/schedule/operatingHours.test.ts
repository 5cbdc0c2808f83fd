import t from 'tap'
import { type OperatingHours, panelIntentAt, validateOperatingHours } from '../../src/schedule/index.js'

const at = (iso: string) => new Date(iso)
const intent = (h: OperatingHours, iso: string, zone: string) => {
  const r = panelIntentAt(h, at(iso), zone)
  return [r.power, r.nextChangeAt?.toISOString() ?? null]
}
const weekdays: OperatingHours = { weekly: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], on: '07:00', off: '22:00' }], exceptions: [] }

t.test('Berlin: on at 07:00 local, which is 06:00Z on 27 March 2027 and 05:00Z on 28 March (spring forward)', async (t) => {
  t.same(intent(weekdays, '2027-03-27T05:00:00Z', 'Europe/Berlin'), ['off', '2027-03-27T06:00:00.000Z'])
  t.same(intent(weekdays, '2027-03-27T06:00:00Z', 'Europe/Berlin'), ['on', '2027-03-27T21:00:00.000Z'])
  t.same(intent(weekdays, '2027-03-27T21:00:00Z', 'Europe/Berlin'), ['off', '2027-03-28T05:00:00.000Z'])
  t.same(intent(weekdays, '2027-03-28T05:00:00Z', 'Europe/Berlin'), ['on', '2027-03-28T20:00:00.000Z'])
})

t.test('Berlin: a window into the skipped hour ends at the first instant after it; one over the repeated hour ends at its second 02:30', async (t) => {
  const gap: OperatingHours = { weekly: [{ days: ['sun'], on: '01:30', off: '02:30' }], exceptions: [] }
  t.same(intent(gap, '2027-03-28T00:00:00Z', 'Europe/Berlin'), ['off', '2027-03-28T00:30:00.000Z'])
  t.same(intent(gap, '2027-03-28T00:30:00Z', 'Europe/Berlin'), ['on', '2027-03-28T01:00:00.000Z'], '02:30 does not exist: 03:00 CEST')
  const fall: OperatingHours = { weekly: [{ days: ['sun'], on: '01:00', off: '02:30' }], exceptions: [] }
  // 31 October 2027: 02:00–03:00 happens twice; an ambiguous time means its first occurrence.
  t.same(intent(fall, '2027-10-30T23:00:00Z', 'Europe/Berlin'), ['on', '2027-10-31T00:30:00.000Z'])
})

t.test('Sydney (southern hemisphere): 07:00 is 20:00Z before DST ends on 4 April 2027 and 21:00Z after', async (t) => {
  t.same(intent(weekdays, '2027-04-02T19:00:00Z', 'Australia/Sydney'), ['off', '2027-04-02T20:00:00.000Z'])
  t.same(intent(weekdays, '2027-04-03T12:00:00Z', 'Australia/Sydney'), ['off', '2027-04-03T21:00:00.000Z'])
})

t.test('Kolkata (+05:30): 07:00 is 01:30Z; overnight hours run past midnight', async (t) => {
  t.same(intent(weekdays, '2027-01-04T00:00:00Z', 'Asia/Kolkata'), ['off', '2027-01-04T01:30:00.000Z'])
  const night: OperatingHours = { weekly: [{ days: ['fri'], on: '20:00', off: '02:00' }], exceptions: [] }
  // Friday 2027-01-08 20:00 IST = 14:30Z; the window ends Saturday 02:00 IST = Friday 20:30Z.
  t.same(intent(night, '2027-01-08T15:00:00Z', 'Asia/Kolkata'), ['on', '2027-01-08T20:30:00.000Z'])
})

t.test('exceptions: a day off, and other hours one day', async (t) => {
  const h: OperatingHours = {
    ...weekdays,
    exceptions: [
      { date: '2026-12-25', off: true },
      { date: '2026-12-24', on: '08:00', off: '14:00' },
    ],
  }
  t.same(intent(h, '2026-12-24T06:30:00Z', 'UTC'), ['off', '2026-12-24T08:00:00.000Z'], 'not 07:00 on the 24th')
  t.same(intent(h, '2026-12-24T08:00:00Z', 'UTC'), ['on', '2026-12-24T14:00:00.000Z'])
  t.same(intent(h, '2026-12-24T14:00:00Z', 'UTC'), ['off', '2026-12-26T07:00:00.000Z'], 'off through Christmas day')
  t.same(intent({ weekly: [], exceptions: [] }, '2026-12-24T14:00:00Z', 'UTC'), ['off', null], 'no hours: off, for ever')
})

t.test('validation names each bad field', async (t) => {
  t.same(validateOperatingHours(weekdays), [])
  t.same(
    validateOperatingHours({
      weekly: [{ days: ['mon', 'funday'], on: '25:00', off: '22:00' }],
      exceptions: [{ date: '2026-02-30', off: true }, { date: '2026-03-01' }],
    }).map((i) => i.message),
    [
      'weekly[0].days[1]: "funday" is not a day; use sun, mon, tue, wed, thu, fri, sat',
      'weekly[0].on: "25:00" is not a time; use HH:MM from 00:00 to 24:00',
      'exceptions[0].date: "2026-02-30" is not a date; use YYYY-MM-DD',
      'exceptions[1]: must be {date, off: true} or {date, on, off}',
    ],
  )
  t.same(
    validateOperatingHours([]).map((i) => i.message),
    ['operating hours must be an object with weekly and exceptions'],
  )
})
