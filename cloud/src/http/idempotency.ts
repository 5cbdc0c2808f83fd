// `Idempotency-Key` for creates that may be retried (SPEC "Errors"): a repeat with the same
// key returns the first success; while the first is still running the repeat gets 409
// idempotency_in_progress. Keys are scoped per workspace and route and kept 24 hours;
// a failed first attempt frees the key so a retry can run.
import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Clock } from '../clock.js'
import type { Database } from '../db/Database.js'
import { isUniqueViolation } from '../db/Database.js'
import { ApiError, validation } from '../errors.js'
import { principalOf } from './types.js'

export const IDEMPOTENCY_TTL_MS = 24 * 3600_000
const KEY = /^[\x21-\x7e]{1,255}$/

interface IdemRow {
  fingerprint: string
  state: 'running' | 'done'
  status_code: number | null
  body: string | null
  created_at: string
}

const marker = Symbol('idempotency')
type Marked = FastifyRequest & { [marker]?: { route: string; key: string; workspaceId: string } }

export class IdempotencyStore {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
  ) {}

  async purgeExpired(): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - IDEMPOTENCY_TTL_MS).toISOString()
    return (await this.db.run('DELETE FROM idempotency_keys WHERE created_at < ?', [cutoff])).changes
  }

  install(app: FastifyInstance): void {
    const store = this
    async function before(req: Marked, reply: FastifyReply): Promise<FastifyReply | void> {
      const raw = req.headers['idempotency-key']
      if (raw === undefined) return
      if (typeof raw !== 'string' || !KEY.test(raw)) throw validation('Idempotency-Key must be 1 to 255 visible ASCII characters.')
      const p = principalOf(req)
      const route = `${req.method} ${req.routeOptions.url}`
      const fingerprint = createHash('sha256')
        .update(JSON.stringify(req.body ?? null))
        .digest('hex')
      const now = store.clock.now()
      const cutoff = new Date(now.getTime() - IDEMPOTENCY_TTL_MS).toISOString()
      const args = [p.workspaceId, route, raw]
      let row = await store.db.get<IdemRow>(
        'SELECT fingerprint, state, status_code, body, created_at FROM idempotency_keys WHERE workspace_id = ? AND route = ? AND idem_key = ?',
        args,
      )
      if (row && row.created_at < cutoff) {
        await store.db.run('DELETE FROM idempotency_keys WHERE workspace_id = ? AND route = ? AND idem_key = ?', args)
        row = undefined
      }
      if (!row) {
        try {
          await store.db.run("INSERT INTO idempotency_keys (workspace_id, route, idem_key, fingerprint, state, created_at) VALUES (?, ?, ?, ?, 'running', ?)", [
            ...args,
            fingerprint,
            now.toISOString(),
          ])
          req[marker] = { route, key: raw, workspaceId: p.workspaceId }
          return
        } catch (e) {
          if (!isUniqueViolation(e)) throw e
          row = await store.db.get<IdemRow>(
            'SELECT fingerprint, state, status_code, body, created_at FROM idempotency_keys WHERE workspace_id = ? AND route = ? AND idem_key = ?',
            args,
          )
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
      const args = [m.workspaceId, m.route, m.key]
      if (reply.statusCode >= 200 && reply.statusCode < 300) {
        await store.db.run("UPDATE idempotency_keys SET state = 'done', status_code = ?, body = ? WHERE workspace_id = ? AND route = ? AND idem_key = ?", [
          reply.statusCode,
          typeof payload === 'string' ? payload : JSON.stringify(payload),
          ...args,
        ])
      } else {
        await store.db.run('DELETE FROM idempotency_keys WHERE workspace_id = ? AND route = ? AND idem_key = ?', args)
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
