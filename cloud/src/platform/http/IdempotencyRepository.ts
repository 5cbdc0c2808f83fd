// The only code that reads or writes `idempotency_keys`: the Idempotency-Key records, kept
// in the database only (no per-process memory), so every instance sees the same keys.
import type { Selectable } from 'kysely'
import type { Executor } from '../db/Database.js'
import type { IdempotencyKeysTable } from '../db/schema.js'

export type IdempotencyRecord = Selectable<IdempotencyKeysTable>
/** A key is scoped per workspace, credential and route. */
export interface IdempotencyScope {
  workspaceId: string
  /** `apikey:<id>` or a user id (actorRef). */
  credential: string
  route: string
  key: string
}

export class IdempotencyRepository {
  constructor(private readonly k: Executor) {}

  find(s: IdempotencyScope): Promise<IdempotencyRecord | undefined> {
    return this.k
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('workspace_id', '=', s.workspaceId)
      .where('credential', '=', s.credential)
      .where('route', '=', s.route)
      .where('idem_key', '=', s.key)
      .executeTakeFirst()
  }

  /** Claims the key for a first attempt; throws a unique violation when another holds it. */
  async claim(s: IdempotencyScope, fingerprint: string, at: string): Promise<void> {
    await this.k
      .insertInto('idempotency_keys')
      .values({ workspace_id: s.workspaceId, credential: s.credential, route: s.route, idem_key: s.key, fingerprint, state: 'running', created_at: at })
      .execute()
  }

  /** Records the first attempt's success for replays. */
  async complete(s: IdempotencyScope, statusCode: number, body: string): Promise<void> {
    await this.k
      .updateTable('idempotency_keys')
      .set({ state: 'done', status_code: statusCode, body })
      .where('workspace_id', '=', s.workspaceId)
      .where('credential', '=', s.credential)
      .where('route', '=', s.route)
      .where('idem_key', '=', s.key)
      .execute()
  }

  /** Frees the key (a failed first attempt, or an expired record). */
  async release(s: IdempotencyScope): Promise<void> {
    await this.k
      .deleteFrom('idempotency_keys')
      .where('workspace_id', '=', s.workspaceId)
      .where('credential', '=', s.credential)
      .where('route', '=', s.route)
      .where('idem_key', '=', s.key)
      .execute()
  }

  /** Deletes records created before `before`; returns how many. */
  async purgeBefore(before: string): Promise<number> {
    const r = await this.k.deleteFrom('idempotency_keys').where('created_at', '<', before).executeTakeFirst()
    return Number(r.numDeletedRows)
  }
}
