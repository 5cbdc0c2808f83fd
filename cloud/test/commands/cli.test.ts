// The cloud CLI as a real process (DESIGN "Start-up and CLIs", "Bootstrap"): one JSON line
// on stdout, usage errors exit 2 without a stack trace, and what it writes is what a server
// on the same SVC_DATA_DIR sees, also while that server runs.
import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildApp } from '../../src/app.js'
import { memoryPersistence } from '../../src/platform/broker/persistence.js'
import { testConfig } from '../../src/config.js'
import { startServer } from '../../src/server.js'
import { tempDir as newTempDir } from '../fixtures/processes.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')
const tempDir = (t: Test) => newTempDir(t, 'svc-cli-')
const API_KEY = /^ak_(us|eu|oc|apac)_live_[A-Za-z0-9]{32}$/

/** The environment without any SVC_* setting of the caller, plus the given ones. */
function env(extra: Record<string, string>): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SVC_')) out[k] = v
  return { ...out, ...extra }
}

interface Run {
  code: number | null
  stdout: string
  stderr: string
}

function cli(dataDir: string, ...args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['scripts/cloud.mjs', ...args], {
      cwd: ROOT,
      env: env({ SVC_DATA_DIR: dataDir }),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
    // A hang guard, not a bound on how fast it is: several CLIs start at once on a busy machine.
    let hung = false
    const timer = setTimeout(() => {
      hung = true
      child.kill('SIGKILL')
    }, 5 * 60_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr: hung ? `${stderr}\n(killed after 5 minutes waiting for \`pnpm cloud ${args.join(' ')}\` to exit)` : stderr })
    })
  })
}

/** Exactly one JSON line on stdout, parsed. */
function oneLine(t: Test, run: Run): Record<string, unknown> {
  t.equal(run.code, 0, `exit 0 (stderr: ${run.stderr})`)
  t.ok(run.stdout.endsWith('\n'), 'ends with a newline')
  const lines = run.stdout.split('\n').filter((l) => l !== '')
  t.equal(lines.length, 1, 'one line on stdout')
  return JSON.parse(lines[0]!) as Record<string, unknown>
}

function usageFailure(t: Test, run: Run, message: RegExp): void {
  t.equal(run.code, 2)
  t.equal(run.stdout, '', 'nothing on stdout')
  t.match(run.stderr, message)
  t.notMatch(run.stderr, /^\s+at /m, 'no stack trace')
  t.notMatch(run.stderr, /\.ts:\d+/, 'no source positions')
}

t.test('bootstrap prints one JSON line; regions; usage errors exit 2', async (t) => {
  // Each run costs about a second of start-up, so only the cases that take different paths.
  const [us, eu, badRegion, unknown] = await Promise.all([
    cli(tempDir(t), 'bootstrap', '--workspace', 'Acme'),
    cli(tempDir(t), 'bootstrap', '--workspace', 'Acme EU', '--region', 'eu'),
    cli(tempDir(t), 'bootstrap', '--workspace', 'Acme', '--region', 'mars'),
    cli(tempDir(t), 'frobnicate'),
  ])
  const a = oneLine(t, us)
  t.same(Object.keys(a), ['workspaceId', 'apiKey'])
  t.match(a.workspaceId, /^ws_[0-9a-z]+$/)
  t.match(a.apiKey, /^ak_us_live_[A-Za-z0-9]{32}$/)
  t.equal(us.stdout, `${JSON.stringify(a)}\n`)
  t.equal(us.stderr, '', 'nothing on stderr either')

  const b = oneLine(t, eu)
  t.match(b.apiKey, /^ak_eu_live_[A-Za-z0-9]{32}$/)

  usageFailure(t, badRegion, /region/)
  usageFailure(t, unknown, /unknown command frobnicate/)
  t.match(unknown.stderr, /usage: /, 'the usage follows')
})

t.test('bootstrap, create-user and incidents beside a running server on the same data dir', async (t) => {
  const dataDir = tempDir(t)
  const dbFile = path.join(dataDir, 'svc.sqlite')
  const server = await startServer(testConfig({ dataDir, dbFile, host: '127.0.0.1', httpPort: 0, mqttPort: 0 }))
  t.after(() => server.close())
  const base = `http://127.0.0.1:${server.httpPort}`
  const get = async (url: string, token?: unknown) => {
    const res = await fetch(`${base}${url}`, token ? { headers: { authorization: `Bearer ${String(token)}` } } : {})
    return { status: res.status, body: (await res.json()) as { data: any } }
  }
  t.equal((await get('/v1/status')).status, 200)

  const ws = oneLine(t, await cli(dataDir, 'bootstrap', '--workspace', 'Acme'))
  t.match(ws.apiKey, API_KEY)
  // With --email: the workspace's owner and their console invite link too.
  const withOwner = oneLine(t, await cli(dataDir, 'bootstrap', '--workspace', 'Beta', '--email', 'owner@example.com'))
  t.match(withOwner.apiKey, API_KEY)
  t.match(withOwner.inviteUrl, /^\/console\/welcome#token=inv_/)
  const ownerSession = await fetch(`${base}/v1/invites/accept`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token: String(withOwner.inviteUrl).split('#token=')[1], password: 'a long pass phrase' }),
  })
  t.equal(ownerSession.status, 200)
  t.equal(((await ownerSession.json()) as { data: { user: { role: string } } }).data.user.role, 'owner')
  const [userRun, openRun] = await Promise.all([
    cli(dataDir, 'create-user', '--workspace', String(ws.workspaceId), '--email', 'a@b.co', '--role', 'admin'),
    cli(dataDir, 'incident', 'open', '--title', 'DB slow', '--impact', 'degraded'),
  ])
  const user = oneLine(t, userRun)
  t.match(user.sessionToken, /^ust_/)
  t.equal(user.workspaceId, ws.workspaceId)
  t.equal(user.role, 'admin')
  // The invite link the command printed works on the running server: the user sets a password and is signed in.
  t.match(user.inviteUrl, /^\/console\/welcome#token=inv_/)
  const accepted = await fetch(`${base}/v1/invites/accept`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token: String(user.inviteUrl).split('#token=')[1], password: 'a long pass phrase' }),
  })
  t.equal(accepted.status, 200)
  t.match(accepted.headers.get('set-cookie'), /svc_session=ust_/)
  // Setting a password ends the user's other sessions: the one the command printed is over,
  // and the session the invite opened is the user's from now on.
  t.equal((await get('/v1/me', user.sessionToken)).status, 401, 'the printed session ended with the new password')
  const userSession = /svc_session=(ust_[^;]+)/.exec(accepted.headers.get('set-cookie') ?? '')?.[1]
  // What the commands did is in the workspace's audit log, as the CLI's, and the chain verifies.
  const audit = (await get('/v1/audit-log?limit=20', ws.apiKey)).body.data as { action: string; via: string; actor: { kind: string } }[]
  t.same(
    audit.filter((e) => e.via === 'cli').map((e) => [e.action, e.actor.kind]),
    [
      ['user.create', 'system'],
      ['api-key.create', 'system'],
      ['workspace.create', 'system'],
    ],
  )
  t.ok(
    audit.some((e) => e.action === 'invite.accept'),
    'the invite accepted on the server is there too',
  )
  t.equal(((await get('/v1/audit-log/verify', ws.apiKey)).body as unknown as { ok: boolean }).ok, true)
  const incident = oneLine(t, openRun)
  t.match(incident.id, /^\S+$/)
  t.equal(incident.status, 'investigating')

  // the running server shows the open incident within its status view's age (1 s)
  let during = (await get('/v1/status')).body.data
  for (const until = Date.now() + HANG_GUARD_MS; !during.incidents.length && Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
    during = (await get('/v1/status')).body.data
  }
  t.same(
    during.incidents.map((i: { id: string }) => i.id),
    [incident.id],
  )

  const resolved = oneLine(t, await cli(dataDir, 'incident', 'resolve', String(incident.id), '--message', 'Index rebuilt.'))
  t.equal(resolved.status, 'resolved')
  t.type(resolved.resolvedAt, 'string')
  // and shows it resolved once its status view (1 s old at most) is read again: the command
  // can finish within that second, while the server still serves the view it read before.
  let after = (await get('/v1/status')).body.data
  for (const until = Date.now() + HANG_GUARD_MS; after.incidents.length && Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
    after = (await get('/v1/status')).body.data
  }

  // over real HTTP on the running server, and through a second app on the same data dir
  // The running server holds the broker's LevelDB under dataDir (one process per store),
  // so this second app keeps its broker in memory.
  const app = await buildApp(testConfig({ dataDir, dbFile }), { brokerPersistence: memoryPersistence })
  t.after(() => app.close())
  await app.ready()
  const viaApp = async (url: string, token?: unknown) => {
    const res = await app.inject({ method: 'GET', url, headers: token ? { authorization: `Bearer ${String(token)}` } : {} })
    return { status: res.statusCode, body: res.json() as { data: any } }
  }
  for (const [name, call] of [
    ['server', get],
    ['buildApp', viaApp],
  ] as const) {
    const asKey = await call('/v1/me', ws.apiKey)
    t.equal(asKey.status, 200, `${name}: key accepted`)
    t.equal(asKey.body.data.actor.kind, 'key')
    t.same(asKey.body.data.workspace, { id: ws.workspaceId, name: 'Acme' })
    t.equal(asKey.body.data.grant, 'all')

    const asUser = await call('/v1/me', userSession)
    t.equal(asUser.status, 200, `${name}: session accepted`)
    t.equal(asUser.body.data.actor.kind, 'user')
    t.equal(asUser.body.data.actor.email, 'a@b.co')
    t.equal(asUser.body.data.workspace.id, ws.workspaceId)

    const status = (await call('/v1/status')).body.data
    t.same(status.incidents, [], name)
    t.equal(status.recent.length, 1, name)
    t.equal(status.recent[0].id, incident.id)
    t.equal(status.recent[0].title, 'DB slow')
    t.same(
      status.recent[0].updates.map((u: { status: string; message: string }) => [u.status, u.message]),
      [
        ['investigating', 'DB slow'],
        ['resolved', 'Index rebuilt.'],
      ],
    )
  }
})
