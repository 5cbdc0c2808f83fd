// A stored thumbnail (image/webp) as an answer: media items and screenshots both keep one.
import fsp from 'node:fs/promises'
import type { FastifyReply } from 'fastify'
import { notFound } from '../errors.js'

/** Sends the WebP at `file.path` with its ETag, kept by the browser for `maxAgeSeconds`; 404 when the file is gone. */
export async function sendThumbnail(reply: FastifyReply, file: { path: string; etag: string }, maxAgeSeconds: number): Promise<FastifyReply> {
  let bytes: Buffer
  try {
    bytes = await fsp.readFile(file.path)
  } catch {
    throw notFound('The thumbnail is missing from the media store.')
  }
  return reply
    .header('content-type', 'image/webp')
    .header('etag', file.etag)
    .header('cache-control', `private, max-age=${maxAgeSeconds}`)
    .send(bytes as never)
}
