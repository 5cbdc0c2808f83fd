// Screenshots of what a screen shows:
//   POST /v1/screens/:id/screenshot      queue a screenshot job (202)
//   GET  /v1/screenshots/:id             the job: status, reason, imageUrl once done
//   GET  /v1/screenshots/:id/image       the PNG
//   GET  /v1/screenshots/:id/thumbnail   a small WebP of it (what the console's lists show)
//   PUT  /v1/devices/screenshots/:id     the agent's upload (device credential, PNG body;
//                                         ?source=display|page says what the PNG shows)
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Readable } from 'node:stream'
import { principalOf } from '../../platform/http/Principal.js'
import { Data, ErrorBody, IdParams, StringEnum, errorResponses } from '../../platform/contract.js'
import { sendThumbnail } from '../../platform/http/thumbnails.js'
import { SCREENSHOT_MAX_BYTES, SCREENSHOT_SOURCES, Screenshot } from './ScreenshotService.js'
import type { Provisions } from '../../platform/provisions.js'

const screenshotRoutes =
  (d: Pick<Provisions, 'screenshots'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { screenshots } = d
    // The upload body is the PNG's bytes, streamed to disk under its own size limit; only
    // this plugin accepts image/png.
    app.addContentTypeParser('image/png', (_req, payload, done) => done(null, payload))

    app.post(
      '/screens/:id/screenshot',
      {
        config: { permission: 'screen.view' },
        schema: {
          tags: ['screenshots'],
          operationId: 'requestScreenshot',
          summary: 'Ask the screen for a PNG of what it shows now; poll GET /v1/screenshots/<id> until ok or failed',
          params: IdParams,
          response: { 202: Data(Screenshot), ...errorResponses },
        },
      },
      async (req, reply) => reply.code(202).send({ data: await screenshots.request(principalOf(req), req.params.id) }),
    )

    app.get(
      '/screenshots/:id',
      {
        config: { permission: 'screen.view' },
        schema: {
          tags: ['screenshots'],
          operationId: 'getScreenshot',
          summary: 'A screenshot job',
          params: IdParams,
          response: { 200: Data(Screenshot), ...errorResponses },
        },
      },
      async (req) => ({ data: await screenshots.get(principalOf(req), req.params.id) }),
    )

    app.get(
      '/screenshots/:id/image',
      {
        config: { permission: 'screen.view' },
        schema: {
          tags: ['screenshots'],
          operationId: 'getScreenshotImage',
          summary: 'The PNG of a finished screenshot (409 while it is not `ok`)',
          params: IdParams,
          response: {
            200: { description: 'The PNG.', content: { 'image/png': { schema: Type.String({ format: 'binary' }) } } },
            409: ErrorBody,
            ...errorResponses,
          },
        },
      },
      async (req, reply) => {
        const f = await screenshots.image(principalOf(req), req.params.id)
        reply.type('image/png').header('content-length', String(f.sizeBytes)).header('cache-control', 'private, max-age=86400')
        return reply.send(f.stream as never)
      },
    )

    app.get(
      '/screenshots/:id/thumbnail',
      {
        config: { permission: 'screen.view' },
        schema: {
          tags: ['screenshots'],
          operationId: 'getScreenshotThumbnail',
          summary: 'A small picture of a finished screenshot (image/webp, at most 320 px on its longer side; 409 while it is not `ok`)',
          params: IdParams,
          response: {
            200: { description: 'The thumbnail.', content: { 'image/webp': { schema: Type.String({ format: 'binary' }) } } },
            409: ErrorBody,
            ...errorResponses,
          },
        },
      },
      async (req, reply) => {
        // A screenshot never changes: kept by the browser for a day, revalidated by its ETag after.
        return sendThumbnail(reply, await screenshots.thumbnail(principalOf(req), req.params.id), 86_400)
      },
    )

    app.put(
      '/devices/screenshots/:id',
      {
        config: { auth: 'none' },
        schema: {
          tags: ['devices'],
          operationId: 'uploadScreenshot',
          security: [{ deviceCredential: [] }],
          summary: `The agent uploads a screenshot job's PNG (Content-Type image/png, at most ${SCREENSHOT_MAX_BYTES} bytes), authenticated with its device credential: Authorization: Basic base64(screenId:deviceSecret)`,
          params: IdParams,
          querystring: Type.Object(
            {
              source: Type.Optional(
                StringEnum(SCREENSHOT_SOURCES, {
                  description: '`display` = captured from the screen output (the compositor); `page` (the default) = the player page rendered.',
                }),
              ),
            },
            { additionalProperties: false },
          ),
          response: { 200: Data(Screenshot), 401: ErrorBody, 409: ErrorBody, 413: ErrorBody, 415: ErrorBody, 422: ErrorBody, 500: ErrorBody, 503: ErrorBody },
        },
      },
      async (req) => ({ data: await screenshots.upload(req.params.id, req.headers.authorization, req.body as Readable, req.query.source) }),
    )
  }
export default screenshotRoutes
