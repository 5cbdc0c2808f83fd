// The proof-of-play summary added up per screen, location, group and UTC day, on both
// engines: plays stored through the play log's own write (its daily and hourly totals
// with it), a window with partial hours at both ends so totals and single plays are both
// read, and every grouping checked against the plays counted by hand.
import t from 'tap'
import { servicesOf } from '../../src/app.js'
import { PlayLogRepository } from '../../src/domains/playlog/PlayLogRepository.js'
import { forEngines } from '../db/engines.js'
import { screenRow } from '../fixtures/screenRows.js'

forEngines(t, (t, build) => {
  t.test('per screen, location, group and day', async (t) => {
    const h = await build(t)
    h.clock.set('2026-06-10T12:00:00.000Z')
    const { apiKey, workspaceId } = await h.workspace()
    const store = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Store', kind: 'location' })).json().data.id as string
    const db = servicesOf(h.app).db.kysely
    await db
      .insertInto('screens')
      .values([
        screenRow('scr_a', workspaceId, '2026-06-01T00:00:00.000Z', { name: 'A', node_id: store }),
        screenRow('scr_b', workspaceId, '2026-06-01T00:00:00.000Z', { name: 'B' }),
      ])
      .execute()
    const play = (i: number, at: string, contentId: string) => ({
      source: 'assignment',
      contentKind: 'playlist',
      contentId,
      castId: null,
      emergencyId: null,
      itemKind: 'media',
      itemId: `med_${i}`,
      zone: null,
      startedAt: at,
      endedAt: new Date(Date.parse(at) + 10_000).toISOString(),
      durationMs: 10_000,
      panelPower: i % 2 ? ('off' as const) : ('on' as const),
    })
    const repo = new PlayLogRepository(db)
    // Within the window 2026-06-02T10:30 – 2026-06-05T09:15: A plays 3 (two on the 2nd, one
    // the 4th), B plays 2 (one on the 2nd, one on the 5th at 09:00); outside it, two more.
    await repo.insert(
      workspaceId,
      'scr_a',
      [
        play(0, '2026-06-02T10:45:00.000Z', 'pl_1'),
        play(1, '2026-06-02T14:00:00.000Z', 'pl_1'),
        play(2, '2026-06-04T08:00:00.000Z', 'pl_2'),
        play(3, '2026-06-02T10:00:00.000Z', 'pl_1'),
      ],
      '2026-06-10T12:00:00.000Z',
    )
    await repo.insert(
      workspaceId,
      'scr_b',
      [play(4, '2026-06-02T23:00:00.000Z', 'pl_1'), play(5, '2026-06-05T09:00:00.000Z', 'pl_1'), play(6, '2026-06-05T09:30:00.000Z', 'pl_1')],
      '2026-06-10T12:00:00.000Z',
    )
    const group = (await h.req('POST', '/v1/groups', apiKey, { name: 'Only B', kind: 'static', screenIds: ['scr_b'] })).json().data.id as string
    const q = 'from=2026-06-02T10:30:00Z&to=2026-06-05T09:15:00Z'
    const by = async (groupBy: string, extra = '') => {
      const res = await h.req('GET', `/v1/play-log/summary?${q}&groupBy=${groupBy}${extra}`, apiKey)
      t.equal(res.statusCode, 200, res.body)
      return res.json().data
    }
    t.same(await by('screen'), [
      { screenId: 'scr_a', name: 'A', plays: 3, seconds: 30, secondsPanelOn: 20, screens: 1 },
      { screenId: 'scr_b', name: 'B', plays: 2, seconds: 20, secondsPanelOn: 10, screens: 1 },
    ])
    t.same(await by('node'), [
      { nodeId: null, name: '(workspace root)', plays: 2, seconds: 20, secondsPanelOn: 10, screens: 1 },
      { nodeId: store, name: 'Store', plays: 3, seconds: 30, secondsPanelOn: 20, screens: 1 },
    ])
    t.same(await by('group'), [{ groupId: group, name: 'Only B', plays: 2, seconds: 20, secondsPanelOn: 10, screens: 1 }])
    t.same(await by('day'), [
      { day: '2026-06-02', plays: 3, seconds: 30, secondsPanelOn: 20, screens: 2 },
      { day: '2026-06-04', plays: 1, seconds: 10, secondsPanelOn: 10, screens: 1 },
      { day: '2026-06-05', plays: 1, seconds: 10, secondsPanelOn: 0, screens: 1 },
    ])
    t.same(await by('day', '&contentKind=playlist&contentId=pl_2'), [{ day: '2026-06-04', plays: 1, seconds: 10, secondsPanelOn: 10, screens: 1 }])
    t.same(await by('screen', `&nodeId=${store}`), [{ screenId: 'scr_a', name: 'A', plays: 3, seconds: 30, secondsPanelOn: 20, screens: 1 }])
    const other = await h.workspace('Other')
    t.same((await h.req('GET', `/v1/play-log/summary?${q}&groupBy=screen`, other.apiKey)).json().data, [], 'another workspace counts none of them')
  })
})
