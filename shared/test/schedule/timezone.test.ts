// The offsets kept per UTC hour answer exactly what ICU answers instant by instant: checked
// against ICU's own offset text (`longOffset`, read here without the product's code) at
// random instants over a century and at every transition, to the millisecond on either side,
// in zones with half- and quarter-hour offsets, half-hour daylight saving, offsets in
// seconds (local mean time) and a zone that skipped a whole day.
import t from 'tap'
import { instantOfLocal, localMsAt, offsetMsAt } from '../../src/schedule/index.js'
import { seededRandom } from '../../src/testing/index.js'

const ZONES = [
  'UTC',
  'Europe/London',
  'Europe/Berlin',
  'America/New_York',
  'America/St_Johns', // -3:30, daylight saving
  'Asia/Kolkata', // +5:30
  'Asia/Kathmandu', // +5:45, was +5:30
  'Australia/Lord_Howe', // +10:30, half an hour of daylight saving
  'Pacific/Chatham', // +12:45
  'Pacific/Apia', // skipped 2011-12-30
  'Africa/Monrovia', // -0:44:30 until 1972
  'Europe/Amsterdam', // +0:19:32 until 1937, +0:20 until 1940
]

const offsetText = new Map<string, Intl.DateTimeFormat>()
/** ICU's offset at an instant, from its "GMT+05:45" text: no product code involved. */
function icuOffsetMs(epochMs: number, zone: string): number {
  let f = offsetText.get(zone)
  if (!f) offsetText.set(zone, (f = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' })))
  const name = f.formatToParts(new Date(epochMs)).find((p) => p.type === 'timeZoneName')!.value
  if (name === 'GMT') return 0
  const m = /^GMT([+-])(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(name)
  if (!m) throw new Error(`unexpected offset text ${name}`)
  const ms = ((Number(m[2]) * 60 + Number(m[3])) * 60 + Number(m[4] ?? 0)) * 1000
  return m[1] === '-' ? -ms : ms
}

const HOUR = 3_600_000
const FROM = Date.UTC(1900, 0, 1)
const TO = Date.UTC(2040, 0, 1)

/** The instants (in ms) at which `zone`'s offset changes between FROM and TO, found by halving. */
function transitions(zone: string): number[] {
  const out: number[] = []
  const step = 7 * 24 * HOUR
  let before = icuOffsetMs(FROM, zone)
  for (let a = FROM; a < TO; a += step) {
    const b = a + step
    const after = icuOffsetMs(b, zone)
    if (after === before) continue
    let lo = a
    let hi = b
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2)
      if (icuOffsetMs(mid, zone) === before) lo = mid
      else hi = mid
    }
    out.push(hi)
    before = after
  }
  return out
}

t.test('at random instants from 1900 to 2040: the offset ICU gives, and the local reading with it', async (t) => {
  const rnd = seededRandom(2026)
  let wrong = 0
  for (const zone of ZONES) {
    for (let i = 0; i < 400; i++) {
      const at = FROM + Math.floor(rnd() * (TO - FROM))
      // Asked twice: the second answer comes from the kept hour.
      for (const round of [1, 2]) {
        const want = icuOffsetMs(at, zone)
        if (offsetMsAt(at, zone) !== want || localMsAt(at, zone) !== at + want) {
          wrong++
          if (wrong < 5) t.fail(`${zone} at ${new Date(at).toISOString()} (round ${round})`)
        }
      }
    }
  }
  t.equal(wrong, 0, 'every offset as ICU gives it')
})

t.test('around every transition, to the millisecond, whichever instant of the hour is asked first', async (t) => {
  let checked = 0
  let wrong = 0
  for (const zone of ZONES) {
    const found = transitions(zone)
    if (zone !== 'UTC') t.ok(found.length > 0, `${zone} has transitions`)
    for (const at of found) {
      // The hour's own edges and the instants either side of the change, asked in two orders.
      const hour = Math.floor(at / HOUR) * HOUR
      const instants = [at - 1, at, hour, hour + HOUR - 1, at + 1, at - HOUR, at + HOUR]
      for (const order of [instants, [...instants].reverse()]) {
        for (const x of order) {
          checked++
          if (offsetMsAt(x, zone) !== icuOffsetMs(x, zone)) {
            wrong++
            if (wrong < 5) t.fail(`${zone} at ${new Date(x).toISOString()}`)
          }
        }
      }
    }
  }
  t.ok(checked > 1000, `${checked} instants checked`)
  t.equal(wrong, 0, 'no kept hour hides a transition')
})

t.test('a local time in a gap and in an overlap resolves as before', async (t) => {
  // New York, 2026-03-08 02:30 does not exist: the first instant after the gap (07:00Z).
  t.equal(new Date(instantOfLocal(Date.UTC(2026, 2, 8, 2, 30), 'America/New_York')).toISOString(), '2026-03-08T07:00:00.000Z')
  // 2026-11-01 01:30 happens twice: the first (05:30Z, daylight time).
  t.equal(new Date(instantOfLocal(Date.UTC(2026, 10, 1, 1, 30), 'America/New_York')).toISOString(), '2026-11-01T05:30:00.000Z')
  // Lord Howe moves by half an hour: 2026-10-04 02:15 does not exist (15:30Z is 02:30 local).
  t.equal(new Date(instantOfLocal(Date.UTC(2026, 9, 4, 2, 15), 'Australia/Lord_Howe')).toISOString(), '2026-10-03T15:30:00.000Z')
  // Apia skipped 2011-12-30 altogether.
  t.equal(new Date(instantOfLocal(Date.UTC(2011, 11, 30, 12, 0), 'Pacific/Apia')).toISOString(), '2011-12-30T10:00:00.000Z')
})
