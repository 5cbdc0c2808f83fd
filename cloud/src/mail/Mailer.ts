// Outgoing mail (webhook auto-disable notices to Owners, alert e-mails). Every message is
// first recorded in the `outbox` table, so nothing is lost and tests can read it; with
// SVC_SMTP_URL set it is then sent through nodemailer and marked sent (or its error kept).
// Without SMTP the message stays in the outbox and is logged.
import { randomUUID } from 'node:crypto'
import nodemailer from 'nodemailer'
import type { Transporter } from 'nodemailer'
import type { Clock } from '../clock.js'
import type { Database } from '../db/Database.js'

export interface MailMessage {
  to: string[]
  subject: string
  text: string
  workspaceId?: string | null
}

export interface OutboxRow {
  id: string
  workspace_id: string | null
  to_addresses: string
  subject: string
  body: string
  created_at: string
  sent_at: string | null
  error: string | null
}

export class Mailer {
  private readonly transport: Transporter | null

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly opts: { smtpUrl: string | null; from: string },
    private readonly log: { info(obj: unknown, msg: string): void; error(obj: unknown, msg: string): void },
  ) {
    this.transport = opts.smtpUrl ? nodemailer.createTransport(opts.smtpUrl) : null
  }

  /** Records the message and sends it when SMTP is configured. Never throws for a send failure. */
  async send(msg: MailMessage): Promise<OutboxRow> {
    const id = `mail_${randomUUID()}`
    const to = [...new Set(msg.to.map((a) => a.trim()).filter(Boolean))]
    await this.db.run('INSERT INTO outbox (id, workspace_id, to_addresses, subject, body, created_at) VALUES (?, ?, ?, ?, ?, ?)', [
      id,
      msg.workspaceId ?? null,
      JSON.stringify(to),
      msg.subject,
      msg.text,
      this.clock.now().toISOString(),
    ])
    if (!this.transport || to.length === 0) {
      this.log.info(
        { mailId: id, to, subject: msg.subject },
        this.transport ? 'mail without recipients kept in outbox' : 'no SMTP configured: mail kept in outbox',
      )
    } else {
      try {
        await this.transport.sendMail({ from: this.opts.from, to, subject: msg.subject, text: msg.text })
        await this.db.run('UPDATE outbox SET sent_at = ? WHERE id = ?', [this.clock.now().toISOString(), id])
      } catch (err) {
        this.log.error({ err, mailId: id }, 'mail send failed; kept in outbox')
        await this.db.run('UPDATE outbox SET error = ? WHERE id = ?', [String((err as Error).message ?? err).slice(0, 500), id])
      }
    }
    return (await this.db.get<OutboxRow>('SELECT * FROM outbox WHERE id = ?', [id]))!
  }

  /** Mail recorded for a workspace, oldest first (tests, support). */
  outbox(workspaceId: string): Promise<OutboxRow[]> {
    return this.db.all<OutboxRow>('SELECT * FROM outbox WHERE workspace_id = ? ORDER BY created_at, id', [workspaceId])
  }

  close(): void {
    this.transport?.close()
  }

  /** Drops mail sent more than `days` ago; unsent mail stays for an operator to see. */
  async purgeSent(days = 30): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - days * 86_400_000).toISOString()
    return (await this.db.run('DELETE FROM outbox WHERE sent_at IS NOT NULL AND sent_at < ?', [cutoff])).changes
  }
}
