// `Idempotency-Key` for creates that may be retried: a repeat with the same key returns the
// first success; while the first is still running the repeat gets 409
// idempotency_in_progress; the same key with another request is 422 validation_error. Keys
// are scoped per workspace, credential and route and kept 24 hours; a failed first attempt
// frees the key so a retry can run. A request is fingerprinted by its JSON body, or, for a
// multipart form, by its fields and its files' sha256 (the route reads the form first and
// calls fingerprintForm). The records live only in the database (IdempotencyRepository),
// so instances sharing it share the keys.
import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Clock } from '../clock.js'
import type { Database } from '../db/Database.js'
import { isUniqueViolation } from '../db/Database.js'
import { ApiError, validation } from '../errors.js'
import { IdempotencyRepository, type IdempotencyScope } from './IdempotencyRepository.js'
import { actorRef, principalOf } from './Principal.js'

export const IDEMPOTENCY_TTL_MS = 24 * 3600_000
const KEY = /^[\x21-\x7e]{1,255}$/

const marker = Symbol('idempotency')
const formMark = Symbol('idempotency form fingerprint')
type Marked = FastifyRequest & { [marker]?: IdempotencyScope; [formMark]?: string }

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

export interface FormFingerprint {
  fields: Record<string, string>
  files: { field: string; filename: string; sha256: string; sizeBytes: number }[]
}

/**
 * What a multipart form held, for Idempotency-Key: a route taking the key on a form reads
 * the form in a preHandler (files streamed to disk and hashed) and records it here, so a
 * repeat with another file or other fields is told apart from a retry.
 */
export function fingerprintForm(req: FastifyRequest, form: FormFingerprint): void {
  const fields = Object.keys(form.fields)
    .sort()
    .map((k) => [k, form.fields[k]])
  ;(req as Marked)[formMark] = sha256(JSON.stringify({ form: { fields, files: form.files } }))
}

export class IdempotencyStore {
  private readonly repo: IdempotencyRepository

  constructor(
    db: Database,
    private readonly clock: Clock,
  ) {
    this.repo = new IdempotencyRepository(db.kysely)
  }

  async purgeExpired(): Promise<number> {
    return this.repo.purgeBefore(new Date(this.clock.now().getTime() - IDEMPOTENCY_TTL_MS).toISOString())
  }

  install(app: FastifyInstance): void {
    const store = this
    async function before(req: Marked, reply: FastifyReply): Promise<FastifyReply | void> {
      const raw = req.headers['idempotency-key']
      if (raw === undefined) return
      if (typeof raw !== 'string' || !KEY.test(raw)) throw validation('Idempotency-Key must be 1 to 255 visible ASCII characters.')
      const p = principalOf(req)
      const route = `${req.method} ${req.routeOptions.url}`
      let fingerprint = req[formMark]
      if (fingerprint === undefined) {
        // A form's body is not parsed here: without its route's fingerprint every form would look alike.
        if (/^multipart\//i.test(req.headers['content-type'] ?? ''))
          throw new Error(`${route} takes Idempotency-Key on a form but does not call fingerprintForm`)
        fingerprint = sha256(JSON.stringify(req.body ?? null))
      }
      const now = store.clock.now()
      const cutoff = new Date(now.getTime() - IDEMPOTENCY_TTL_MS).toISOString()
      // Per credential: another credential's key (a pinned key repeating the owner's) is another key.
      const scope: IdempotencyScope = { workspaceId: p.workspaceId, credential: actorRef(p), route, key: raw }
      let row = await store.repo.find(scope)
      if (row && row.created_at < cutoff) {
        await store.repo.release(scope)
        row = undefined
      }
      if (!row) {
        try {
          await store.repo.claim(scope, fingerprint, now.toISOString())
          req[marker] = scope
          return
        } catch (e) {
          if (!isUniqueViolation(e)) throw e
          row = await store.repo.find(scope)
          if (!row) throw new ApiError('idempotency_in_progress', 'A request with this Idempotency-Key is still running.')
        }
      }
      if (row.fingerprint !== fingerprint) throw validation('Idempotency-Key was already used with a different request body.')
      if (row.state === 'running')
        throw new ApiError('idempotency_in_progress', 'A request with this Idempotency-Key is still running; retry when it has finished.')
      return reply
        .code(row.status_code ?? 200)
        .header('idempotent-replayed', 'true')
        .type('application/json; charset=utf-8')
        .send(row.body ?? '')
    }

    async function after(req: Marked, reply: FastifyReply, payload: unknown): Promise<unknown> {
      const m = req[marker]
      if (!m) return payload
      delete req[marker]
      if (reply.statusCode >= 200 && reply.statusCode < 300) {
        await store.repo.complete(m, reply.statusCode, typeof payload === 'string' ? payload : JSON.stringify(payload))
      } else {
        await store.repo.release(m)
      }
      return payload
    }

    app.addHook('onRoute', (route) => {
      if (!route.config?.idempotent) return
      const pre = route.preHandler ? (Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler]) : []
      const send = route.onSend ? (Array.isArray(route.onSend) ? route.onSend : [route.onSend]) : []
      route.preHandler = [...pre, before]
      route.onSend = [...send, after]
    })
  }
}
