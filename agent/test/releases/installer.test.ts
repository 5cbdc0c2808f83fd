// The update job's installer (jobs/UpdateInstaller.ts) in-process, against a small HTTP
// server standing for the cloud's download route: every refusal (not supervised, no key,
// another architecture, a bad download, not a packed agent, another version) leaves the
// releases folder as it was; an accepted release is in place, the state says it is on
// trial, and the agent is asked to restart. And the report after the restart
// (releases/UpdateReporter.ts): ok once confirmed, failed + rolledBack after a rollback,
// each kept until acknowledged.
import t, { type Test } from 'tap'
import fs from 'node:fs'
import http from 'node:http'
import type net from 'node:net'
import path from 'node:path'
import zlib from 'node:zlib'
import type { JobResult, UpdateJob } from '@svc/shared/mqtt/index'
import { newReleaseKey, sha256Hex, signRelease } from '@svc/shared/releases'
import { UpdateInstaller, type UpdateSetup } from '../../src/jobs/UpdateInstaller.js'
import { writeTarGz } from '../../src/pack/tar.js'
import { UpdateReporter } from '../../src/releases/UpdateReporter.js'
import { readState, writeState } from '../../src/releases/state.js'
import { FakeTime, captureLog, tempDir } from '../helpers.js'

const key = newReleaseKey()

/** A tarball of a fake packed agent: svc-agent/{bin/svc-agent, lib/svc-agent.mjs, package.json}, minus `leave`. */
function tarball(t: Test, version: string, leave: string[] = []): Buffer {
  const dir = tempDir(t)
  const files: Record<string, string> = {
    'bin/svc-agent': '#!/usr/bin/env node\n',
    'lib/svc-agent.mjs': 'process.exit(0)\n',
    'package.json': JSON.stringify({ name: 'svc-agent', version }),
  }
  for (const [f, text] of Object.entries(files)) {
    if (leave.includes(f)) continue
    fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true })
    fs.writeFileSync(path.join(dir, f), text)
  }
  const out = path.join(tempDir(t), 'r.tar.gz')
  writeTarGz(dir, 'svc-agent', out, 1_700_000_000)
  return fs.readFileSync(out)
}

async function server(t: Test, files: Map<string, Buffer>): Promise<{ base: string; auth: string[] }> {
  const auth: string[] = []
  const srv = http.createServer((req, res) => {
    auth.push(req.headers.authorization ?? '')
    const body = files.get(req.url ?? '')
    if (!body) return res.writeHead(404).end('{"message":"no such release"}')
    res.writeHead(200, { 'content-type': 'application/gzip' }).end(body)
  })
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r))
  t.after(() => new Promise<void>((r) => srv.close(() => r())))
  return { base: `http://127.0.0.1:${(srv.address() as net.AddressInfo).port}`, auth }
}

function job(id: string, bytes: Buffer, o: Partial<UpdateJob> = {}): UpdateJob {
  const sha256 = o.sha256 ?? sha256Hex(bytes)
  return {
    id,
    kind: 'update',
    version: '2.0.0',
    arch: 'x64',
    url: `/v1/devices/agent-releases/rel_${id}/tarball`,
    sha256,
    size: bytes.length,
    signature: signRelease(key.privateKeyPem, sha256).signature,
    createdAt: '2026-06-01T12:00:00.000Z',
    ...o,
  }
}

async function harness(t: Test, setup: Partial<UpdateSetup> = {}) {
  const data = tempDir(t)
  const files = new Map<string, Buffer>()
  const srv = await server(t, files)
  const time = new FakeTime('2026-06-01T12:00:01.000Z')
  const { log, lines } = captureLog(time.clock)
  let restarts = 0
  const stateFile = path.join(data, 'releases', 'state.json')
  const installer = new UpdateInstaller({
    setup: {
      stateFile,
      installedVersion: '1.0.0',
      releaseKeyPem: key.publicKeyPem,
      releaseKeySource: '/opt/svc-agent/share/release-key.pub',
      restart: () => void restarts++,
      ...setup,
    },
    cloudUrl: srv.base,
    screenId: 'scr_1',
    deviceSecret: 'sekrit',
    runningVersion: '1.0.0',
    arch: 'x64',
    log,
    clock: time.clock,
  })
  const serve = (j: UpdateJob, bytes: Buffer) => files.set(j.url, bytes)
  const leftovers = () => (fs.existsSync(path.join(data, 'releases')) ? fs.readdirSync(path.join(data, 'releases')).sort() : [])
  return { data, installer, serve, srv, lines, stateFile, restarts: () => restarts, leftovers }
}

t.test('refused before any download: not supervised, no key, another architecture; the running version: ok at once', async (t) => {
  const bytes = tarball(t, '2.0.0')
  const cases: Array<[Partial<UpdateSetup>, Partial<UpdateJob>, RegExp | null]> = [
    [{ stateFile: null }, {}, /^updates need the packed agent started by its launcher/],
    [
      { releaseKeyPem: null, releaseKeySource: '/opt/svc-agent/share/release-key.pub is missing' },
      {},
      /^no release key is installed \(\/opt\/svc-agent\/share\/release-key\.pub is missing\): pack the agent with --release-key/,
    ],
    [{}, { arch: 'arm64' }, /^the release is for arm64; this player is x64$/],
    [{}, { signature: signRelease(newReleaseKey().privateKeyPem, sha256Hex(bytes)).signature }, /signature is not the installed release key's/],
  ]
  for (const [setup, o, want] of cases) {
    const h = await harness(t, setup)
    const j = job('job_1', bytes, o)
    h.serve(j, bytes)
    const r = await h.installer.run(j)
    t.match(r, { jobId: 'job_1', kind: 'update', outcome: 'failed', reason: want })
    t.same(h.srv.auth, [], 'nothing downloaded')
    t.same(h.leftovers(), [])
    t.equal(h.restarts(), 0)
  }
  const h = await harness(t)
  t.match(await h.installer.run(job('job_2', bytes, { version: '1.0.0' })), { outcome: 'ok', reason: 'version 1.0.0 is already running' })
})

t.test('refused after the download, nothing left: HTTP error, digest, size, not a tarball, not a packed agent, another version', async (t) => {
  const good = tarball(t, '2.0.0')
  const noProgram = tarball(t, '2.0.0', ['lib/svc-agent.mjs'])
  const otherVersion = tarball(t, '2.0.1')
  const garbage = zlib.gzipSync(Buffer.from('not a tar at all, just text that is long enough to be something'.repeat(20)))
  // [release, job changes, what the server has (null: nothing, 404), the reason]
  const cases: Array<[Buffer, Partial<UpdateJob>, Buffer | null, RegExp]> = [
    [good, {}, null, /^the release could not be downloaded from http:\/\/127\.0\.0\.1:\d+\/v1\/devices\/agent-releases\/rel_job_\d\/tarball: HTTP 404$/],
    [good, { sha256: sha256Hex(Buffer.from('other')) }, good, /^the download's SHA-256 is [0-9a-f]{64}, the job says [0-9a-f]{64}$/],
    [good, { size: good.length + 10 }, good, /^the download is \d+ bytes, the job says \d+$/],
    [garbage, {}, garbage, /^the release (is not a readable tar\.gz|holds no svc-agent\/bin\/svc-agent)/],
    [noProgram, {}, noProgram, /^the release holds no svc-agent\/lib\/svc-agent\.mjs: not a packed agent$/],
    [otherVersion, {}, otherVersion, /^the release is version 2\.0\.1, the job says 2\.0\.0$/],
  ]
  let n = 0
  for (const [bytes, o, served, want] of cases) {
    const h = await harness(t)
    const j = job(`job_${++n}`, bytes, o)
    if (served) h.serve(j, served)
    t.match(await h.installer.run(j), { outcome: 'failed', reason: want }, String(want))
    t.same(h.leftovers(), [], 'no files left')
    t.equal(h.restarts(), 0, 'no restart')
  }
})

t.test('accepted: in place under releases/, on trial in the state, a restart asked for; the device credential sent', async (t) => {
  const h = await harness(t)
  const bytes = tarball(t, '2.0.0')
  const j = job('job_ok', bytes)
  h.serve(j, bytes)
  t.equal(await h.installer.run(j), null, 'no result now: the new version sends it')
  await new Promise((r) => setImmediate(r))
  t.equal(h.restarts(), 1)
  t.same(h.srv.auth, [`Basic ${Buffer.from('scr_1:sekrit').toString('base64')}`])
  t.same(h.leftovers(), ['2.0.0-x64', 'state.json'])
  t.ok(fs.existsSync(path.join(h.data, 'releases/2.0.0-x64/svc-agent/lib/svc-agent.mjs')))
  t.same(readState(h.stateFile), {
    installed: '1.0.0',
    active: { version: '2.0.0', dir: '2.0.0-x64' },
    previous: null,
    trial: { jobId: 'job_ok', version: '2.0.0', since: '2026-06-01T12:00:01.000Z' },
    rolledBack: null,
  })
  t.ok(h.lines.some((l) => l.msg === 'update installed; restarting into it'))
})

t.test('the report after the restart: ok once confirmed; failed + rolledBack after a rollback; kept until acknowledged', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'state.json')
  const time = new FakeTime('2026-06-01T12:05:00.000Z')
  const { log } = captureLog(time.clock)
  const sent: JobResult[] = []
  let fail = true
  const reporter = new UpdateReporter({
    stateFile: file,
    runningVersion: '2.0.0',
    publish: async (r) => {
      if (fail) throw new Error('not connected')
      sent.push(r)
    },
    log,
    clock: time.clock,
  })
  writeState(file, {
    installed: '1.0.0',
    active: { version: '2.0.0', dir: '2.0.0-x64' },
    previous: null,
    trial: { jobId: 'job_ok', version: '2.0.0', since: '2026-06-01T12:00:00.000Z' },
    rolledBack: { jobId: 'job_old', version: '1.9.0', reason: 'version 1.9.0 exited with code 1 during its trial', at: '2026-06-01T11:00:00.000Z' },
  })
  await reporter.report()
  t.same(sent, [], 'not acknowledged')
  t.match(
    readState(file),
    { trial: { jobId: 'job_ok', confirmedAt: '2026-06-01T12:05:00.000Z' }, rolledBack: { jobId: 'job_old' } },
    'confirmed (the supervisor stops its clock), the results still to send',
  )
  fail = false
  await reporter.report()
  t.same(sent, [
    { jobId: 'job_ok', kind: 'update', sentHex: '', replyHex: '', outcome: 'ok', at: '2026-06-01T12:05:00.000Z' },
    {
      jobId: 'job_old',
      kind: 'update',
      sentHex: '',
      replyHex: '',
      outcome: 'failed',
      reason: 'rolled back to 2.0.0: version 1.9.0 exited with code 1 during its trial',
      rolledBack: true,
      at: '2026-06-01T12:05:00.000Z',
    },
  ])
  t.match(readState(file), { trial: null, rolledBack: null, active: { version: '2.0.0' } })
  await reporter.report()
  t.equal(sent.length, 2, 'said once')
})

t.test(
  'the download goes only to its own cloud: a URL naming another host (https://elsewhere//host/path) or a redirect never takes the device credential there',
  async (t) => {
    const h = await harness(t)
    const bytes = tarball(t, '2.0.0')
    // Another host the job would lead the credential to.
    const elsewhere = await server(t, new Map())
    const other = new URL(elsewhere.base).host
    const sneaky = job('job_host', bytes, { url: `https://elsewhere//${other}/v1/devices/agent-releases/rel_job_host/tarball` })
    h.serve(sneaky, bytes)
    t.match(await h.installer.run(sneaky), {
      outcome: 'failed',
      reason: /^the release could not be downloaded from http:\/\/127\.0\.0\.1:\d+\/\/127\.0\.0\.1:\d+\/v1\/.*: HTTP 404$/,
    })
    t.same(elsewhere.auth, [], 'the other host was not asked')
    t.equal(h.srv.auth.length, 1, 'its own cloud was (the path it named is no release there)')

    // The cloud's answer redirects to another host: not followed.
    const redirecting = http.createServer((req, res) => {
      res.writeHead(302, { location: `${elsewhere.base}/v1/devices/agent-releases/rel_job_redirect/tarball` }).end()
    })
    await new Promise<void>((r) => redirecting.listen(0, '127.0.0.1', r))
    t.after(() => new Promise<void>((r) => redirecting.close(() => r())))
    const time = new FakeTime('2026-06-01T12:00:01.000Z')
    const data = tempDir(t)
    const installer = new UpdateInstaller({
      setup: {
        stateFile: path.join(data, 'releases', 'state.json'),
        installedVersion: '1.0.0',
        releaseKeyPem: key.publicKeyPem,
        releaseKeySource: 'test',
        restart: () => t.fail('no restart'),
      },
      cloudUrl: `http://127.0.0.1:${(redirecting.address() as net.AddressInfo).port}`,
      screenId: 'scr_1',
      deviceSecret: 'sekrit',
      runningVersion: '1.0.0',
      arch: 'x64',
      log: captureLog(time.clock).log,
      clock: time.clock,
    })
    t.match(await installer.run(job('job_redirect', bytes)), { outcome: 'failed', reason: /^the release could not be downloaded from / })
    t.same(elsewhere.auth, [], 'the redirect was not followed')
  },
)
