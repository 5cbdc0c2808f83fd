// The only code that reads or writes `outbox`, the mail outbox: every message the Mailer
// sends is recorded here first, then marked sent or given its error.
import type { Executor } from '../../platform/db/Database.js'
import type { MailOutboxRow } from './tables.js'

export class MailRepository {
  constructor(private readonly k: Executor) {}

  async insert(row: Omit<MailOutboxRow, 'sent_at' | 'error' | 'attachments'> & { attachments?: string | null }): Promise<void> {
    await this.k.insertInto('outbox').values(row).execute()
  }

  byId(id: string): Promise<MailOutboxRow | undefined> {
    return this.k.selectFrom('outbox').selectAll().where('id', '=', id).executeTakeFirst()
  }

  async markSent(id: string, at: string): Promise<void> {
    await this.k.updateTable('outbox').set({ sent_at: at }).where('id', '=', id).execute()
  }

  async markFailed(id: string, error: string): Promise<void> {
    await this.k.updateTable('outbox').set({ error }).where('id', '=', id).execute()
  }

  /** A workspace's mail, oldest first. */
  forWorkspace(workspaceId: string): Promise<MailOutboxRow[]> {
    return this.k.selectFrom('outbox').selectAll().where('workspace_id', '=', workspaceId).orderBy('created_at').orderBy('id').execute()
  }

  /** Drops mail sent before `cutoff`; unsent mail stays. Returns how many went. */
  async purgeSentBefore(cutoff: string): Promise<number> {
    const r = await this.k.deleteFrom('outbox').where('sent_at', 'is not', null).where('sent_at', '<', cutoff).executeTakeFirst()
    return Number(r.numDeletedRows)
  }
}
