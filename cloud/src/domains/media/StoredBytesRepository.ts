// Reads the `sha256` columns of `media` and `screenshots` (never writes): who holds a file
// of the content-addressed store (domains/media/MediaStore.ts). Every table that keeps bytes in
// that store by hash is asked here, so a deleter never removes bytes another owner holds.
import type { Executor } from '../../platform/db/Database.js'

export class StoredBytesRepository {
  constructor(private readonly k: Executor) {}

  /** Whether any owner still holds the stored file: a media item of any workspace, or a screenshot of any screen. */
  async inUse(sha256: string): Promise<boolean> {
    const media = await this.k.selectFrom('media').select('id').where('sha256', '=', sha256).limit(1).executeTakeFirst()
    if (media) return true
    const shot = await this.k.selectFrom('screenshots').select('id').where('sha256', '=', sha256).limit(1).executeTakeFirst()
    return shot !== undefined
  }
}
