// Names beside ids in the screen views: GET /v1/screens and /v1/screens/<id> answer the
// assigned content's name, the name of what the screen reports playing and that file's
// thumbnail; another workspace's item of the same id is never named; on SQLite and
// PostgreSQL (the list's SQL differs per engine).
import t from 'tap'
import { servicesOf } from '../../src/app.js'
import { forEngines } from '../db/engines.js'
import { screenRow } from '../fixtures/screenRows.js'

const AT = '2026-06-01T12:00:00.000Z'

function mediaRow(id: string, workspaceId: string, name: string, thumbnailAt: string | null) {
  return {
    id,
    workspace_id: workspaceId,
    name,
    kind: 'image',
    mime_type: 'image/png',
    size_bytes: 1,
    sha256: 'a'.repeat(64),
    state: 'ready',
    failure_reason: null,
    width: 1,
    height: 1,
    duration_ms: null,
    thumbnail_at: thumbnailAt,
    folder_id: null,
    node_id: null,
    recalled_at: null,
    recall_reason: null,
    recalled_by: null,
    created_by: 'test',
    created_at: AT,
    updated_at: AT,
  }
}

forEngines(t, (t, build) => {
  t.test('the screen list and a screen answer content names and the thumbnail of what plays', async (t) => {
    const h = await build(t)
    const { apiKey, workspaceId } = await h.workspace()
    const other = await h.workspace()
    const db = servicesOf(h.app).db.kysely
    await db
      .insertInto('media')
      .values([mediaRow('med_poster', workspaceId, 'Summer poster', AT), mediaRow('med_theirs', other.workspaceId, 'Not yours', AT)])
      .execute()
    await db
      .insertInto('content_items')
      .values({
        id: 'pl_morning',
        workspace_id: workspaceId,
        kind: 'playlist',
        name: 'Morning loop',
        body: '{"items":[]}',
        node_id: null,
        recalled_at: null,
        recall_reason: null,
        recalled_by: null,
        created_at: AT,
        updated_at: AT,
      })
      .execute()
    const playing = (contentId: string) => JSON.stringify({ version: 1, playing: { source: 'assignment', contentKind: 'media', contentId }, at: AT })
    await db
      .insertInto('screens')
      .values([
        screenRow('scr_n1', workspaceId, AT, { name: 'Door', content_kind: 'playlist', content_id: 'pl_morning', reported: playing('med_poster') }),
        screenRow('scr_n2', workspaceId, AT, { name: 'Till', content_kind: 'media', content_id: 'med_theirs', reported: playing('med_theirs') }),
        screenRow('scr_n3', workspaceId, AT, { name: 'Bare' }),
      ])
      .execute()

    const list = (await h.req('GET', '/v1/screens', apiKey)).json().data as Record<string, unknown>[]
    const named = list.map((s) => [s.id, s.contentName, s.playingName, s.playingThumbnailUrl])
    t.same(
      named,
      [
        ['scr_n1', 'Morning loop', 'Summer poster', '/v1/media/med_poster/thumbnail'],
        ['scr_n2', null, null, null],
        ['scr_n3', null, null, null],
      ],
      "names and the playing file's thumbnail in the list; another workspace's item is never named",
    )
    const one = (await h.req('GET', '/v1/screens/scr_n1', apiKey)).json().data
    t.match(one, { contentName: 'Morning loop', playingName: 'Summer poster', playingThumbnailUrl: '/v1/media/med_poster/thumbnail' })
    const two = (await h.req('GET', '/v1/screens/scr_n2', apiKey)).json().data
    t.match(two, { contentId: 'med_theirs', contentName: null, playingName: null, playingThumbnailUrl: null })
  })
})
