// The only code that reads or writes `oauth_tokens`.
import type { Selectable } from 'kysely'
import type { Executor } from '../../platform/db/Database.js'
import type { OauthTokensTable } from './tables.js'

export type OAuthTokenRecord = Selectable<OauthTokensTable>

export class OAuthTokenRepository {
  constructor(private readonly k: Executor) {}

  async insert(row: OAuthTokenRecord): Promise<void> {
    await this.k.insertInto('oauth_tokens').values(row).execute()
  }

  byHash(tokenHash: string): Promise<OAuthTokenRecord | undefined> {
    return this.k.selectFrom('oauth_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst()
  }

  /** Deletes tokens expired before `before`; returns how many. */
  async purgeExpired(before: string): Promise<number> {
    const r = await this.k.deleteFrom('oauth_tokens').where('expires_at', '<=', before).executeTakeFirst()
    return Number(r.numDeletedRows)
  }
}
