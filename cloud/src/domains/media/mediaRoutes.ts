// /v1/media: single-request upload (multipart form), resumable multipart upload, import
// from a URL, list/get/rename/move/delete, and download with HTTP Range. Multipart
// parsing and the raw-bytes parser for parts are registered in this plugin only, so no
// other route accepts form or octet-stream bodies.
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import multipart from '@fastify/multipart'
import { principalOf, type Principal } from '../../platform/http/Principal.js'
import { PageQuery } from '../../platform/paging.js'
import { Data, Deleted, IdParams, Nullable, Paged, Timestamp, errorResponses } from '../../platform/contract.js'
import { ApiError, validation } from '../../platform/errors.js'
import { sendThumbnail } from '../../platform/http/thumbnails.js'
import { MEDIA_KINDS } from './sniff.js'
import { MediaItem } from './MediaService.js'
import { checkNoNul } from '../../platform/http/jsonBounds.js'
import { fingerprintForm } from '../../platform/http/idempotency.js'
import type { StagedFile } from './MediaStore.js'
import { optionalPage } from '../../platform/paging.js'
import type { Provisions } from '../../platform/provisions.js'

const Upload = Type.Object({
  id: Type.String({ description: 'Prefix mup_.' }),
  name: Type.String(),
  folderId: Nullable(Type.String()),
  nodeId: Nullable(Type.String()),
  partSizeMaxBytes: Type.Integer(),
  fileSizeMaxBytes: Type.Integer(),
  parts: Type.Array(Type.Object({ partNumber: Type.Integer(), sizeBytes: Type.Integer(), sha256: Type.String(), receivedAt: Timestamp })),
  receivedBytes: Type.Integer(),
  createdAt: Timestamp,
  expiresAt: Timestamp,
})

const Placement = {
  folderId: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
  nodeId: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
}

const mediaRoutes =
  (d: Pick<Provisions, 'config' | 'content' | 'media' | 'mediaUrls'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { media, config, content } = d
    /** A new file homed where approval is required is held: the answer carries `approval`. */
    const withHold = async <T extends { id: string; name: string; nodeId: string | null }>(p: Principal, item: T) => {
      const approval = await content.holdNewMedia(p, item)
      return approval ? { ...item, approval } : item
    }
    // The form fields an upload takes besides `file`; another one is refused (docs/decisions.md).
    const UPLOAD_FIELDS = new Set(['name', 'folderId', 'nodeId'])

    await app.register(multipart, {
      // bodyLimit is not enforced across a multipart body: every dimension is capped here.
      limits: { fileSize: config.mediaUploadMaxBytes, files: 1, parts: 10, fields: 8, fieldSize: 4096, headerPairs: 100 },
      throwFileSizeLimit: true,
    })
    // Parts of a multipart upload are raw bytes; the stream is handed to the route, which
    // writes it to disk under its own size limit.
    app.addContentTypeParser('application/octet-stream', (_req, payload, done) => done(null, payload))

    /** An upload's form, read (the file streamed to disk and hashed) before Idempotency-Key is looked at. */
    interface UploadForm {
      fields: Record<string, string>
      fileName: string
      /** Handed to the handler, which takes it (null afterwards); what is left is discarded when the request ends. */
      staged: StagedFile | null
    }
    const forms = new WeakMap<FastifyRequest, UploadForm>()
    const discardForm = async (req: FastifyRequest) => {
      const form = forms.get(req)
      if (!form?.staged) return
      const staged = form.staged
      form.staged = null
      await media.store.discard(staged)
    }

    app.post(
      '/media/upload',
      {
        config: { permission: 'media.create', idempotent: true, perKeyLimit: 300 },
        schema: {
          tags: ['media'],
          summary: `Upload a file (multipart form: file, name, optional folderId, nodeId); up to ${config.mediaUploadMaxBytes} bytes, larger files use /v1/media/upload/multipart`,
          consumes: ['multipart/form-data'],
          response: { 201: Data(MediaItem), 413: errorResponses[404], 415: errorResponses[404], ...errorResponses },
        },
        // The form is read first, so Idempotency-Key (checked next) compares its fields and the
        // file's sha256: a repeat with another file is 422, not the first answer.
        preHandler: async (req) => {
          if (!req.isMultipart()) throw new ApiError('unsupported_type', 'Send the file as multipart/form-data with a `file` part.')
          const form: UploadForm = { fields: {}, fileName: '', staged: null }
          forms.set(req, form)
          for await (const part of req.parts()) {
            if (part.type === 'file') {
              if (part.fieldname !== 'file' || form.staged) {
                part.file.resume()
                throw validation(`Only one file, in the part named "file", is accepted (got "${part.fieldname}").`)
              }
              form.fileName = part.filename
              form.staged = await media.store.stage(part.file, config.mediaUploadMaxBytes)
              if (part.file.truncated) throw new ApiError('too_large', `The file is over the limit of ${config.mediaUploadMaxBytes} bytes.`)
            } else {
              if (!UPLOAD_FIELDS.has(part.fieldname)) throw validation(`body.${part.fieldname} is not a field of this operation.`)
              form.fields[part.fieldname] = String(part.value)
              checkNoNul(form.fields[part.fieldname], `body.${part.fieldname}`)
            }
          }
          if (!form.staged) throw validation('body: file is required (a multipart part named "file").')
          fingerprintForm(req, {
            fields: form.fields,
            files: [{ field: 'file', filename: form.fileName, sha256: form.staged.sha256, sizeBytes: form.staged.sizeBytes }],
          })
        },
        // A replay, a refusal or a dropped connection leaves the staged file unused.
        onResponse: async (req) => discardForm(req),
        onRequestAbort: async (req) => discardForm(req),
      },
      async (req, reply) => {
        const p = principalOf(req)
        const form = forms.get(req)!
        const staged = form.staged!
        form.staged = null
        const { fields } = form
        const item = await media.createFromStaged(
          p,
          staged,
          { name: fields.name || undefined, folderId: fields.folderId || undefined, nodeId: fields.nodeId || undefined },
          form.fileName || 'Untitled',
        )
        return reply.code(201).send({ data: await withHold(p, item) })
      },
    )

    app.post(
      '/media/import-url',
      {
        config: { permission: 'media.create', idempotent: true },
        schema: {
          tags: ['media'],
          summary: 'Import a file from a public https URL (400 unsafe_url for private, loopback or non-https addresses)',
          body: Type.Object({
            url: Type.String({ minLength: 1, maxLength: 2000 }),
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            ...Placement,
          }),
          response: { 201: Data(MediaItem), 400: errorResponses[404], 413: errorResponses[404], 415: errorResponses[404], ...errorResponses },
        },
      },
      async (req, reply) => reply.code(201).send({ data: await withHold(principalOf(req), await media.importUrl(principalOf(req), req.body)) }),
    )

    app.post(
      '/media/upload/multipart/initiate',
      {
        config: { permission: 'media.create', idempotent: true },
        schema: {
          tags: ['media'],
          summary: 'Start a resumable upload for a large file; send parts with PUT, then complete',
          body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }), ...Placement }),
          response: { 201: Data(Upload), ...errorResponses },
        },
      },
      async (req, reply) => reply.code(201).send({ data: await media.initiateUpload(principalOf(req), req.body) }),
    )

    app.get(
      '/media/upload/multipart/:id',
      {
        config: { permission: 'media.create' },
        schema: {
          tags: ['media'],
          summary: 'A resumable upload and the parts received so far',
          params: IdParams,
          response: { 200: Data(Upload), ...errorResponses },
        },
      },
      async (req) => ({ data: await media.getUpload(principalOf(req), req.params.id) }),
    )

    app.put(
      '/media/upload/multipart/:id/parts/:n',
      {
        config: { permission: 'media.create' },
        schema: {
          tags: ['media'],
          summary: `Send one part (Content-Type application/octet-stream, up to ${config.mediaPartMaxBytes} bytes); sending a part number again replaces it`,
          params: Type.Object({
            id: Type.String({ minLength: 1, maxLength: 100 }),
            n: Type.String({ maxLength: 10, description: 'Part number, 1 to 10000.' }),
          }),
          response: {
            200: Data(Type.Object({ partNumber: Type.Integer(), sizeBytes: Type.Integer(), sha256: Type.String() })),
            413: errorResponses[404],
            ...errorResponses,
          },
        },
      },
      async (req) => ({ data: await media.putPart(principalOf(req), req.params.id, req.params.n, req.body) }),
    )

    app.post(
      '/media/upload/multipart/:id/complete',
      {
        config: { permission: 'media.create' },
        schema: {
          tags: ['media'],
          summary: 'Join parts 1..N into the file and create the media item',
          params: IdParams,
          response: { 201: Data(MediaItem), 415: errorResponses[404], ...errorResponses },
        },
      },
      async (req, reply) => reply.code(201).send({ data: await withHold(principalOf(req), await media.completeUpload(principalOf(req), req.params.id)) }),
    )

    app.post(
      '/media/upload/multipart/:id/abort',
      {
        config: { permission: 'media.create' },
        schema: {
          tags: ['media'],
          summary: 'Abandon a resumable upload and drop its parts',
          params: IdParams,
          response: { 200: Data(Type.Object({ id: Type.String(), aborted: Type.Literal(true) })), ...errorResponses },
        },
      },
      async (req) => ({ data: await media.abortUpload(principalOf(req), req.params.id) }),
    )

    app.get(
      '/media',
      {
        config: { permission: 'media.view' },
        schema: {
          tags: ['media'],
          summary: 'List media (newest first; limit 1–500, default 100 with a cursor)',
          querystring: Type.Intersect([
            PageQuery,
            Type.Object({
              search: Type.Optional(Type.String({ maxLength: 200 })),
              kind: Type.Optional(Type.Union(MEDIA_KINDS.map((k) => Type.Literal(k)))),
              state: Type.Optional(Type.Union([Type.Literal('processing'), Type.Literal('ready'), Type.Literal('failed')])),
              folderId: Type.Optional(Type.String({ maxLength: 100, description: 'A folder id, or `root` for files in no folder.' })),
            }),
          ]),
          response: { 200: Paged(MediaItem), ...errorResponses },
        },
      },
      async (req) => media.list(principalOf(req), optionalPage(req.query), req.query),
    )

    app.get(
      '/media/:id',
      {
        config: { permission: 'media.view' },
        schema: { tags: ['media'], summary: 'Get a media item', params: IdParams, response: { 200: Data(MediaItem), ...errorResponses } },
      },
      async (req) => {
        const p = principalOf(req)
        const item = await media.get(p, req.params.id)
        const approval = await content.approvalOf(p.workspaceId, 'media', item.id)
        return { data: approval ? { ...item, approval } : item }
      },
    )

    app.patch(
      '/media/:id',
      {
        config: { permission: 'media.edit' },
        schema: {
          tags: ['media'],
          summary: 'Rename a media item or move it to another folder or location',
          params: IdParams,
          body: Type.Object({ name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), ...Placement }),
          response: { 200: Data(MediaItem), ...errorResponses },
        },
      },
      async (req) => {
        const p = principalOf(req)
        const held = await content.holdMediaUpdate(p, req.params.id, req.body)
        if (held) return { data: { ...(await media.get(p, req.params.id)), ...held.changes, approval: held.approval } }
        return { data: await media.update(p, req.params.id, req.body) }
      },
    )

    app.delete(
      '/media/:id',
      {
        config: { permission: 'media.delete' },
        schema: {
          tags: ['media'],
          summary: 'Delete a media item (409 conflict while a playlist, schedule, layout or screen uses it)',
          params: IdParams,
          response: { 200: Data(Deleted), 409: errorResponses[404], ...errorResponses },
        },
      },
      async (req) => ({ data: await media.remove(principalOf(req), req.params.id) }),
    )

    app.get(
      '/media/:id/thumbnail',
      {
        config: { permission: 'media.view' },
        schema: {
          tags: ['media'],
          summary: "A small picture of the file (image/webp, at most 320 px on its longer side): 404 when the item has none (see the item's thumbnailUrl)",
          params: IdParams,
          response: { 200: { description: 'The thumbnail.', content: { 'image/webp': { schema: Type.String({ format: 'binary' }) } } }, ...errorResponses },
        },
      },
      async (req, reply) => {
        return sendThumbnail(reply, await media.thumbnailFile(principalOf(req), req.params.id), 3600)
      },
    )

    app.get(
      '/media/:id/content',
      {
        config: { permission: 'media.view', signedAccess: true },
        schema: {
          tags: ['media'],
          summary:
            'Download the file (supports a single HTTP Range: 206, or 416 when unsatisfiable). Devices use the signed URL from their desired state (exp + sig) instead of a bearer',
          params: IdParams,
          querystring: Type.Object({
            exp: Type.Optional(Type.String({ maxLength: 20, description: 'Signed URL: expiry, unix seconds.' })),
            sig: Type.Optional(Type.String({ maxLength: 128, description: 'Signed URL: hex HMAC-SHA256; with it no bearer is needed.' })),
          }),
          response: { 416: errorResponses[404], ...errorResponses },
        },
      },
      async (req, reply) => {
        let f: Awaited<ReturnType<typeof media.file>>
        if (typeof req.query.sig === 'string') {
          // Devices: a signed, expiring URL stands in for the credential (checked in constant time).
          const check = await d.mediaUrls.verify(req.params.id, req.query.exp, req.query.sig)
          if (check !== 'ok')
            throw new ApiError('invalid_credentials', check === 'expired' ? 'This download link has expired.' : 'This download link is not valid.')
          f = await media.fileForDevice(req.params.id)
        } else f = await media.file(principalOf(req), req.params.id)
        const size = f.sizeBytes
        const range = parseRange(req.headers.range, size)
        if (range === 'unsatisfiable') {
          reply.header('accept-ranges', 'bytes').header('content-range', `bytes */${size}`)
          throw new ApiError('range_not_satisfiable', `The range is outside the file (${size} bytes).`)
        }
        // Opened before any header is set: a file missing from the store answers the 404
        // envelope, without the file's caching headers.
        const bytes = await media.store.read(f.sha256, range ?? undefined)
        reply
          .header('accept-ranges', 'bytes')
          .header('etag', `"${f.sha256}"`)
          .header('content-type', f.mimeType)
          .header('cache-control', 'private, max-age=31536000, immutable')
        if (range) {
          reply
            .code(206)
            .header('content-range', `bytes ${range.start}-${range.end}/${size}`)
            .header('content-length', String(range.end - range.start + 1))
          return reply.send(bytes as never)
        }
        reply.header('content-length', String(size))
        return reply.send(bytes as never)
      },
    )
  }

/**
 * One `bytes=` range (RFC 9110): `a-b`, `a-` or `-n`. A header we do not understand, or
 * several ranges, is ignored (the whole file is sent, as the RFC allows); a range that
 * starts past the end is unsatisfiable (416).
 */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | null {
  if (!header) return null
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim())
  if (!m || (m[1] === '' && m[2] === '')) return null
  if (m[1] === '') {
    const n = Number(m[2])
    if (n === 0 || size === 0) return 'unsatisfiable'
    return { start: Math.max(0, size - n), end: size - 1 }
  }
  const start = Number(m[1])
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1)
  if (start >= size) return 'unsatisfiable'
  if (end < start) return null
  return { start, end }
}
export default mediaRoutes
