// Recall and restore: an item pulled from every screen at once (unplayable until restored),
// each with its event recorded in the change's transaction.
import type { Clock } from '../../platform/clock.js'
import type { Database } from '../../platform/db/Database.js'
import { ApiError, validation } from '../../platform/errors.js'
import { actorRef, type Principal } from '../../platform/http/Principal.js'
import type { EventOutbox } from '../events/index.js'
import type { EventData } from '../events/index.js'
import type { ContentAccess } from './ContentAccess.js'
import { ContentRepository } from './ContentRepository.js'
import type { ContentService } from './ContentService.js'
import type { Located } from './library.js'
import { type ContentKind, RECALLABLE } from './kinds.js'

/** The kinds a recall or restore event names (only they can be recalled: RECALLABLE). */
type RecallableKind = EventData['content.recalled']['kind']

export class ContentRecall {
  private readonly repo: ContentRepository

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly access: ContentAccess,
    private readonly outbox: EventOutbox,
    /** Tells the library's listeners (screens showing the item are republished). */
    private readonly library: Pick<ContentService, 'changed'>,
  ) {
    this.repo = new ContentRepository(db.kysely)
  }

  private tableOf(kind: ContentKind): 'media' | 'content_items' {
    return kind === 'media' ? 'media' : 'content_items'
  }

  /** Pulls the item from every screen: unplayable until restored. Recalling a recalled item is 409 conflict. */
  async recall(p: Principal, kind: ContentKind, id: string, reason: string | null): Promise<Located> {
    const meta = RECALLABLE[kind]
    if (!meta) throw validation(`${kind} cannot be recalled.`)
    const item = await this.access.requireOwned(p, kind, id)
    if (item.recalledAt) throw new ApiError('conflict', `This ${meta.label.toLowerCase()} is already recalled (since ${item.recalledAt}); restore it first.`)
    const now = this.clock.now().toISOString()
    const by = actorRef(p)
    // The recall and its event commit together: a crash after the change cannot lose the webhook.
    const recalled = await this.db.transaction(async (tx) => {
      if (!(await this.repo.recall(this.tableOf(kind), p.workspaceId, id, reason, by, now, tx.kysely))) return false
      await this.outbox.record(tx, {
        event: 'content.recalled',
        workspaceId: p.workspaceId,
        occurredAt: now,
        data: { kind: kind as RecallableKind, id, name: meta.label, reason, recalledBy: by, contentName: item.name },
      })
      return true
    })
    if (!recalled) throw new ApiError('conflict', `This ${meta.label.toLowerCase()} is already recalled.`)
    await this.library.changed(p.workspaceId, kind, id)
    await this.outbox.dispatch()
    return (await this.access.locate(p.workspaceId, kind, id))!
  }

  async restore(p: Principal, kind: ContentKind, id: string): Promise<Located> {
    const meta = RECALLABLE[kind]
    if (!meta) throw validation(`${kind} cannot be restored.`)
    const item = await this.access.requireOwned(p, kind, id)
    if (!item.recalledAt) throw new ApiError('conflict', `This ${meta.label.toLowerCase()} is not recalled.`)
    const now = this.clock.now().toISOString()
    const restored = await this.db.transaction(async (tx) => {
      if (!(await this.repo.restore(this.tableOf(kind), p.workspaceId, id, now, tx.kysely))) return false
      await this.outbox.record(tx, {
        event: 'content.restored',
        workspaceId: p.workspaceId,
        occurredAt: now,
        data: { kind: kind as RecallableKind, id, name: meta.label, restoredBy: actorRef(p), contentName: item.name },
      })
      return true
    })
    if (!restored) throw new ApiError('conflict', `This ${meta.label.toLowerCase()} is not recalled.`)
    await this.library.changed(p.workspaceId, kind, id)
    await this.outbox.dispatch()
    return (await this.access.locate(p.workspaceId, kind, id))!
  }
}
