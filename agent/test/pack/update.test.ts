// Updates of the packed agent, end to end. Versions A and B are packed with a release key;
// A, unpacked, runs under its launcher's supervisor against a real cloud and is sent `update`
// jobs on its jobs topic, as the cloud's rollouts send them. The tarball is served at the
// cloud's download path (/v1/devices/agent-releases/<id>/tarball) by a small proxy in front
// of the test cloud (the agent's --cloud), which passes everything else on.
//   - B signed with another key: refused (`failed`, the signature), A runs on;
//   - a broken B (its program throws at start), signed: A installs it and restarts, B dies
//     during its trial, the supervisor goes back to A, which reports `failed` + rolledBack;
//   - B: A installs it, B connects and reports agentVersion B and the job's `ok`.
import t from 'tap'
import fs from 'node:fs'
import http from 'node:http'
import type net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { topics } from '@svc/shared/mqtt/index'
import { newReleaseKey, sha256Hex, signRelease } from '@svc/shared/releases'
import { writeTarGz } from '../../src/pack/tar.js'
import { readState } from '../../src/releases/state.js'
import { startCloud } from '../cloud.js'
import { tempDir, until } from '../helpers.js'
import { nodeOnly, pack, run, unpack } from './packed.js'

const A = '9.0.0-a'
const B = '9.0.1'
const arch = os.arch()
const keys = tempDir(t, 'svc-release-key-')
const key = newReleaseKey()
fs.writeFileSync(path.join(keys, 'release-key.pub'), key.publicKeyPem)
const packA = pack(t, ['--version', A, '--release-key', path.join(keys, 'release-key.pub')])
const packB = pack(t, ['--version', B, '--release-key', path.join(keys, 'release-key.pub')])
const tarballOf = async (p: typeof packA, v: string): Promise<string> => {
  const r = await p
  if (r.code !== 0) throw new Error(`pack failed: ${r.stderr}`)
  return path.join(r.out, `svc-agent-${v}-linux-${arch}.tar.gz`)
}

/** A release as the cloud would send it: the tarball's bytes, its digest, a signature. */
interface Release {
  bytes: Buffer
  sha256: string
  signature: string
}
function release(bytes: Buffer, privateKeyPem: string): Release {
  const sha256 = sha256Hex(bytes)
  return { bytes, sha256, signature: signRelease(privateKeyPem, sha256).signature }
}

t.test('`agent pack --version --release-key`: the version in the names and the program, the key in share/', async (t) => {
  const tarball = await tarballOf(packA, A)
  const dir = unpack(t, tarball)
  t.equal(fs.readFileSync(path.join(dir, 'svc-agent/share/release-key.pub'), 'utf8'), key.publicKeyPem)
  t.equal(JSON.parse(fs.readFileSync(path.join(dir, 'svc-agent/package.json'), 'utf8')).version, A)
  t.ok(fs.existsSync(path.join(dir, 'svc-agent/lib/launcher.cjs')), 'the supervisor beside the program')
  const r = await packA
  if (r.stdout.includes('.deb')) t.match(r.stdout, /svc-agent_9\.0\.0~a_(amd64|arm64)\.deb/, 'the .deb too')
  const v = run(t, path.join(dir, 'svc-agent/bin/svc-agent'), ['--version'])
  await v.exited
  t.equal(v.stdout(), `${A}\n`)
})

t.test('`agent pack` refuses a release key that is not an Ed25519 public key, and a bad version', async (t) => {
  const dir = tempDir(t)
  fs.writeFileSync(path.join(dir, 'private.pem'), key.privateKeyPem)
  fs.writeFileSync(path.join(dir, 'junk.pub'), 'hello\n')
  const cases: Array<[string[], RegExp]> = [
    [['--release-key', path.join(dir, 'private.pem')], /^agent: --release-key: .*private\.pem: not a public key/],
    [['--release-key', path.join(dir, 'junk.pub')], /^agent: --release-key: .*junk\.pub: not a public key/],
    [['--release-key', path.join(dir, 'none.pub')], /^agent: --release-key: cannot read .*none\.pub: ENOENT/],
    [['--version', '../9'], /^agent: --version must be letters, digits/],
  ]
  for (const [args, want] of cases) {
    const p = run(t, process.execPath, ['--import', 'tsx', 'agent/src/cli.ts', 'pack', '--out', dir, ...args])
    t.same(await p.exited, { code: 2, signal: null }, args.join(' '))
    t.match(p.stderr(), want)
  }
  t.same(fs.readdirSync(dir).sort(), ['junk.pub', 'private.pem'], 'nothing built')
})

t.test('updates: a wrong signature is refused; a broken version rolls back; a good one is installed and reports', async (t) => {
  const [tarA, tarB] = await Promise.all([tarballOf(packA, A), tarballOf(packB, B)])
  const good = release(fs.readFileSync(tarB), key.privateKeyPem)
  const otherKey = newReleaseKey()
  const wrongKey = release(fs.readFileSync(tarB), otherKey.privateKeyPem)
  // B whose program throws as it starts, packed again and signed with the right key.
  const brokenDir = unpack(t, tarB)
  const mjs = path.join(brokenDir, 'svc-agent/lib/svc-agent.mjs')
  fs.writeFileSync(mjs, `throw new Error('broken on purpose');\n${fs.readFileSync(mjs, 'utf8')}`)
  const brokenFile = path.join(tempDir(t), 'broken.tar.gz')
  writeTarGz(path.join(brokenDir, 'svc-agent'), 'svc-agent', brokenFile, Math.floor(Date.now() / 1000))
  const broken = release(fs.readFileSync(brokenFile), key.privateKeyPem)

  const cloud = await startCloud(t)
  // The proxy: the release downloads here (with the device credential), the rest to the cloud.
  const served = new Map<string, Release>()
  const downloads: Array<{ id: string; user: string; status: number }> = []
  let screenId = ''
  const upstream = new URL(cloud.base)
  const proxy = http.createServer((req, res) => {
    const m = /^\/v1\/devices\/agent-releases\/([^/]+)\/tarball$/.exec(req.url ?? '')
    if (m && req.method === 'GET') {
      const [user, secret] = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64')
        .toString()
        .split(':')
      const rel = served.get(m[1]!)
      const status = user !== screenId || !secret ? 401 : rel ? 200 : 404
      downloads.push({ id: m[1]!, user: user ?? '', status })
      if (status !== 200) return res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'no' }))
      return res.writeHead(200, { 'content-type': 'application/gzip', 'content-length': rel!.bytes.length }).end(rel!.bytes)
    }
    const fwd = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers)
      up.pipe(res)
    })
    fwd.on('error', () => res.destroy())
    req.pipe(fwd)
  })
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r))
  t.after(() => {
    proxy.closeAllConnections()
    return new Promise<void>((r) => proxy.close(() => r()))
  })
  const proxyBase = `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`

  const bin = path.join(unpack(t, tarA), 'svc-agent', 'bin', 'svc-agent')
  const data = tempDir(t)
  const agent = run(t, bin, ['start', '--cloud', proxyBase, '--data', data, '--player-port', '0'], {
    env: { PATH: nodeOnly(t), SVC_AGENT_UPDATE_TRIAL_SECONDS: '60' },
    group: true,
  })
  const code = await until(20_000, () => agent.json().find((l) => l.msg === 'pairing code')?.pairingCode as string | undefined)
  t.ok(code, `a pairing code (stderr: ${agent.stderr()})`)
  screenId = await cloud.pair(code!)
  await cloud.waitFor(topics.reported(screenId), (p) => p.agentVersion === A, 20_000)

  const job = (id: string, rel: Release, o: { size?: number } = {}) => {
    served.set(`rel_${id}`, rel)
    return cloud.publish(
      topics.jobs(screenId),
      {
        id,
        kind: 'update',
        version: B,
        arch,
        url: `/v1/devices/agent-releases/rel_${id}/tarball`,
        sha256: rel.sha256,
        size: o.size ?? rel.bytes.length,
        signature: rel.signature,
        createdAt: new Date().toISOString(),
      },
      false,
    )
  }
  const resultOf = (id: string, ms = 60_000) => cloud.waitFor(topics.jobResults(screenId), (p) => p.jobId === id, ms)
  const restarts = () => agent.json().filter((l) => l.msg === 'restarting into the update').length
  const releases = path.join(data, 'releases')

  // 1. Signed with another key: refused before anything is downloaded.
  await job('upd_wrongkey', wrongKey)
  t.match(await resultOf('upd_wrongkey'), { kind: 'update', outcome: 'failed', reason: /signature is not the installed release key's/ }, 'wrong key: failed')
  t.equal(downloads.length, 0, 'nothing downloaded')

  // 2. A download longer than the job says: refused, nothing left behind.
  await job('upd_size', good, { size: good.bytes.length - 1 })
  t.match(await resultOf('upd_size'), { outcome: 'failed', reason: /the download is \d+ bytes, the job says \d+/ }, 'a size that does not match: failed')
  t.match(downloads, [{ id: 'rel_upd_size', user: screenId, status: 200 }], 'downloaded with the device credential')
  t.same(fs.existsSync(releases) ? fs.readdirSync(releases) : [], [], 'no files left')
  t.equal(restarts(), 0, 'A runs on')

  // 3. The broken B: installed, started on trial, dead at once; A again, which reports the rollback.
  await job('upd_broken', broken)
  const back = await resultOf('upd_broken')
  t.match(
    back,
    { kind: 'update', outcome: 'failed', rolledBack: true, reason: /rolled back to 9\.0\.0-a: version 9\.0\.1 exited with code 1 during its trial/ },
    'broken: rolled back',
  )
  t.equal(restarts(), 1, 'one restart into the update')
  t.match(
    agent.json().find((l) => l.msg === 'update rolled back'),
    { level: 'error', part: 'supervisor', jobId: 'upd_broken', version: B, back: A },
    'the supervisor says so',
  )
  t.match(agent.stderr(), /broken on purpose/, "the broken version's error is in the journal")
  t.match(
    readState(path.join(releases, 'state.json')),
    { installed: A, active: null, previous: null, trial: null, rolledBack: null },
    'the rollback, reported, is cleared',
  )

  // 4. B: installed, restarted into, connected and reported, then its ok.
  const reportsBefore = cloud.seen(topics.reported(screenId)).length
  await job('upd_good', good)
  t.match(await resultOf('upd_good'), { kind: 'update', outcome: 'ok' }, 'the good release: ok, sent by the new version')
  const reported = cloud.seen(topics.reported(screenId)).slice(reportsBefore)
  t.ok(
    reported.some((m) => m.payload.agentVersion === B),
    'B reported its version',
  )
  t.match(readState(path.join(releases, 'state.json')), {
    installed: A,
    active: { version: B, dir: `${B}-${arch}` },
    previous: null,
    trial: null,
    rolledBack: null,
  })
  t.same(fs.readdirSync(releases).sort(), [`${B}-${arch}`, 'state.json'], 'the release and the state, no leftovers')
  t.match(
    agent.json().filter((l) => l.msg === 'starting the new version on trial'),
    [{ version: B }, { version: B }],
    'both B starts were on trial',
  )

  // The same job again (a redelivery): not run twice. An update to the running version: ok at once.
  await job('upd_same', good)
  t.match(await resultOf('upd_same'), { outcome: 'ok', reason: /already running/ }, 'the running version: ok at once')

  // SIGTERM: the supervisor passes it on; B stops cleanly; exit 0.
  process.kill(agent.child.pid!, 'SIGTERM')
  t.same(await agent.exited, { code: 0, signal: null }, 'SIGTERM: exit 0')
})
