// docs/api-guide.md runs: its fenced sh blocks, in order, in one bash session, against a
// real listening cloud. curl is made to fail on any 4xx/5xx (--fail-with-body), so an
// example that no longer matches the server fails this test, naming the command. The
// guide starts in an empty folder (it makes its sample picture itself; only the agent release
// `agent pack` would make is put there). The pairing code comes from the device registration call the guide makes (what an agent
// does); the webhook and import hosts are a local HTTPS receiver let through by the test
// allowlist (SVC_WEBHOOK_ALLOW_HOSTS / SVC_WEBHOOK_CA_FILE); dates are computed by `date`.
import t, { type Test } from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import https from 'node:https'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { AddressInfo } from 'node:net'
import { build } from '../helpers.js'
import { CA_FILE, TLS_DIR } from '../fixtures/receiver.js'
import { PNG_1x1 } from '../content/fixtures.js'
import { fakeRelease } from '../fixtures/agentRelease.js'
import { systemClock } from '../../src/platform/clock.js'
import { openEngine, requirePostgres, type EngineName } from '../db/engines.js'

const GUIDE = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'docs', 'api-guide.md')

/** The guide's ```sh blocks with the line each starts on. */
export function shellBlocks(markdown: string): { line: number; code: string }[] {
  const out: { line: number; code: string }[] = []
  const lines = markdown.split('\n')
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== '```sh') continue
    const start = i + 1
    let j = start
    while (j < lines.length && lines[j]!.trim() !== '```') j++
    out.push({ line: start + 1, code: lines.slice(start, j).join('\n') })
    i = j
  }
  return out
}

function run(script: string, cwd: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, ...env } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()))
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
    // A hang guard only: on a busy machine the whole guide can take more than a minute.
    const timer = setTimeout(() => child.kill('SIGKILL'), 600_000)
    child.on('close', (code) => (clearTimeout(timer), resolve({ code, stdout, stderr })))
  })
}

// The guide runs once, on SQLite in memory (the default a reader starts with), or on a fresh
// PostgreSQL schema with SVC_TEST_ENGINE=postgres: it shows the interface, whose SQL the
// repositories' tests and the forEngines files check on both engines.
const engine: EngineName = process.env.SVC_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite'
t.test(`every example of docs/api-guide.md runs, in order, against a real server [${engine}]`, async (t) => {
  if (engine === 'postgres' && !requirePostgres(t, 'the API guide on PostgreSQL')) return
  await runGuide(t, engine)
})

async function runGuide(t: Test, engine: EngineName): Promise<void> {
  // The stand-in for the public webhook receiver and file host: https://localhost:<port>.
  const hits: string[] = []
  const host = https.createServer(
    { key: fs.readFileSync(path.join(TLS_DIR, 'server-key.pem')), cert: fs.readFileSync(path.join(TLS_DIR, 'server.pem')) },
    (req, res) => {
      hits.push(`${req.method} ${req.url}`)
      req.resume()
      req.on('end', () => {
        if (req.method === 'GET' && req.url === '/promo.png') res.writeHead(200, { 'content-type': 'image/png' }).end(PNG_1x1)
        else res.writeHead(200, { 'content-type': 'text/plain' }).end('ok')
      })
    },
  )
  await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', () => resolve()))
  t.after(() => new Promise<void>((resolve) => (host.closeAllConnections(), host.close(() => resolve()))))
  const hostUrl = `https://localhost:${(host.address() as AddressInfo).port}`

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-guide-data-'))
  t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }))
  const h = await build(
    t,
    { dataDir, mediaProcessing: 'background', webhookAllowHosts: ['localhost'], webhookCaFile: CA_FILE },
    { clock: systemClock as never, ...(engine === 'postgres' ? { db: await openEngine(t, 'postgres') } : {}) },
  )
  await h.app.listen({ port: 0, host: '127.0.0.1' })
  const svc = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`
  const { apiKey } = await h.workspace('Guide')

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-guide-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  // The guide makes its own sample picture (welcome.png); the agent release it uploads, as
  // `agent pack` and `agent sign-release` leave it the guide uploads, as `agent pack` and `agent sign-release` leave it.
  const release = await fakeRelease(t, { version: '2.0.0' })
  fs.writeFileSync(path.join(dir, 'svc-agent-2.0.0-linux-x64.tar.gz'), release.bytes)
  fs.writeFileSync(path.join(dir, 'svc-agent-2.0.0-linux-x64.tar.gz.sig'), release.signature)

  const blocks = shellBlocks(fs.readFileSync(GUIDE, 'utf8'))
  t.ok(blocks.length >= 15, `${blocks.length} sh blocks`)
  const commands = blocks.reduce((n, b) => n + (b.code.match(/^\s*[A-Z_]*=?\$?\(?curl /gm)?.length ?? 0), 0)
  const script = [
    'set -Eeu -o pipefail',
    // an answer outside 2xx fails the command, and the session, with the server's envelope shown
    'curl() { command curl --fail-with-body --show-error "$@"; }',
    'trap \'echo "FAILED at guide line ${GUIDE_LINE}: ${BASH_COMMAND}" >&2\' ERR',
    ...blocks.map((b) => `GUIDE_LINE=${b.line}\n${b.code}\necho`),
    'echo "::guide done::"',
  ].join('\n')
  const res = await run(script, dir, { SVC: svc, KEY: apiKey, HOOKS: hostUrl, FILES: hostUrl })
  if (process.env.GUIDE_DEBUG) fs.writeFileSync('/tmp/guide-run.txt', `${script}\n---stdout\n${res.stdout}\n---stderr\n${res.stderr}`)
  t.equal(res.code, 0, `the guide ran to the end${res.code ? `\n${res.stderr.slice(-3000)}\n${res.stdout.slice(-1500)}` : ''}`)
  t.match(res.stdout, /::guide done::/)
  t.ok(commands >= 70, `${commands} curl commands ran`)

  // what the examples did is there
  const screens = (await h.req('GET', '/v1/screens', apiKey)).json().data as unknown[]
  t.equal(screens.length, 0, 'the paired screen was deleted at the end')
  const casts = (await h.req('GET', '/v1/casts', apiKey)).json().data as { status: string; contentName: string | null }[]
  t.match(casts, [{ status: 'cleared', contentName: 'Lobby loop' }], 'the cast names its content')
  const emergencies = (await h.req('GET', '/v1/emergencies', apiKey)).json().data as { contentName: string | null }[]
  t.equal(emergencies[0]?.contentName, 'Welcome (spring)', 'the emergency names its content')
  const media = (await h.req('GET', '/v1/media', apiKey)).json().data as { name: string }[]
  t.ok(
    media.some((m) => m.name === 'Promo'),
    'the import fetched from the file host',
  )
  t.ok(hits.includes('GET /promo.png'), 'the file host was asked for promo.png')
  const rollouts = (await h.req('GET', '/v1/agent-rollouts', apiKey)).json().data as { state: string; version: string }[]
  t.match(rollouts, [{ state: 'aborted', version: '2.0.0' }], 'the rollout was paused, resumed and aborted')
  t.ok(
    hits.some((x) => x.startsWith('POST /svc')),
    'the webhook test delivery reached the receiver',
  )
}

t.test('the runner fails on an example the server refuses, naming its line', async (t) => {
  const h = await build(t)
  await h.app.listen({ port: 0, host: '127.0.0.1' })
  const svc = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`
  const { apiKey } = await h.workspace()
  const md = [
    '```sh',
    'auth=(-H "Authorization: Bearer $KEY")',
    '```',
    'text',
    '```sh',
    'curl -s "${auth[@]}" -X PATCH -H "content-type: application/json" -d \'{"nam":"x"}\' $SVC/v1/nodes/node_x',
    '```',
  ].join('\n')
  const blocks = shellBlocks(md)
  t.same(
    blocks.map((b) => b.line),
    [2, 6],
  )
  const script = [
    'set -Eeu -o pipefail',
    'curl() { command curl --fail-with-body --show-error "$@"; }',
    'trap \'echo "FAILED at guide line ${GUIDE_LINE}" >&2\' ERR',
    ...blocks.map((b) => `GUIDE_LINE=${b.line}\n${b.code}`),
  ].join('\n')
  const res = await run(script, os.tmpdir(), { SVC: svc, KEY: apiKey })
  t.not(res.code, 0)
  t.match(res.stderr, /FAILED at guide line 6/)
  t.match(res.stdout, /body\.nam is not a field of this operation/)
})
