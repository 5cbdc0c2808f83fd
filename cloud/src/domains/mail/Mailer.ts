// Outgoing mail (webhook auto-disable notices to Owners, alert e-mails, reports with their
// CSV attached). Every message is
// first recorded in the `outbox` table, so nothing is lost and tests can read it; with
// SVC_SMTP_URL set it is then sent through nodemailer and marked sent (or its error kept).
// Without SMTP the message stays in the outbox and is logged.
import { randomUUID } from 'node:crypto'
import type { Transporter } from 'nodemailer'
import type { Clock } from '../../platform/clock.js'
import type { Database } from '../../platform/db/Database.js'
import type { MailOutboxRow } from './tables.js'
import { MailRepository } from './MailRepository.js'

export interface MailAttachment {
  filename: string
  contentType: string
  /** The file's text (a CSV). */
  content: string
}

export interface MailMessage {
  to: string[]
  subject: string
  text: string
  workspaceId?: string | null
  attachments?: MailAttachment[]
}

export type OutboxRow = MailOutboxRow

export class Mailer {
  /** Made with the first message to send: nodemailer loads then, not with the cloud. */
  private transport: Promise<Transporter> | null = null
  private readonly repo: MailRepository

  constructor(
    db: Database,
    private readonly clock: Clock,
    private readonly opts: { smtpUrl: string | null; from: string },
    private readonly log: { info(obj: unknown, msg: string): void; error(obj: unknown, msg: string): void },
  ) {
    this.repo = new MailRepository(db.kysely)
  }

  /** Records the message and sends it when SMTP is configured. Never throws for a send failure. */
  async send(msg: MailMessage): Promise<OutboxRow> {
    const id = `mail_${randomUUID()}`
    const to = [...new Set(msg.to.map((a) => a.trim()).filter(Boolean))]
    await this.repo.insert({
      id,
      workspace_id: msg.workspaceId ?? null,
      to_addresses: JSON.stringify(to),
      subject: msg.subject,
      body: msg.text,
      attachments: msg.attachments?.length ? JSON.stringify(msg.attachments) : null,
      created_at: this.clock.now().toISOString(),
    })
    const smtpUrl = this.opts.smtpUrl
    if (!smtpUrl || to.length === 0) {
      this.log.info({ mailId: id, to, subject: msg.subject }, smtpUrl ? 'mail without recipients kept in outbox' : 'no SMTP configured: mail kept in outbox')
    } else {
      try {
        const transport = await (this.transport ??= import('nodemailer').then((m) => m.default.createTransport(smtpUrl)))
        await transport.sendMail({
          from: this.opts.from,
          to,
          subject: msg.subject,
          text: msg.text,
          attachments: msg.attachments?.map((a) => ({ filename: a.filename, contentType: a.contentType, content: a.content })),
        })
        await this.repo.markSent(id, this.clock.now().toISOString())
      } catch (err) {
        this.log.error({ err, mailId: id }, 'mail send failed; kept in outbox')
        await this.repo.markFailed(id, String((err as Error).message ?? err).slice(0, 500))
      }
    }
    return (await this.repo.byId(id))!
  }

  /** Mail recorded for a workspace, oldest first (tests, support). */
  outbox(workspaceId: string): Promise<OutboxRow[]> {
    return this.repo.forWorkspace(workspaceId)
  }

  close(): void {
    void this.transport?.then((t) => t.close())
  }

  /** Drops mail sent more than `days` ago; unsent mail stays for an operator to see. */
  async purgeSent(days = 30): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - days * 86_400_000).toISOString()
    return this.repo.purgeSentBefore(cutoff)
  }
}
