import t from 'tap'
import { parseDesiredState, parseReported, type DesiredState } from '../../src/mqtt/index.js'
import { decidePlayback, liveCasts, toPlaying } from '../../src/playback/index.js'

const NOW = new Date('2026-03-08T12:00:00.000Z')

function desired(extra: Partial<DesiredState> = {}): DesiredState {
  return {
    version: 1,
    screenId: 'scr_1',
    timezone: 'UTC',
    assignment: { contentKind: 'playlist', contentId: 'pl_main', content: { name: 'Main' } },
    schedule: null,
    casts: [],
    emergency: null,
    panel: null,
    generatedAt: '2026-03-08T00:00:00.000Z',
    ...extra,
  }
}

const cast = (id: string, triggeredAt: string, expiresAt: string | null, contentId = `med_${id}`) => ({
  id,
  contentKind: 'media' as const,
  contentId,
  triggeredAt,
  expiresAt,
})

t.test('nothing known: nothing plays', async (t) => {
  t.same(decidePlayback(null, NOW), {
    source: 'none',
    contentKind: null,
    contentId: null,
    content: null,
    castId: null,
    emergencyId: null,
    ruleId: null,
    message: null,
    nextChangeAt: null,
  })
})

t.test('plain assignment', async (t) => {
  const d = decidePlayback(desired(), NOW)
  t.match(d, { source: 'assignment', contentKind: 'playlist', contentId: 'pl_main', content: { name: 'Main' }, nextChangeAt: null })
  t.same(decidePlayback(desired({ assignment: null }), NOW).source, 'none')
})

t.test('newest unexpired cast wins; expiry sets nextChangeAt', async (t) => {
  const d = decidePlayback(
    desired({
      casts: [cast('c2', '2026-03-08T11:00:00Z', '2026-03-08T13:00:00Z'), cast('c1', '2026-03-08T10:00:00Z', null)],
    }),
    NOW,
  )
  t.match(d, { source: 'cast', castId: 'c2', contentId: 'med_c2' })
  t.equal(d.nextChangeAt?.toISOString(), '2026-03-08T13:00:00.000Z')
  const later = decidePlayback(
    desired({ casts: [cast('c2', '2026-03-08T11:00:00Z', '2026-03-08T13:00:00Z'), cast('c1', '2026-03-08T10:00:00Z', null)] }),
    new Date('2026-03-08T13:00:00Z'),
  )
  t.match(later, { source: 'cast', castId: 'c1', nextChangeAt: null }, 'the older cast resumes when the newer one ends')
})

t.test('expired casts are ignored even if the cloud still lists them', async (t) => {
  const d = decidePlayback(desired({ casts: [cast('old', '2026-03-08T09:00:00Z', '2026-03-08T10:00:00Z')] }), NOW)
  t.match(d, { source: 'assignment', castId: null, nextChangeAt: null })
  t.same(liveCasts([cast('x', '2026-03-08T09:00:00Z', '2026-03-08T12:00:00Z')], NOW), [], 'expiresAt itself is already over')
})

t.test('newest is by triggeredAt, not list order', async (t) => {
  const d = decidePlayback(desired({ casts: [cast('older', '2026-03-08T08:00:00Z', null), cast('newer', '2026-03-08T09:00:00+00:00', null)] }), NOW)
  t.equal(d.castId, 'newer')
})

t.test('emergency beats casts and stays without expiry', async (t) => {
  const d = decidePlayback(
    desired({
      casts: [cast('c', '2026-03-08T11:00:00Z', '2026-03-08T12:30:00Z')],
      emergency: { id: 'emg_1', contentKind: 'media', contentId: 'med_fire', message: 'Leave the building', startedAt: '2026-03-08T11:30:00Z' },
    }),
    NOW,
  )
  t.match(d, { source: 'emergency', emergencyId: 'emg_1', contentId: 'med_fire', message: 'Leave the building', castId: null, nextChangeAt: null })
  t.same(toPlaying(d), { source: 'emergency', contentKind: 'media', contentId: 'med_fire', emergencyId: 'emg_1' })
})

const schedule = {
  rules: [{ id: 'lunch', content: { kind: 'playlist' as const, id: 'pl_lunch' }, priority: 1, start: '11:00', end: '14:00' }],
  fallback: { kind: 'media' as const, id: 'med_idle' },
}

t.test('schedule assignment is evaluated in the screen zone with library lookup', async (t) => {
  const base = desired({
    timezone: 'America/New_York',
    assignment: { contentKind: 'schedule', contentId: 'sch_1' },
    schedule,
    library: [{ kind: 'playlist', id: 'pl_lunch', content: { name: 'Lunch menu' } }],
  })
  // 12:00Z is 08:00 EDT on 2026-03-08.
  const morning = decidePlayback(base, NOW)
  t.match(morning, { source: 'schedule', contentKind: 'media', contentId: 'med_idle', ruleId: null, content: null })
  t.equal(morning.nextChangeAt?.toISOString(), '2026-03-08T15:00:00.000Z')
  const lunch = decidePlayback(base, new Date('2026-03-08T15:00:00Z'))
  t.match(lunch, { source: 'schedule', contentId: 'pl_lunch', ruleId: 'lunch', content: { name: 'Lunch menu' } })
  t.same(toPlaying(lunch), { source: 'schedule', contentKind: 'playlist', contentId: 'pl_lunch', ruleId: 'lunch' })
  const empty = decidePlayback({ ...base, schedule: { ...schedule, fallback: null } }, NOW)
  t.match(empty, { source: 'none', contentId: null })
  t.equal(empty.nextChangeAt?.toISOString(), '2026-03-08T15:00:00.000Z', 'still wakes up when the window opens')
  t.same(toPlaying(empty), { source: 'none', contentKind: null, contentId: null })
})

t.test('a cast of a schedule plays what the schedule says; the earliest change wins', async (t) => {
  const d = desired({
    casts: [
      {
        id: 'c',
        contentKind: 'schedule',
        contentId: 'sch_2',
        content: { schedule: { ...schedule, fallback: null } },
        triggeredAt: '2026-03-08T11:00:00Z',
        expiresAt: '2026-03-08T20:00:00Z',
      },
    ],
  })
  const lunch = decidePlayback(d, NOW)
  t.match(lunch, { source: 'cast', castId: 'c', contentKind: 'playlist', contentId: 'pl_lunch', ruleId: 'lunch' })
  t.equal(lunch.nextChangeAt?.toISOString(), '2026-03-08T14:00:00.000Z', 'window end comes before expiry')
  const after = decidePlayback(d, new Date('2026-03-08T14:00:00Z'))
  t.match(after, { source: 'assignment', contentId: 'pl_main' }, 'an empty schedule cast lets the layer below show')
  t.equal(after.nextChangeAt?.toISOString(), '2026-03-08T20:00:00.000Z', 'but the cast still wakes us at expiry')
  const unresolved = decidePlayback(desired({ casts: [{ ...d.casts[0]!, content: {} }] }), NOW)
  t.match(unresolved, { source: 'assignment' }, 'a schedule cast without its schedule cannot play')
})

t.test('emergency of a schedule uses the schedule; paused casts still matter afterwards', async (t) => {
  const d = decidePlayback(
    desired({
      emergency: { id: 'emg', contentKind: 'schedule', contentId: 'sch', content: { schedule }, startedAt: '2026-03-08T11:00:00Z' },
      casts: [cast('c', '2026-03-08T10:00:00Z', '2026-03-08T12:30:00Z')],
    }),
    NOW,
  )
  t.match(d, { source: 'emergency', contentId: 'pl_lunch', emergencyId: 'emg', message: null })
  t.equal(d.nextChangeAt?.toISOString(), '2026-03-08T14:00:00.000Z')
})

t.test('a banner emergency: the layer below plays, the emergency lays its message and alert over it', async (t) => {
  const alert = { severity: 'Moderate', headline: 'STORM', senderName: 'NWS', sent: '2026-03-08T11:00:00-07:00' }
  const emergency = {
    id: 'emg_1',
    contentKind: 'media' as const,
    contentId: 'med_warn',
    message: 'STORM',
    presentation: 'banner' as const,
    alert,
    startedAt: '2026-03-08T11:00:00Z',
  }
  let d = decidePlayback(desired({ emergency, casts: [cast('c1', '2026-03-08T10:00:00Z', '2026-03-08T13:00:00Z')] }), NOW)
  t.match(d, { source: 'cast', castId: 'c1', contentId: 'med_c1', emergencyId: 'emg_1', message: 'STORM', presentation: 'banner', alert })
  t.equal(d.nextChangeAt?.toISOString(), '2026-03-08T13:00:00.000Z', 'the cast below still ends on time')
  t.match(toPlaying(d), { source: 'cast', castId: 'c1', emergencyId: 'emg_1' }, 'reported with the emergency: its reach counts')
  d = decidePlayback(desired({ emergency, assignment: null }), NOW)
  t.match(d, { source: 'emergency', contentId: 'med_warn', emergencyId: 'emg_1', presentation: 'banner' }, 'nothing below: its own content')
  d = decidePlayback(desired({ emergency: { ...emergency, presentation: 'fullscreen' } }), NOW)
  t.match(d, { source: 'emergency', contentId: 'med_warn', message: 'STORM', alert })
  t.equal(d.presentation, undefined, 'full screen')
})

t.test('an emergency without content: its message alone, full screen or as a banner; an older reader sees a banner', async (t) => {
  const alert = { severity: 'Extreme', headline: 'EVACUATE', senderName: 'County', sent: '2026-03-08T11:00:00Z' }
  // As the cloud sends it: messageOnly decides; contentKind / contentId / presentation are for older agents.
  const emergency = {
    id: 'emg_m',
    contentKind: 'schedule' as const,
    contentId: 'emg_m',
    message: 'EVACUATE',
    presentation: 'banner' as const,
    alert,
    messageOnly: 'fullscreen' as const,
    startedAt: '2026-03-08T11:00:00Z',
  }
  const withCast = { emergency, casts: [cast('c1', '2026-03-08T10:00:00Z', null)] }
  let d = decidePlayback(desired(withCast), NOW)
  t.match(d, {
    source: 'emergency',
    contentKind: null,
    contentId: null,
    castId: null,
    emergencyId: 'emg_m',
    message: 'EVACUATE',
    presentation: 'message',
    alert,
  })
  t.equal(d.nextChangeAt, null)
  t.same(toPlaying(d), { source: 'emergency', contentKind: null, contentId: null, emergencyId: 'emg_m' }, 'reported as the emergency playing')
  t.ok(parseReported(JSON.stringify({ version: 1, playing: toPlaying(d), at: NOW.toISOString() })).ok, 'the report passes the contract')

  // A message-only banner: the layers below play beneath it; over nothing, the emergency still reports.
  d = decidePlayback(desired({ ...withCast, emergency: { ...emergency, messageOnly: 'banner' } }), NOW)
  t.match(d, { source: 'cast', castId: 'c1', emergencyId: 'emg_m', message: 'EVACUATE', presentation: 'banner', alert })
  d = decidePlayback(desired({ assignment: null, emergency: { ...emergency, messageOnly: 'banner' } }), NOW)
  t.match(d, { source: 'none', emergencyId: 'emg_m', presentation: 'banner' })
  t.same(toPlaying(d), { source: 'emergency', contentKind: null, contentId: null, emergencyId: 'emg_m' })

  // An agent that predates messageOnly drops the field: a schedule takeover with nothing to
  // evaluate, as a banner, so what runs beneath plays and the warning is laid over it.
  const { messageOnly: _dropped, ...older } = emergency
  d = decidePlayback(desired({ emergency: older }), NOW)
  t.match(d, { source: 'assignment', contentId: 'pl_main', emergencyId: 'emg_m', message: 'EVACUATE', presentation: 'banner' })
  t.ok(parseDesiredState(JSON.stringify(desired({ emergency }))).ok, 'the message-only state passes the contract')

  // Reports without content are the emergency's only: not a cast's, nor half-null.
  const bad = (playing: object) => parseReported(JSON.stringify({ version: 1, playing, at: NOW.toISOString() })).ok
  t.notOk(bad({ source: 'cast', contentKind: null, contentId: null, castId: 'c1' }))
  t.notOk(bad({ source: 'emergency', contentKind: null, contentId: null }))
  t.notOk(bad({ source: 'emergency', contentKind: 'media', contentId: null, emergencyId: 'emg_m' }))
  t.notOk(bad({ source: 'none', contentKind: 'media', contentId: 'med_1' }))
})
