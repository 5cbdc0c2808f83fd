// A playlist's presentation for the player: fit (the playlist's, an item's own) and the
// transition between items are stored with the playlist, validated, and carried into the
// content description a screen gets in its desired state.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { parseDesiredState } from '@svc/shared/mqtt/index'
import { buildMedia, PNG_1x1 } from './fixtures.js'

t.test('fit and transition go from the library to the device description', async (t) => {
  const h = await buildMedia(t)
  const { apiKey, workspaceId } = await h.workspace()
  const a = await h.ready(apiKey, 'a.png', PNG_1x1)
  const b = await h.ready(apiKey, 'b.png', PNG_1x1)
  const created = await h.req('POST', '/v1/playlists', apiKey, {
    name: 'Lobby',
    fit: 'contain',
    transition: 'fade',
    transitionMs: 800,
    items: [
      { kind: 'media', id: a.id, durationMs: 5000, fit: 'cover' },
      { kind: 'media', id: b.id, durationMs: 5000 },
    ],
  })
  t.equal(created.statusCode, 201, created.body)
  const pl = created.json().data
  t.match(pl, { fit: 'contain', transition: 'fade', transitionMs: 800, items: [{ id: a.id, fit: 'cover' }, { id: b.id }] }, 'stored and shown')

  const d = await servicesOf(h.app).contentResolver.describeForDevice(workspaceId, { kind: 'playlist', id: pl.id })
  t.match(d, { fit: 'contain', transition: 'fade', transitionMs: 800, items: [{ contentId: a.id, fit: 'cover' }, { contentId: b.id }] })
  t.notOk(d!.items![1]!.fit, 'an item without its own fit takes the playlist’s on the screen')
  const desired = {
    version: 1,
    screenId: 'scr_1',
    timezone: 'UTC',
    assignment: { contentKind: 'playlist', contentId: pl.id, content: d },
    schedule: null,
    casts: [],
    emergency: null,
    panel: null,
    generatedAt: new Date().toISOString(),
  }
  const parsed = parseDesiredState(JSON.stringify(desired))
  t.ok(parsed.ok, `valid by the device contract ${JSON.stringify(parsed.ok ? '' : parsed.errors)}`)
  t.match(parsed.ok && parsed.value.assignment?.content, { transition: 'fade', transitionMs: 800, items: [{ fit: 'cover' }] }, 'and kept by the parser')

  // Bad values: the envelope, nothing changed.
  for (const bad of [{ transition: 'wipe' }, { transitionMs: 60_000 }, { fit: 'stretch' }, { items: [{ kind: 'media', id: a.id, fit: 'fill' }] }]) {
    const r = await h.req('PATCH', `/v1/playlists/${pl.id}`, apiKey, bad)
    t.equal(r.statusCode, 422, JSON.stringify(bad))
    t.equal(r.json().error, 'validation_error')
  }
  // Cleared: a cut and the default fit again.
  const cleared = await h.req('PATCH', `/v1/playlists/${pl.id}`, apiKey, { transition: null, fit: null, transitionMs: null })
  t.equal(cleared.statusCode, 200, cleared.body)
  const d2 = await servicesOf(h.app).contentResolver.describeForDevice(workspaceId, { kind: 'playlist', id: pl.id })
  t.equal(d2!.transition, undefined)
  t.equal(d2!.fit, undefined)
  t.equal(d2!.items![0]!.fit, 'cover', "the item's own fit stays")
})
