// Mailer: always recorded in the outbox; with SVC_SMTP_URL the message goes out through
// nodemailer (here to a tiny in-test SMTP listener that speaks just enough of RFC 5321).
// The mail module alone is wired (wireDomains): its subject is the mailer, not HTTP.
import t from 'tap'
import net from 'node:net'
import type { Config } from '../../src/config.js'
import { wireDomains } from '../domains.js'

/** The mail module on its own, with a workspace row for its outbox. */
async function mail(t: import('tap').Test, config: Partial<Config> = {}) {
  const d = await wireDomains(t, ['mailer'], config)
  const workspaceId = 'ws_mail'
  await d.db.kysely
    .insertInto('workspaces')
    .values({ id: workspaceId, name: 'Mail', region: 'us', rate_limit: null, licensed_screens: null, created_at: d.clock.now().toISOString() })
    .execute()
  return { mailer: d.provided.mailer, workspaceId }
}

async function smtpListener(t: import('tap').Test): Promise<{ port: number; messages: { from: string; to: string[]; data: string }[] }> {
  const messages: { from: string; to: string[]; data: string }[] = []
  const server = net.createServer((sock) => {
    let buf = ''
    let inData = false
    let cur = { from: '', to: [] as string[], data: '' }
    sock.write('220 test ESMTP\r\n')
    sock.on('data', (chunk) => {
      buf += chunk.toString('utf8')
      let i
      while ((i = buf.indexOf('\r\n')) >= 0) {
        const line = buf.slice(0, i)
        buf = buf.slice(i + 2)
        if (inData) {
          if (line === '.') {
            inData = false
            messages.push(cur)
            cur = { from: '', to: [], data: '' }
            sock.write('250 queued\r\n')
          } else cur.data += `${line}\n`
          continue
        }
        const cmd = line.slice(0, 4).toUpperCase()
        if (cmd === 'EHLO' || cmd === 'HELO') sock.write('250 test\r\n')
        else if (cmd === 'MAIL') (cur.from = line), sock.write('250 ok\r\n')
        else if (cmd === 'RCPT') cur.to.push(/<([^>]+)>/.exec(line)?.[1] ?? line), sock.write('250 ok\r\n')
        else if (cmd === 'DATA') (inData = true), sock.write('354 go on\r\n')
        else if (cmd === 'QUIT') sock.end('221 bye\r\n')
        else sock.write('250 ok\r\n')
      }
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  t.after(() => {
    server.close()
  })
  return { port: (server.address() as net.AddressInfo).port, messages }
}

t.test('with SMTP configured the mail is sent and marked sent', async (t) => {
  const smtp = await smtpListener(t)
  const { mailer, workspaceId } = await mail(t, { smtpUrl: `smtp://127.0.0.1:${smtp.port}`, smtpFrom: 'Signage <alerts@example.com>' })
  const row = await mailer.send({ workspaceId, to: ['a@example.com', 'b@example.com', 'a@example.com'], subject: 'Hello', text: 'Body line' })
  t.ok(row.sent_at, 'marked sent')
  t.equal(row.error, null)
  t.equal(smtp.messages.length, 1)
  t.same(smtp.messages[0]!.to.sort(), ['a@example.com', 'b@example.com'], 'each address once')
  t.match(smtp.messages[0]!.from, /alerts@example\.com/)
  t.match(smtp.messages[0]!.data, /Subject: Hello/)
  t.match(smtp.messages[0]!.data, /Body line/)
})

t.test('an attachment is kept in the outbox and sent as a MIME part', async (t) => {
  const smtp = await smtpListener(t)
  const { mailer, workspaceId } = await mail(t, { smtpUrl: `smtp://127.0.0.1:${smtp.port}` })
  const row = await mailer.send({
    workspaceId,
    to: ['a@example.com'],
    subject: 'Report',
    text: 'Summary line',
    attachments: [{ filename: 'availability-2026-06-01.csv', contentType: 'text/csv', content: 'screenId,name\r\nscr_1,Lobby\r\n' }],
  })
  t.ok(row.sent_at, 'marked sent')
  t.same(JSON.parse(row.attachments!), [{ filename: 'availability-2026-06-01.csv', contentType: 'text/csv', content: 'screenId,name\r\nscr_1,Lobby\r\n' }])
  const data = smtp.messages[0]!.data
  t.match(data, /Content-Type: multipart\/mixed/)
  t.match(data, /Content-Type: text\/csv; name=availability-2026-06-01\.csv/)
  t.match(data, /Content-Disposition: attachment; filename=availability-2026-06-01\.csv/)
  t.match(data, /Summary line/)
})

t.test('an unreachable SMTP server keeps the mail in the outbox with the error', async (t) => {
  const { mailer, workspaceId } = await mail(t, { smtpUrl: 'smtp://127.0.0.1:1' })
  const row = await mailer.send({ workspaceId, to: ['a@example.com'], subject: 'S', text: 'T' })
  t.equal(row.sent_at, null)
  t.ok(row.error)
  t.equal((await mailer.outbox(workspaceId)).length, 1)
})

t.test('without SMTP the mail is kept in the outbox', async (t) => {
  const { mailer, workspaceId } = await mail(t)
  const row = await mailer.send({ workspaceId, to: ['a@example.com'], subject: 'S', text: 'T' })
  t.equal(row.sent_at, null)
  t.equal(row.error, null)
  t.same(JSON.parse(row.to_addresses), ['a@example.com'])
})
