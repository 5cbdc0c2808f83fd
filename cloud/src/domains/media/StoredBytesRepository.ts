// Reads the `sha256` columns of `media`, `screenshots` and `agent_releases` (never writes): who holds a file
// of the content-addressed store (domains/media/MediaStore.ts). Every table that keeps bytes in
// that store by hash is asked here, so a deleter never removes bytes another owner holds.
import type { Executor } from '../../platform/db/Database.js'

export class StoredBytesRepository {
  constructor(private readonly k: Executor) {}

  /** Whether any owner still holds the stored file: a media item of any workspace, a screenshot of any screen, an agent release. */
  async inUse(sha256: string): Promise<boolean> {
    const media = await this.k.selectFrom('media').select('id').where('sha256', '=', sha256).limit(1).executeTakeFirst()
    if (media) return true
    const shot = await this.k.selectFrom('screenshots').select('id').where('sha256', '=', sha256).limit(1).executeTakeFirst()
    if (shot) return true
    const release = await this.k.selectFrom('agent_releases').select('id').where('sha256', '=', sha256).limit(1).executeTakeFirst()
    return release !== undefined
  }
}
