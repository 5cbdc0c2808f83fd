// Tells a rule's channels that an alert event opened or closed. `in-app` is the event row
// itself; `email` goes through the Mailer (addresses and `role:` tokens); `webhook` POSTs
// to the https URLs in `recipients`, signed like webhook deliveries with the rule's own
// secret; `chat` POSTs `{text}` to each chat workflow URL. All outbound HTTP goes through
// the SSRF guard. One attempt per channel target (failures are logged, not retried).
import type { Clock } from '../../platform/clock.js'
import type { UserService } from '../access/index.js'
import type { OutboundGuard } from '../../platform/net/OutboundGuard.js'
import type { Mailer } from '../mail/index.js'
import { signedHeaders } from '../webhooks/index.js'
import { describeSendError } from '../webhooks/index.js'
import { isUrlLike } from './masking.js'
import { parseConfig, type AlertRuleRow } from './AlertRuleService.js'
import type { AlertEventView } from './AlertEventView.js'

export interface NotifyOutcome {
  channel: 'email' | 'webhook' | 'chat'
  target: string
  ok: boolean
  error: string | null
}

export class AlertNotifier {
  private readonly inFlight = new Set<Promise<unknown>>()

  constructor(
    /** The workspace's users: recipients by role. */
    private readonly users: Pick<UserService, 'emailsWithRole'>,
    private readonly clock: Clock,
    private readonly outbound: OutboundGuard,
    private readonly mailer: Mailer,
    private readonly log: { warn(obj: unknown, msg: string): void; error(obj: unknown, msg: string): void },
  ) {}

  /** Starts the notifications without holding up the caller (the device link). */
  notify(rule: AlertRuleRow, event: AlertEventView, state: 'opened' | 'closed'): void {
    const p = this.send(rule, event, state).catch((err) => this.log.error({ err, alertEventId: event.id }, 'alert notification failed'))
    this.inFlight.add(p)
    void p.finally(() => this.inFlight.delete(p))
  }

  /** Resolves when every notification started so far has finished (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.inFlight.size) await Promise.all([...this.inFlight])
  }

  async send(rule: AlertRuleRow, event: AlertEventView, state: 'opened' | 'closed'): Promise<NotifyOutcome[]> {
    const config = parseConfig(rule)
    const out: NotifyOutcome[] = []
    const verb = state === 'opened' ? 'Alert' : 'Resolved'
    const summary = `${verb}: ${event.message}`
    const tasks: Promise<void>[] = []
    if (config.channels.includes('email')) {
      tasks.push(
        (async () => {
          const to = await this.addresses(rule.workspace_id, config.recipients)
          if (!to.length) return
          await this.mailer.send({
            workspaceId: rule.workspace_id,
            to,
            subject: `[${event.severity}] ${summary}`.slice(0, 200),
            text: `${summary}\n\nRule: ${rule.name}\nScreen: ${event.screenName} (${event.screenId})\nOpened: ${event.openedAt}${event.closedAt ? `\nClosed: ${event.closedAt}` : ''}${event.nextAction ? `\n\nNext step: ${event.nextAction}` : ''}`,
          })
          out.push({ channel: 'email', target: to.join(', '), ok: true, error: null })
        })(),
      )
    }
    if (config.channels.includes('webhook')) {
      const now = this.clock.now()
      for (const url of config.recipients.filter(isUrlLike)) {
        const eventName = state === 'opened' ? 'alert.opened' : 'alert.closed'
        const body = JSON.stringify({
          deliveryId: `${event.id}.${state}`,
          event: eventName,
          occurredAt: state === 'opened' ? event.openedAt : (event.closedAt ?? now.toISOString()),
          workspaceId: rule.workspace_id,
          attempt: 1,
          data: { alert: event, rule: { id: rule.id, name: rule.name } },
        })
        tasks.push(this.post('webhook', url, signedHeaders(rule.webhook_secret, body, eventName, now), body, out))
      }
    }
    if (config.channels.includes('chat')) {
      const text = `${state === 'opened' ? '🔴' : '✅'} ${summary}${event.nextAction && state === 'opened' ? ` — ${event.nextAction}` : ''}`
      for (const url of config.chatUrls) {
        const body = JSON.stringify({ text, alertEventId: event.id, state, severity: event.severity, screenId: event.screenId, screenName: event.screenName })
        tasks.push(this.post('chat', url, { 'content-type': 'application/json', 'user-agent': 'Svc-Webhooks/1' }, body, out))
      }
    }
    await Promise.all(tasks)
    return out
  }

  private async post(channel: 'webhook' | 'chat', url: string, headers: Record<string, string>, body: string, out: NotifyOutcome[]): Promise<void> {
    let error: string | null = null
    try {
      const res = await this.outbound.request(url, { method: 'POST', headers, body })
      if (res.status < 200 || res.status > 299) error = `http ${res.status}`
    } catch (e) {
      error = describeSendError(e, 10_000)
    }
    if (error) this.log.warn({ channel, host: safeHost(url), error }, 'alert channel send failed')
    out.push({ channel, target: safeHost(url), ok: !error, error })
  }

  /** E-mail addresses among the recipients, with `role:<role>` expanded to the workspace's users. */
  private async addresses(workspaceId: string, recipients: string[]): Promise<string[]> {
    const out = new Set<string>()
    for (const r of recipients) {
      if (isUrlLike(r)) continue
      if (r.startsWith('role:')) {
        for (const email of await this.users.emailsWithRole(workspaceId, r.slice(5))) out.add(email)
      } else out.add(r)
    }
    return [...out]
  }
}

function safeHost(url: string): string {
  try {
    return new URL(url).host
  } catch {
    return '(invalid)'
  }
}
