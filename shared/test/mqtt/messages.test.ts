import t from 'tap'
import {
  encodeMessage,
  parseDesiredState,
  parseForTopic,
  parseJob,
  parseJobResult,
  parseReported,
  parseStatusMessage,
  validateMessage,
  type DesiredState,
  type Job,
  type JobResult,
  type Reported,
} from '../../src/mqtt/index.js'

const AT = '2026-03-08T07:00:00.000Z'

const desired: DesiredState = {
  version: 7,
  screenId: 'scr_1',
  timezone: 'America/New_York',
  assignment: { contentKind: 'schedule', contentId: 'sch_1' },
  schedule: {
    rules: [{ id: 'r1', content: { kind: 'playlist', id: 'pl_1' }, priority: 1, days: [1, 2], start: '09:00', end: '17:00' }],
    fallback: { kind: 'media', id: 'med_1' },
  },
  library: [
    {
      kind: 'playlist',
      id: 'pl_1',
      content: { name: 'Menu', items: [{ contentKind: 'media', contentId: 'med_2', url: 'https://cdn/x.mp4', durationMs: 10000 }] },
    },
  ],
  casts: [
    { id: 'cast_2', contentKind: 'media', contentId: 'med_9', triggeredAt: AT, expiresAt: '2026-03-08T08:00:00Z' },
    { id: 'cast_1', contentKind: 'app', contentId: 'app_1', triggeredAt: '2026-03-08T06:00:00+01:00', expiresAt: null },
  ],
  emergency: null,
  panel: { protocol: 'samsung-mdc', setId: 1, pollSeconds: 60 },
  generatedAt: AT,
}

t.test('desired state round-trips through bytes', async (t) => {
  const r = parseDesiredState(encodeMessage(desired))
  t.ok(r.ok)
  if (r.ok) t.same(r.value, desired)
  t.ok(parseDesiredState(JSON.stringify(desired)).ok, 'string payloads too')
  t.ok(parseDesiredState(new Uint8Array(encodeMessage(desired))).ok, 'plain Uint8Array too')
  const open = parseDesiredState(JSON.stringify({ ...desired, futureField: { x: 1 } }))
  t.ok(open.ok, 'unknown fields are allowed (open objects)')
  const withEmergency = { ...desired, emergency: { id: 'emg_1', contentKind: 'media', contentId: 'med_e', message: 'Evacuate', startedAt: AT } }
  t.ok(validateMessage.desired(withEmergency).ok)
})

t.test('bad desired states report paths, never throw', async (t) => {
  const cases: Array<[unknown, string]> = [
    [{ ...desired, version: 1.5 }, '/version'],
    [{ ...desired, version: -1 }, '/version'],
    [{ ...desired, timezone: '' }, '/timezone'],
    [{ ...desired, casts: [{ ...desired.casts[0], expiresAt: 'tomorrow' }] }, '/casts/0/expiresAt'],
    [{ ...desired, assignment: { contentKind: 'video', contentId: 'x' } }, '/assignment/contentKind'],
    [
      { ...desired, schedule: { rules: [{ id: 'r', content: { kind: 'media', id: 'm' }, priority: 1, start: '9am' }], fallback: null } },
      '/schedule/rules/0/start',
    ],
    [{ ...desired, schedule: null }, '/schedule'],
    [{ ...desired, panel: { protocol: 'x', setId: 'one', pollSeconds: 1 } }, '/panel/setId'],
    [{ ...desired, generatedAt: '2026-13-01T00:00:00Z' }, '/generatedAt'],
    [{ ...desired, emergency: 'yes' }, '/emergency'],
  ]
  for (const [value, path] of cases) {
    const r = parseDesiredState(JSON.stringify(value))
    t.notOk(r.ok, path)
    if (!r.ok)
      t.ok(
        r.errors.some((e) => e.path === path),
        `${path} in ${JSON.stringify(r.errors)}`,
      )
  }
  const missing = parseDesiredState('{"version": 1}')
  t.notOk(missing.ok)
  if (!missing.ok) t.ok(missing.errors.some((e) => e.path === '/screenId' && /required/.test(e.message)))
})

t.test('garbage payloads', async (t) => {
  for (const p of ['', '{', 'null', '[]', '42', '"x"', Buffer.from([0xff, 0xfe])]) {
    for (const parse of [parseDesiredState, parseJob, parseStatusMessage, parseReported, parseJobResult]) {
      const r = parse(p)
      t.notOk(r.ok)
      if (!r.ok) t.ok(r.errors.length > 0 && typeof r.errors[0]!.message === 'string')
    }
  }
  const huge = parseStatusMessage(Buffer.alloc(2_000_000, 0x20))
  t.notOk(huge.ok, 'oversized payloads are refused before JSON.parse')
  t.notOk((parseJob as (p: unknown) => { ok: boolean })(123).ok, 'non-buffer input')
})

t.test('jobs', async (t) => {
  const serial: Job = { id: 'sjob_1', kind: 'serial', bytesHex: 'AA11fe0100', protocol: 'samsung-mdc', timeoutMs: 2000, createdAt: AT }
  const r = parseJob(encodeMessage(serial))
  t.ok(r.ok)
  if (r.ok && r.value.kind === 'serial') t.equal(r.value.bytesHex, 'AA11fe0100')
  t.ok(parseJob(JSON.stringify({ id: 'j', kind: 'reboot', createdAt: AT })).ok)
  t.ok(parseJob(JSON.stringify({ id: 'j', kind: 'screenshot', uploadUrl: 'https://x', createdAt: AT })).ok)
  t.ok(parseJob(JSON.stringify({ id: 'alog_1', kind: 'logs', uploadUrl: '/v1/devices/agent-logs/alog_1', lines: 1000, since: null, createdAt: AT })).ok)
  t.ok(parseJob(JSON.stringify({ id: 'alog_1', kind: 'logs', lines: 5000, since: AT, createdAt: AT })).ok)
  for (const [bad, path] of [
    [{ lines: 0 }, '/lines'],
    [{ lines: 5001 }, '/lines'],
    [{ lines: undefined }, '/lines'],
    [{ since: 'yesterday' }, '/since'],
  ] as const) {
    const r = parseJob(JSON.stringify({ ...{ id: 'alog_1', kind: 'logs', lines: 10, createdAt: AT }, ...bad }))
    t.notOk(r.ok, `a logs job with ${JSON.stringify(bad)} is refused`)
    if (!r.ok)
      t.ok(
        r.errors.some((e) => e.path.startsWith(path)),
        `naming ${path}: ${JSON.stringify(r.errors)}`,
      )
  }
  t.ok(parseJob(JSON.stringify({ ...serial, protocol: null })).ok)
  const cases: Array<[unknown, string]> = [
    [{ ...serial, bytesHex: '' }, '/bytesHex'],
    [{ ...serial, bytesHex: 'abc' }, '/bytesHex'],
    [{ ...serial, bytesHex: 'aa bb' }, '/bytesHex'],
    [{ ...serial, timeoutMs: 0 }, '/timeoutMs'],
    [{ ...serial, kind: 'dance' }, '/kind'],
    [{ ...serial, createdAt: 'now' }, '/createdAt'],
  ]
  for (const [value, path] of cases) {
    const res = parseJob(JSON.stringify(value))
    t.notOk(res.ok, path)
    if (!res.ok) t.equal(res.errors[0]!.path, path, JSON.stringify(res.errors))
  }
})

t.test('status', async (t) => {
  t.ok(parseStatusMessage('{"status":"online","at":"2026-03-08T07:00:00Z"}').ok)
  t.ok(parseStatusMessage('{"status":"offline","at":"2026-03-08T07:00:00.123+05:30"}').ok)
  const r = parseStatusMessage('{"status":"sleepy","at":"2026-03-08T07:00:00Z"}')
  t.notOk(r.ok)
  if (!r.ok) t.same(r.errors, [{ path: '/status', message: 'Expected "online" or "offline"' }])
})

t.test('reported', async (t) => {
  const rep: Reported = {
    version: 7,
    playing: { source: 'cast', contentKind: 'media', contentId: 'med_9', castId: 'cast_2' },
    panel: { power: 'on', input: 'HDMI1', at: AT },
    storage: { usedBytes: 10, totalBytes: 100 },
    at: AT,
  }
  t.ok(parseReported(encodeMessage(rep)).ok)
  t.ok(parseReported(JSON.stringify({ version: 0, playing: { source: 'none', contentKind: null, contentId: null }, at: AT })).ok)
  const mixed = parseReported(JSON.stringify({ ...rep, playing: { source: 'none', contentKind: 'media', contentId: null } }))
  t.notOk(mixed.ok)
  if (!mixed.ok) t.equal(mixed.errors[0]!.path, '/playing')
  const noneMissing = parseReported(JSON.stringify({ ...rep, playing: { source: 'cast', contentKind: null, contentId: null } }))
  t.notOk(noneMissing.ok, 'a real source needs content')
  const badPower = parseReported(JSON.stringify({ ...rep, panel: { power: 'maybe', at: AT } }))
  t.notOk(badPower.ok)
  if (!badPower.ok) t.equal(badPower.errors[0]!.path, '/panel/power')
  t.notOk(parseReported(JSON.stringify({ ...rep, storage: { usedBytes: -1, totalBytes: 1 } })).ok)
})

t.test('reported keeps only the contract fields, bounded', async (t) => {
  const rep: Reported = {
    version: 3,
    playing: { source: 'schedule', contentKind: 'playlist', contentId: 'pl_1', ruleId: 'r1' },
    panel: { power: 'off', input: 'HDMI2', volume: 10, mute: false, at: AT },
    storage: { usedBytes: 1, totalBytes: 2 },
    at: AT,
  }
  const dirty = {
    ...rep,
    html: '<script>alert(1)</script>',
    playing: { ...rep.playing, extra: 'x'.repeat(1000) },
    panel: { ...rep.panel, serial: { deep: [1, 2, 3] } },
    storage: { ...rep.storage, devices: ['sda'] },
  }
  const r = parseReported(JSON.stringify(dirty).replace('{', '{"__proto__":{"polluted":true},'))
  t.ok(r.ok)
  if (r.ok) {
    t.notOk(Object.hasOwn(r.value, '__proto__'), 'a __proto__ key is dropped too')
    t.same(r.value, rep, 'unknown fields are dropped at every level')
    t.same(Object.keys(r.value).sort(), ['at', 'panel', 'playing', 'storage', 'version'])
    t.notOk(JSON.stringify(r.value).includes('script'))
  }
  const copy = JSON.parse(JSON.stringify(dirty)) as Record<string, unknown>
  const v = validateMessage.reported(copy)
  t.ok(v.ok)
  t.ok('html' in copy, 'validateMessage does not change its input')
  if (v.ok) t.notOk('html' in v.value)

  // Only one level carries an unknown field: the fast path for clean payloads must not let it through.
  for (const [what, v] of [
    ['playing', { ...rep, playing: { ...rep.playing, extra: 1 } }],
    ['panel', { ...rep, panel: { ...rep.panel, extra: 1 } }],
    ['storage', { ...rep, storage: { ...rep.storage, extra: 1 } }],
    ['the top level', { ...rep, extra: 1 }],
  ] as const) {
    const one = parseReported(JSON.stringify(v))
    t.same(one.ok && one.value, rep, `an unknown field in ${what} alone is dropped`)
  }
  const clean = parseReported(JSON.stringify(rep))
  t.same(clean.ok && clean.value, rep, 'a payload of contract fields only parses as it is')
  const input = JSON.parse(JSON.stringify(rep)) as Reported
  const same = validateMessage.reported(input)
  t.ok(same.ok && same.value !== input, 'validateMessage answers a copy of a clean input too')

  const long = (n: number) => 'a'.repeat(n)
  const refused: [string, unknown][] = [
    ['a long content id', { ...rep, playing: { ...rep.playing, contentId: long(257) } }],
    ['a long rule id', { ...rep, playing: { ...rep.playing, ruleId: long(257) } }],
    ['a long input', { ...rep, panel: { ...rep.panel, input: long(65) } }],
    ['a huge timestamp', { ...rep, at: `2026-03-08T07:00:00.${'1'.repeat(100_000)}Z` }],
    ['an unsafe version', { ...rep, version: 2 ** 60 }],
    ['an infinite size', { ...rep, storage: { usedBytes: 1, totalBytes: 1e400 } }],
    ['a fractional size', { ...rep, storage: { usedBytes: 1.5, totalBytes: 2 } }],
    ['volume over 100', { ...rep, panel: { ...rep.panel, volume: 101 } }],
  ]
  for (const [name, value] of refused) {
    const text = JSON.stringify(value).replace('"totalBytes":null', '"totalBytes":1e400')
    t.notOk(parseReported(text).ok, name)
  }
  t.ok(parseReported(JSON.stringify({ ...rep, playing: { ...rep.playing, contentId: long(256) } })).ok, 'at the id limit')
})

t.test('status keeps only status and at', async (t) => {
  const r = parseStatusMessage(JSON.stringify({ status: 'offline', at: AT, junk: 'x'.repeat(5000) }))
  t.ok(r.ok)
  if (r.ok) t.same(r.value, { status: 'offline', at: AT })
})

t.test('job results', async (t) => {
  const ok: JobResult = { jobId: 'sjob_1', sentHex: 'aa11', replyHex: 'aaff', outcome: 'ok', at: AT }
  t.ok(parseJobResult(encodeMessage(ok)).ok)
  t.ok(parseJobResult(JSON.stringify({ ...ok, outcome: 'timeout', replyHex: '' })).ok)
  t.ok(parseJobResult(JSON.stringify({ ...ok, outcome: 'failed', reason: 'port unplugged' })).ok)
  const noReason = parseJobResult(JSON.stringify({ ...ok, outcome: 'failed' }))
  t.notOk(noReason.ok)
  if (!noReason.ok) t.equal(noReason.errors[0]!.path, '/reason')
  t.notOk(parseJobResult(JSON.stringify({ ...ok, outcome: 'meh' })).ok)
  t.notOk(parseJobResult(JSON.stringify({ ...ok, replyHex: null })).ok)
})

t.test('parseForTopic dispatches by topic kind', async (t) => {
  const r = parseForTopic('status', '{"status":"online","at":"2026-03-08T07:00:00Z"}')
  t.ok(r.ok)
  if (r.ok) t.equal(r.value.status, 'online')
  t.notOk(parseForTopic('desired', '{"status":"online","at":"2026-03-08T07:00:00Z"}').ok)
  t.notOk(parseForTopic('jobs', 'nope').ok)
})
