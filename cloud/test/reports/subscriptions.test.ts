// Report subscriptions: created over HTTP, mailed through the real outbox when their period
// ends on the injected clock (weekly on Mondays, monthly on the 1st, UTC), each with a short
// text summary and the report as a CSV attachment (parsed by a CSV library); a period is
// mailed once, a cloud down over several periods mails the last one; bad input is refused,
// another workspace sees nothing.
import t from 'tap'
import { parse } from 'csv-parse/sync'
import { servicesOf } from '../../src/app.js'
import { PlayLogRepository } from '../../src/domains/playlog/PlayLogRepository.js'
import { build } from '../helpers.js'
import { screenRow } from '../fixtures/screenRows.js'

const attachmentsOf = (row: { attachments: string | null }) =>
  JSON.parse(row.attachments ?? '[]') as { filename: string; contentType: string; content: string }[]

t.test('weekly availability and monthly proof of play, mailed when their period ends', async (t) => {
  const h = await build(t)
  h.clock.set('2026-06-03T10:00:00.000Z') // a Wednesday
  const { apiKey, workspaceId } = await h.workspace()
  const s = servicesOf(h.app)
  const db = s.db.kysely
  await db
    .insertInto('screens')
    .values([
      screenRow('scr_a', workspaceId, '2026-05-25T00:00:00.000Z', { name: 'Lobby' }),
      screenRow('scr_b', workspaceId, '2026-05-25T00:00:00.000Z', { name: 'Hall' }),
    ])
    .execute()
  await db
    .insertInto('presence_intervals')
    .values([
      { workspace_id: workspaceId, screen_id: 'scr_a', started_at: '2026-06-01T00:00:00.000Z', ended_at: '2026-06-04T12:00:00.000Z' },
      { workspace_id: workspaceId, screen_id: 'scr_b', started_at: '2026-06-01T00:00:00.000Z', ended_at: null },
    ])
    .execute()
  const play = (i: number, day: string) => ({
    source: 'assignment',
    contentKind: 'playlist',
    contentId: 'pl_1',
    castId: null,
    emergencyId: null,
    itemKind: 'media',
    itemId: `med_${i}`,
    zone: null,
    startedAt: `${day}T10:00:${String(i * 10).padStart(2, '0')}.000Z`,
    endedAt: `${day}T10:00:${String(i * 10 + 10).padStart(2, '0')}.000Z`,
    durationMs: 10_000,
    panelPower: 'on' as const,
  })
  await new PlayLogRepository(db).insert(
    workspaceId,
    'scr_a',
    [play(0, '2026-06-02'), play(1, '2026-06-02'), play(2, '2026-06-20')],
    '2026-06-03T10:00:00.000Z',
  )

  const weekly = await h.req('POST', '/v1/report-subscriptions', apiKey, {
    report: 'availability',
    params: { groupBy: 'screen' },
    cadence: 'weekly',
    recipients: ['Ops@Example.com', 'ops@example.com', 'boss@example.com'],
  })
  t.equal(weekly.statusCode, 201, weekly.body)
  t.match(weekly.json().data, {
    report: 'availability',
    cadence: 'weekly',
    recipients: ['ops@example.com', 'boss@example.com'],
    nextRunAt: '2026-06-08T00:00:00.000Z',
  })
  const monthly = await h.req('POST', '/v1/report-subscriptions', apiKey, {
    report: 'proof-of-play',
    params: { groupBy: 'day', contentKind: 'playlist', contentId: 'pl_1' },
    cadence: 'monthly',
    recipients: ['ads@example.com'],
  })
  t.equal(monthly.statusCode, 201, monthly.body)
  t.equal(monthly.json().data.nextRunAt, '2026-07-01T00:00:00.000Z')

  t.equal(await s.reportSubscriptions.runDue(), 0, 'nothing is due mid-week')
  h.clock.set('2026-06-08T00:05:00.000Z')
  await s.reportSubscriptionWorker.runOnce()
  let mail = await s.mailer.outbox(workspaceId)
  t.equal(mail.length, 1, 'the week that ended is mailed')
  t.same(JSON.parse(mail[0]!.to_addresses), ['ops@example.com', 'boss@example.com'])
  t.equal(mail[0]!.subject, 'Availability report, 2026-06-01 to 2026-06-07 (UTC)')
  t.match(mail[0]!.body, /Availability of 2 screens/)
  t.match(mail[0]!.body, /online 75\.00 % of the time/, '3.5 days of 7 and 7 of 7')
  t.match(mail[0]!.body, /^Lowest: Lobby 50\.00 %, Hall 100\.00 %$/m, 'the lowest first')
  const [csv] = attachmentsOf(mail[0]!)
  t.match(csv, { filename: 'availability-2026-06-01.csv', contentType: 'text/csv' })
  const rows = parse(csv!.content, { columns: true }) as Record<string, string>[]
  t.same(
    rows.map((r) => [r.screenId, r.name, r.availability]),
    [
      ['scr_a', 'Lobby', '0.5'],
      ['scr_b', 'Hall', '1'],
      ['', 'Total', '0.75'],
    ],
  )
  t.equal(await s.reportSubscriptions.runDue(), 0, 'a period is mailed once')
  t.equal((await h.req('GET', `/v1/report-subscriptions/${weekly.json().data.id}`, apiKey)).json().data.nextRunAt, '2026-06-15T00:00:00.000Z')

  // Down from before the 15th to the 10th of July: one mail per subscription, for the last period.
  h.clock.set('2026-07-10T09:00:00.000Z')
  t.equal(await s.reportSubscriptions.runDue(), 2)
  mail = await s.mailer.outbox(workspaceId)
  t.same(
    mail
      .slice(1)
      .map((m) => m.subject)
      .sort(),
    ['Availability report, 2026-06-29 to 2026-07-05 (UTC)', 'Proof of play report, 2026-06-01 to 2026-06-30 (UTC)'],
  )
  const proof = mail.find((m) => m.subject.startsWith('Proof of play'))!
  t.match(proof.body, /3 plays, 0\.0 h played/)
  t.same(parse(attachmentsOf(proof)[0]!.content, { columns: true }), [
    { day: '2026-06-02', plays: '2', seconds: '20', secondsPanelOn: '20', screens: '1' },
    { day: '2026-06-20', plays: '1', seconds: '10', secondsPanelOn: '10', screens: '1' },
  ])

  const list = await h.req('GET', '/v1/report-subscriptions', apiKey)
  t.equal(list.json().data.length, 2)
  t.equal((await h.req('DELETE', `/v1/report-subscriptions/${weekly.json().data.id}`, apiKey)).statusCode, 200)
  t.equal((await h.req('GET', `/v1/report-subscriptions/${weekly.json().data.id}`, apiKey)).statusCode, 404)
  h.clock.set('2026-07-13T01:00:00.000Z')
  t.equal(await s.reportSubscriptions.runDue(), 0, 'a deleted subscription mails nothing')
})

t.test('bad input is refused and another workspace sees nothing', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  const other = await h.workspace('Other')
  const post = (body: unknown, key = apiKey) => h.req('POST', '/v1/report-subscriptions', key, body)
  const ok = { report: 'availability', cadence: 'weekly', recipients: ['a@example.com'] }
  for (const [bad, status] of [
    [{ ...ok, recipients: ['not an address'] }, 422],
    [{ ...ok, recipients: [] }, 422],
    [{ ...ok, cadence: 'daily' }, 422],
    [{ ...ok, report: 'uptime' }, 422],
    [{ ...ok, params: { groupBy: 'day' } }, 422],
    [{ ...ok, params: { contentKind: 'playlist' } }, 422],
    [{ ...ok, report: 'proof-of-play', params: { contentId: 'pl_1' } }, 422],
    [{ ...ok, params: { nodeId: 'node_nope' } }, 422],
    [{ ...ok, params: { groupId: 'grp_nope' } }, 422],
  ] as const) {
    const res = await post(bad)
    t.equal(res.statusCode, status, `${JSON.stringify(bad)}: ${res.body}`)
    t.type(res.json().error, 'string')
  }
  t.same((await h.req('GET', '/v1/report-subscriptions', apiKey)).json().data, [], 'nothing half-written')
  const mine = (await post(ok)).json().data
  t.equal((await h.req('GET', `/v1/report-subscriptions/${mine.id}`, other.apiKey)).statusCode, 404)
  t.equal((await h.req('DELETE', `/v1/report-subscriptions/${mine.id}`, other.apiKey)).statusCode, 404)
  t.same((await h.req('GET', '/v1/report-subscriptions', other.apiKey)).json().data, [])
})
