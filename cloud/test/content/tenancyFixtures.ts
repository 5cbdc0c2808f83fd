// Tenancy fixtures for the content library's parameterised routes, spread into the main
// tenancy sweep (cloud/test/api/tenancy.test.ts).
import type { Harness } from '../helpers.js'
import { form, PNG_1x1 } from './fixtures.js'

export interface Fixture {
  create(h: Harness, a: string): Promise<string>
  body?: unknown
  exists(h: Harness, a: string, id: string): Promise<boolean>
}

const getOk = (path: string) => async (h: Harness, a: string, id: string) => (await h.req('GET', path.replace(':id', id), a)).statusCode === 200
const BODY = { name: 'renamed', nodeId: 'node_x', reason: 'x' }

const generic = (path: string, extra: Record<string, unknown> = {}): Fixture => ({
  create: async (h, a) => {
    const res = await h.req('POST', `/v1/${path}`, a, { name: `A ${path}`, ...extra })
    if (res.statusCode !== 201) throw new Error(`${path}: ${res.statusCode} ${res.body}`)
    return res.json().data.id
  },
  body: BODY,
  exists: getOk(`/v1/${path}/:id`),
})

export const CONTENT_FIXTURES: Record<string, Fixture> = {
  '/v1/media/:id': {
    create: async (h, a) => {
      const f = form({ file: { filename: 'a.png', data: PNG_1x1 } })
      return (
        await h.app.inject({ method: 'POST', url: '/v1/media/upload', headers: { authorization: `Bearer ${a}`, ...f.headers }, payload: f.payload })
      ).json().data.id
    },
    body: BODY,
    exists: getOk('/v1/media/:id'),
  },
  '/v1/media/upload/multipart/:id': {
    create: async (h, a) => (await h.req('POST', '/v1/media/upload/multipart/initiate', a, { name: 'big' })).json().data.id,
    body: BODY,
    exists: getOk('/v1/media/upload/multipart/:id'),
  },
  '/v1/media-folders/:id': generic('media-folders'),
  '/v1/playlists/:id': generic('playlists'),
  '/v1/schedules/:id': generic('schedules'),
  '/v1/creatives/:id': generic('creatives'),
  '/v1/layouts/:id': generic('layouts'),
  '/v1/banners/:id': generic('banners', { text: 'hello' }),
  '/v1/signage-templates/:id': generic('signage-templates'),
  '/v1/app-instances/:id': generic('app-instances', { appKey: 'clock' }),
  '/v1/celebration-entries/:id': generic('celebration-entries', { person: 'Ada', date: '2026-01-02' }),
}
