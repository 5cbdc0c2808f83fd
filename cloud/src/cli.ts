// The cloud's command line (`pnpm cloud <command>`):
//   start                                   run the service on its embedded defaults
//   migrate                                 bring the database schema up to date; prints one JSON line
//   bootstrap --workspace NAME [--region R] [--email E]
//                                           create a workspace and an owner key (with --email, its owner and their console invite link); prints one JSON line
//   create-user --workspace ID --email E [--name N] [--role owner|admin|editor|viewer]
//                                           add a user and print their invite link (one JSON line)
//   incident open --title T --impact degraded|outage|none [--status S] [--message M] [--screens-playing yes|no]
//   incident update ID --status S --message M [--impact I]
//   incident resolve ID [--message M]
//   incident list
//   backup --out DIR                        a consistent copy of the running SQLite database and the media files, with a manifest (backup.ts)
//   restore --from DIR                      a backup into an empty data folder, refused when damaged or partial; prints one JSON line
// Bad arguments print a message on stderr and exit 2; never a stack trace.
import { parseArgs } from 'node:util'
import { type Config, loadConfig } from './config.js'
import type { Database } from './platform/db/Database.js'
import { openDatabase } from './platform/db/open.js'
import { migrate } from './platform/db/migrate.js'
import { IdGenerator, systemClock } from './platform/clock.js'
import { WorkspaceService } from './domains/account/WorkspaceService.js'
import { UserService } from './domains/access/UserService.js'
import { SignInService } from './domains/access/SignInService.js'
import { SignInLimits } from './domains/access/SignInLimits.js'
import { LocalCredentialChanges } from './domains/access/CredentialChanges.js'
import { Mailer } from './domains/mail/Mailer.js'
import { NodeService } from './domains/nodes/NodeService.js'
import { ApiKeyService } from './domains/access/ApiKeyService.js'
import { StatusService } from './domains/status/StatusService.js'
import { isApiError } from './platform/errors.js'
import { AuditTrail } from './domains/audit/AuditTrail.js'
import { diff } from './domains/audit/changes.js'
import type { AuditResource } from './domains/audit/types.js'
import { backup, BackupError, restore } from './backup.js'
import { refuseIfDataDirHeld } from './dataLock.js'

class UsageError extends Error {}

const USAGE = `usage: pnpm cloud <start | migrate | bootstrap | create-user | incident | backup | restore> [options]
  start
  migrate
  bootstrap --workspace NAME [--region us|eu|oc|apac] [--email YOU@EXAMPLE.COM]
  create-user --workspace ID --email EMAIL [--name NAME] [--role owner|admin|editor|viewer]
  incident open --title T --impact degraded|outage|none [--status S] [--message M] [--screens-playing yes|no]
  incident update ID --status investigating|identified|monitoring|resolved --message M [--impact I]
  incident resolve ID [--message M]
  incident list
  backup --out DIR
  restore --from DIR`

async function withDb<T>(fn: (deps: { db: Database; ids: IdGenerator }) => Promise<T>): Promise<T> {
  const config = loadConfig()
  const db = await openDatabase(config)
  try {
    await migrate(db)
    return await fn({ db, ids: new IdGenerator(systemClock) })
  } finally {
    await db.close()
  }
}

/** Records what a command changed in the workspace's audit log (actor `system`, via `cli`). */
async function audited(db: Database, ids: IdGenerator, workspaceId: string, action: string, resource: AuditResource, after: object): Promise<void> {
  const config = loadConfig()
  await new AuditTrail(db, systemClock, ids, config.auditEnabled).record({
    workspaceId,
    actor: { kind: 'system', id: null, name: 'pnpm cloud' },
    via: 'cli',
    action,
    resource,
    nodeId: null,
    changes: diff(null, after),
    requestId: null,
    ip: null,
    outcome: 'success',
  })
}

function out(obj: unknown): void {
  process.stdout.write(`${JSON.stringify(obj)}\n`)
}

async function main(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv
  switch (cmd) {
    case 'start': {
      // A bad setting, or another instance on the data folder, stops here, before the
      // server's modules load. They are loaded only here: the other commands need the
      // database, not the HTTP stack and broker.
      const config = loadConfig()
      refuseIfDataDirHeld(config.dataDir)
      const { runServer } = await import('./server.js')
      await runServer(config)
      return
    }
    case 'migrate': {
      parseArgs({ args: rest, options: {}, strict: true })
      const config = loadConfig()
      const db = await openDatabase(config)
      try {
        const { applied, version } = await migrate(db)
        out({ engine: db.dialect, version, applied })
      } finally {
        await db.close()
      }
      return
    }
    case 'bootstrap': {
      const { values } = parseArgs({
        args: rest,
        options: { workspace: { type: 'string' }, region: { type: 'string', default: 'us' }, email: { type: 'string' } },
        strict: true,
      })
      if (!values.workspace) throw new UsageError('bootstrap needs --workspace NAME')
      await withDb(async ({ db, ids }) => {
        const config = loadConfig()
        const workspaces = new WorkspaceService(db, systemClock, ids, config.rateLimitPerMinute)
        const ws = await workspaces.create(values.workspace!, values.region)
        const keys = new ApiKeyService(db, systemClock, ids, new NodeService(db, systemClock, ids))
        const { secret, key } = await keys.createRoot(ws.id, ws.region, 'Owner key (bootstrap)', 'all')
        await audited(db, ids, ws.id, 'workspace.create', { kind: 'workspace', id: ws.id, name: ws.name }, { name: ws.name, region: ws.region })
        await audited(db, ids, ws.id, 'api-key.create', { kind: 'api-key', id: key.id, name: key.name }, { name: key.name, permissions: 'all' })
        if (!values.email) return out({ workspaceId: ws.id, apiKey: secret })
        // With --email, the workspace's first owner too, and the console link where they set a password.
        const users = new UserService(db, systemClock, ids, undefined, config.sessionTtlHours)
        const user = await users.create(ws.id, { email: values.email, role: 'owner' })
        await audited(db, ids, ws.id, 'user.create', { kind: 'user', id: user.id, name: user.email }, { email: user.email, role: user.role })
        const link = await consoleInvite(db, ids, config, users, user, ws.name)
        out({ workspaceId: ws.id, apiKey: secret, userId: user.id, inviteUrl: link.inviteUrl, inviteExpiresAt: link.expiresAt })
      })
      return
    }
    case 'create-user': {
      const { values } = parseArgs({
        args: rest,
        options: { workspace: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' }, role: { type: 'string', default: 'owner' } },
        strict: true,
      })
      if (!values.workspace || !values.email) throw new UsageError('create-user needs --workspace ID and --email EMAIL')
      await withDb(async ({ db, ids }) => {
        const config = loadConfig()
        const ws = await new WorkspaceService(db, systemClock, ids, config.rateLimitPerMinute).get(values.workspace!)
        if (!ws) throw new UsageError(`no workspace ${values.workspace}`)
        const users = new UserService(db, systemClock, ids, undefined, config.sessionTtlHours)
        const user = await users.create(ws.id, { email: values.email!, name: values.name ?? null, role: values.role })
        await audited(db, ids, ws.id, 'user.create', { kind: 'user', id: user.id, name: user.email }, { email: user.email, name: user.name, role: user.role })
        const session = await users.createSession(user)
        const link = await consoleInvite(db, ids, config, users, user, ws.name)
        out({
          workspaceId: ws.id,
          userId: user.id,
          role: user.role,
          inviteUrl: link.inviteUrl,
          inviteExpiresAt: link.expiresAt,
          sessionToken: session.token,
          expiresAt: session.expiresAt,
        })
      })
      return
    }
    case 'incident': {
      const [sub, ...args] = rest
      const { values, positionals } = parseArgs({
        args,
        allowPositionals: true,
        options: {
          title: { type: 'string' },
          impact: { type: 'string' },
          status: { type: 'string' },
          message: { type: 'string' },
          'screens-playing': { type: 'string' },
        },
        strict: true,
      })
      const playing = values['screens-playing'] === undefined ? undefined : values['screens-playing'] === 'yes'
      await withDb(async ({ db, ids }) => {
        const status = new StatusService(db, systemClock, ids, { database: async () => 0, broker: async () => 0 })
        switch (sub) {
          case 'open':
            if (!values.title || !values.impact) throw new UsageError('incident open needs --title and --impact')
            out(
              await status.openIncident({
                title: values.title,
                impact: values.impact,
                status: values.status,
                message: values.message,
                screensPlaying: playing,
              }),
            )
            return
          case 'update':
            if (!positionals[0] || !values.status || !values.message) throw new UsageError('incident update needs ID, --status and --message')
            out(await status.updateIncident(positionals[0], { status: values.status, message: values.message, impact: values.impact, screensPlaying: playing }))
            return
          case 'resolve':
            if (!positionals[0]) throw new UsageError('incident resolve needs ID')
            out(await status.updateIncident(positionals[0], { status: 'resolved', message: values.message ?? 'Resolved.', screensPlaying: playing }))
            return
          case 'list':
            for (const i of await status.listIncidents()) out(i)
            return
          default:
            throw new UsageError(`unknown incident command ${sub ?? '(none)'}`)
        }
      })
      return
    }
    case 'backup': {
      const { values } = parseArgs({ args: rest, options: { out: { type: 'string' } }, strict: true })
      if (!values.out) throw new UsageError('backup needs --out DIR')
      const result = await backup(loadConfig(), values.out)
      out(result)
      if (result.pgDump) process.stderr.write(`the database is on PostgreSQL and is not in this backup: back it up with\n  ${result.pgDump}\n`)
      return
    }
    case 'restore': {
      const { values } = parseArgs({ args: rest, options: { from: { type: 'string' } }, strict: true })
      if (!values.from) throw new UsageError('restore needs --from DIR')
      const result = await restore(loadConfig(), values.from)
      out(result)
      if (result.pgRestore) process.stderr.write(`media restored; restore the PostgreSQL database with\n  ${result.pgRestore}\n`)
      return
    }
    default:
      throw new UsageError(cmd ? `unknown command ${cmd}` : 'no command given')
  }
}

main(process.argv.slice(2)).catch((e: unknown) => {
  if (e instanceof UsageError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`${(e as Error).message}\n${USAGE}\n`)
    process.exit(2)
  }
  if (e instanceof BackupError) {
    process.stderr.write(`${e.message}\n`)
    process.exit(1)
  }
  if (isApiError(e)) {
    process.stderr.write(`${e.code}: ${e.message}\n`)
    process.exit(2)
  }
  process.stderr.write(`error: ${(e as Error).message}\n`)
  process.exit(1)
})

/** A console invite link for a user made here; the mail is recorded in the outbox (the running cloud sends it when SMTP is set). */
function consoleInvite(
  db: Database,
  ids: IdGenerator,
  config: Config,
  users: UserService,
  user: { id: string; workspace_id: string; email: string; name: string | null },
  workspaceName: string,
) {
  const mailer = new Mailer(db, systemClock, { smtpUrl: null, from: config.smtpFrom }, { info() {}, error() {} })
  const signIns = new SignInService(
    db,
    systemClock,
    ids,
    undefined,
    users,
    new SignInLimits(systemClock),
    mailer,
    config.publicUrl,
    new LocalCredentialChanges(),
  )
  return signIns.invite(user, { workspaceName })
}
