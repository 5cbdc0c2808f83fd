// Updates of the packed agent, end to end through the cloud. Versions A and B are packed with
// a release key; A, unpacked, runs under its launcher's supervisor against a real cloud.
// Releases are uploaded to the cloud (`POST /v1/agent-releases`, the tarball and its .sig)
// and sent by rollouts to this one screen: the cloud publishes the `update` job, the agent
// downloads the tarball from the cloud's device route with its credential, and the
// rollout's screen ends as the agent's result says.
//   - a release signed with another key (the cloud takes it; the player does not): failed;
//   - a broken version (its program throws at start), signed with the right key: A installs
//     it and restarts, it dies during its trial, the supervisor goes back to A, which
//     reports `failed` + rolledBack: the rollout says rolled_back;
//   - B: A installs it, B connects and reports agentVersion B and the job's `ok`: updated.
import { bundledEntry } from '@svc/shared/testing/bundle'
import t, { type Test } from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { topics } from '@svc/shared/mqtt/index'
import { newReleaseKey, parseSignatureFile, releasePublicKey, sha256Hex, signRelease, signatureValid } from '@svc/shared/releases'
import { writeTarGz } from '../../src/pack/tar.js'
import { readState } from '../../src/releases/state.js'
import { startCloud } from '../cloud.js'
import { tempDir, until } from '../helpers.js'
import { debMembers, nodeOnly, pack, run, unpack } from './packed.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

const A = '9.0.0-a'
const B = '9.0.1'
const arch = os.arch()
const keys = tempDir(t, 'svc-release-key-')
const key = newReleaseKey()
fs.writeFileSync(path.join(keys, 'release-key.pub'), key.publicKeyPem)
// A's .deb uncompressed (`--deb-compression none`): no test here reads it but for its name
// and members; xz would cost seconds of CPU (deb.test.ts checks a .deb with the default, xz).
const packA = pack(t, ['--version', A, '--release-key', path.join(keys, 'release-key.pub'), '--deb-compression', 'none'])
// B only as a tarball (packed with Node alone on PATH, so no dpkg-deb): its .deb would cost
// seconds that no test here needs.
const packB = pack(t, ['--version', B, '--release-key', path.join(keys, 'release-key.pub')], { nodeOnlyPath: nodeOnly(t) })
const tarballOf = async (p: typeof packA, v: string): Promise<string> => {
  const r = await p
  if (r.code !== 0) throw new Error(`pack failed: ${r.stderr}`)
  return path.join(r.out, `svc-agent-${v}-linux-${arch}.tar.gz`)
}

/** A release as the cloud would send it: the tarball's bytes, its digest, a signature. */
interface Release {
  bytes: Buffer
  /** The .sig file's content. */
  sig: ReturnType<typeof signRelease>
}
function release(bytes: Buffer, privateKeyPem: string): Release {
  return { bytes, sig: signRelease(privateKeyPem, sha256Hex(bytes)) }
}

/** POST /v1/agent-releases as the operator does it: the tarball and its .sig as a form; answers the release's id. */
async function uploadRelease(t: Test, cloud: { base: string; apiKey: string }, r: Release): Promise<string> {
  const form = new FormData()
  form.append('file', new Blob([r.bytes], { type: 'application/gzip' }), 'svc-agent.tar.gz')
  form.append('signature', new Blob([JSON.stringify(r.sig)], { type: 'application/json' }), 'svc-agent.tar.gz.sig')
  const res = await fetch(`${cloud.base}/v1/agent-releases`, { method: 'POST', headers: { authorization: `Bearer ${cloud.apiKey}` }, body: form })
  const body = (await res.json()) as { data: { id: string } }
  t.equal(res.status, 201, res.status === 201 ? 'release uploaded' : `release uploaded (${JSON.stringify(body)})`)
  return body.data.id
}

/** The tarball `tar` packed again under `version` (its program throwing at start, or hanging, or not), signed with `privateKeyPem`. */
function variantOf(t: Test, tar: string, version: string, privateKeyPem: string, breakIt: false | 'throw' | 'hang'): Release {
  const dir = unpack(t, tar)
  const pkg = path.join(dir, 'svc-agent/package.json')
  fs.writeFileSync(pkg, JSON.stringify({ ...JSON.parse(fs.readFileSync(pkg, 'utf8')), version }))
  const mjs = path.join(dir, 'svc-agent/lib/svc-agent.mjs')
  const prefix = { throw: "throw new Error('broken on purpose');\n", hang: 'await new Promise(() => setInterval(() => {}, 60000));\n' }
  if (breakIt) fs.writeFileSync(mjs, `${prefix[breakIt]}${fs.readFileSync(mjs, 'utf8')}`)
  const file = path.join(tempDir(t), `svc-agent-${version}-linux-${arch}.tar.gz`)
  writeTarGz(path.join(dir, 'svc-agent'), 'svc-agent', file, Math.floor(Date.now() / 1000))
  return release(fs.readFileSync(file), privateKeyPem)
}

t.test('`agent pack --version --release-key`: the version in the names and the program, the key in share/', async (t) => {
  const tarball = await tarballOf(packA, A)
  const dir = unpack(t, tarball)
  t.equal(fs.readFileSync(path.join(dir, 'svc-agent/share/release-key.pub'), 'utf8'), key.publicKeyPem)
  t.equal(JSON.parse(fs.readFileSync(path.join(dir, 'svc-agent/package.json'), 'utf8')).version, A)
  t.ok(fs.existsSync(path.join(dir, 'svc-agent/lib/launcher.cjs')), 'the supervisor beside the program')
  const r = await packA
  const deb = r.stdout.split('\n').find((l) => l.endsWith('.deb'))
  if (deb) {
    t.match(deb, /svc-agent_9\.0\.0~a_(amd64|arm64)\.deb$/, 'the .deb too')
    t.same(debMembers(deb), ['debian-binary', 'control.tar', 'data.tar'], '--deb-compression none: uncompressed')
  }
  const v = run(t, path.join(dir, 'svc-agent/bin/svc-agent'), ['--version'])
  await v.exited
  t.equal(v.stdout(), `${A}\n`)

  // The key and signing commands in the packed program.
  const keys = tempDir(t)
  const made = run(t, path.join(dir, 'svc-agent/bin/svc-agent'), ['release-key', '--out', keys], { env: { PATH: nodeOnly(t) } })
  t.same(await made.exited, { code: 0, signal: null }, made.stderr())
  t.match(made.stdout(), /release-key\.pem\n.*release-key\.pub\nfingerprint [0-9a-f]{16}\n$/)
  const signed = run(t, path.join(dir, 'svc-agent/bin/svc-agent'), ['sign-release', '--key', path.join(keys, 'release-key.pem'), tarball], {
    env: { PATH: nodeOnly(t) },
  })
  t.same(await signed.exited, { code: 0, signal: null }, signed.stderr())
  const sig = parseSignatureFile(fs.readFileSync(`${tarball}.sig`, 'utf8'))
  t.ok(
    signatureValid(releasePublicKey(fs.readFileSync(path.join(keys, 'release-key.pub'), 'utf8')), sha256Hex(fs.readFileSync(tarball)), sig.signature),
    'a signature that verifies',
  )
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
  // The four at once: each a process of its own, waiting mostly on its start.
  const cli = await bundledEntry('agent/src/cli.ts')
  const runs = cases.map(([args, want]) => ({ args, want, p: run(t, process.execPath, [cli, 'pack', '--out', dir, ...args]) }))
  for (const { args, want, p } of runs) {
    t.same(await p.exited, { code: 2, signal: null }, args.join(' '))
    t.match(p.stderr(), want)
  }
  t.same(fs.readdirSync(dir).sort(), ['junk.pub', 'private.pem'], 'nothing built')
})

t.test('updates through the cloud: another key refused; a broken version rolls back; B installed and reporting', async (t) => {
  const [tarA, tarB] = await Promise.all([tarballOf(packA, A), tarballOf(packB, B)])
  const variant = (version: string, privateKeyPem: string, breakIt: false | 'throw' | 'hang') => variantOf(t, tarB, version, privateKeyPem, breakIt)
  const good = release(fs.readFileSync(tarB), key.privateKeyPem)
  const otherKey = variant('9.0.3-otherkey', newReleaseKey().privateKeyPem, false)
  const broken = variant('9.0.2-broken', key.privateKeyPem, 'throw')
  const hangs = variant('9.0.4-hangs', key.privateKeyPem, 'hang')

  const cloud = await startCloud(t)
  const bin = path.join(unpack(t, tarA), 'svc-agent', 'bin', 'svc-agent')
  const data = tempDir(t)
  const nodeDir = nodeOnly(t)
  const start = (trialSeconds: number) =>
    run(t, bin, ['start', '--cloud', cloud.base, '--data', data, '--player-port', '0'], {
      env: { PATH: nodeDir, SVC_AGENT_UPDATE_TRIAL_SECONDS: String(trialSeconds) },
      group: true,
    })
  let agent = start(60)
  const code = await until(5 * 60_000, () => agent.json().find((l) => l.msg === 'pairing code')?.pairingCode as string | undefined)
  t.ok(code, `a pairing code (stderr: ${agent.stderr()})`)
  const screenId = await cloud.pair(code!)
  await cloud.waitFor(topics.reported(screenId), (p) => p.agentVersion === A && p.agentArch === arch)

  const upload = (r: Release) => uploadRelease(t, cloud, r)
  /** A rollout of `version` to this screen; answers its screen's state once it has one other than waiting/pending/sent. */
  const rollout = async (version: string): Promise<{ id: string; screen: Record<string, unknown>; jobId: string }> => {
    const res = await cloud.request('POST', '/v1/agent-rollouts', { version, screenIds: [screenId] })
    const ro = ((await res.json()) as { data: { id: string } }).data
    t.equal(res.status, 201, `rollout of ${version}`)
    const screen = await until(HANG_GUARD_MS, async () => {
      const list = ((await (await cloud.request('GET', `/v1/agent-rollouts/${ro.id}/screens`)).json()) as { data: Array<Record<string, unknown>> }).data
      const s = list[0]
      return s && !['waiting', 'pending', 'sent'].includes(String(s.state)) ? s : undefined
    })
    // An updated screen's rollout stays open for its stage's time (health); the next one needs it closed.
    const state = ((await (await cloud.request('GET', `/v1/agent-rollouts/${ro.id}`)).json()) as { data: { state: string } }).data.state
    if (state === 'running' || state === 'paused') await cloud.request('POST', `/v1/agent-rollouts/${ro.id}/abort`)
    const job = cloud.seen(topics.jobs(screenId)).find((m) => m.payload.kind === 'update' && m.payload.version === version)
    t.ok(job, 'the cloud sent the update job')
    return { id: ro.id, screen: screen ?? {}, jobId: String(job?.payload.id) }
  }
  const resultOf = (id: string) => cloud.waitFor(topics.jobResults(screenId), (p) => p.jobId === id)
  const restarts = () => agent.json().filter((l) => l.msg === 'restarting into the update').length
  const releases = path.join(data, 'releases')
  // A trial or a rollback record is cleared once the broker acknowledged its report: a moment after the cloud has it.
  const settled = () =>
    until(5 * 60_000, () => {
      const st = readState(path.join(releases, 'state.json'))
      return st && st.trial === null && st.rolledBack === null ? true : undefined
    })
  await Promise.all([upload(otherKey), upload(broken), upload(good), upload(hangs)])

  // 1. Signed with another key: the cloud took it (the signature matches its own key), the player refuses it.
  const one = await rollout('9.0.3-otherkey')
  t.match(one.screen, { state: 'failed', reason: /signature is not the installed release key's/ }, 'another key: failed')
  t.match(await resultOf(one.jobId), { kind: 'update', outcome: 'failed' })
  t.equal(restarts(), 0, 'A runs on')
  t.same(fs.existsSync(releases) ? fs.readdirSync(releases) : [], [], 'nothing written')

  // 2. The broken version: installed, started on trial, dead at once; A again, which reports the rollback.
  const two = await rollout('9.0.2-broken')
  t.match(
    two.screen,
    { state: 'rolled_back', reason: /rolled back to 9\.0\.0-a: version 9\.0\.2-broken exited with code 1 during its trial/ },
    'broken: rolled back',
  )
  t.match(await resultOf(two.jobId), { kind: 'update', outcome: 'failed', rolledBack: true })
  t.equal(restarts(), 1, 'one restart into the update')
  t.match(
    agent.json().find((l) => l.msg === 'update rolled back'),
    { level: 'error', part: 'supervisor', version: '9.0.2-broken', back: A },
    'the supervisor says so',
  )
  t.match(agent.stderr(), /broken on purpose/, "the broken version's error is in the journal")
  await settled()
  t.match(
    readState(path.join(releases, 'state.json')),
    { installed: A, active: null, previous: null, trial: null, rolledBack: null },
    'the rollback, reported, is cleared',
  )

  // 3. B: installed, restarted into, connected and reported, then its ok.
  const reportsBefore = cloud.seen(topics.reported(screenId)).length
  const three = await rollout(B)
  t.match(three.screen, { state: 'updated' }, 'B: updated')
  t.match(await resultOf(three.jobId), { kind: 'update', outcome: 'ok' }, 'the ok, sent by B')
  t.ok(
    cloud
      .seen(topics.reported(screenId))
      .slice(reportsBefore)
      .some((m) => m.payload.agentVersion === B),
    'B reported its version',
  )
  await settled()
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
    [{ version: '9.0.2-broken' }, { version: B }],
    'both new versions started on trial',
  )

  // SIGTERM: the supervisor passes it on; B stops cleanly; exit 0.
  process.kill(agent.child.pid!, 'SIGTERM')
  t.same(await agent.exited, { code: 0, signal: null }, 'SIGTERM: exit 0')

  // 4. Started again (B, the active release, runs) with a 2 s trial window: a version that
  //    hangs without ever connecting is stopped at the window's end, and B (a release, not
  //    the installed program) runs again and reports the rollback.
  const onlineBefore = cloud.seen(topics.status(screenId)).length
  agent = start(2)
  t.ok(
    await until(
      HANG_GUARD_MS,
      () =>
        cloud
          .seen(topics.status(screenId))
          .slice(onlineBefore)
          .some((m) => m.payload.status === 'online') || undefined,
    ),
    'online again',
  )
  t.match(
    agent.json().find((l) => l.msg === 'starting the agent'),
    { version: B, program: path.join(releases, `${B}-${arch}`, 'svc-agent') },
    'B again after the restart',
  )
  const four = await rollout('9.0.4-hangs')
  t.match(
    four.screen,
    { state: 'rolled_back', reason: /rolled back to 9\.0\.1: version 9\.0\.4-hangs did not connect and report within the trial window \(2 s\)/ },
    'hangs: rolled back',
  )
  await settled()
  t.match(readState(path.join(releases, 'state.json')), {
    installed: A,
    active: { version: B, dir: `${B}-${arch}` },
    previous: null,
    trial: null,
    rolledBack: null,
  })
  t.same(fs.readdirSync(releases).sort(), [`${B}-${arch}`, 'state.json'], 'the hanging release deleted')
  process.kill(agent.child.pid!, 'SIGTERM')
  t.same(await agent.exited, { code: 0, signal: null }, 'SIGTERM: exit 0')
})

t.test('a staged rollout to two players: B to both; then a release that cannot start rolls back on the first and stops the rollout', async (t) => {
  const [tarA, tarB] = await Promise.all([tarballOf(packA, A), tarballOf(packB, B)])
  const cloud = await startCloud(t)
  const bin = path.join(unpack(t, tarA), 'svc-agent', 'bin', 'svc-agent')
  const nodeDir = nodeOnly(t)
  const players: Array<{ screenId: string; agent: ReturnType<typeof run> }> = []
  for (const name of ['Left', 'Right']) {
    const agent = run(t, bin, ['start', '--cloud', cloud.base, '--data', tempDir(t), '--player-port', '0'], {
      env: { PATH: nodeDir, SVC_AGENT_UPDATE_TRIAL_SECONDS: '60' },
      group: true,
    })
    const code = await until(5 * 60_000, () => agent.json().find((l) => l.msg === 'pairing code')?.pairingCode as string | undefined)
    t.ok(code, `${name}: a pairing code (stderr: ${agent.stderr()})`)
    const screenId = await cloud.pair(code!, name)
    await cloud.waitFor(topics.reported(screenId), (p) => p.agentVersion === A && p.agentArch === arch)
    players.push({ screenId, agent })
  }
  const upload = (r: Release) => uploadRelease(t, cloud, r)
  const get = async (id: string) =>
    (
      (await (await cloud.request('GET', `/v1/agent-rollouts/${id}`)).json()) as {
        data: { state: string; reason: string | null; counts: Record<string, number> }
      }
    ).data
  const screens = async (id: string) =>
    (
      (await (await cloud.request('GET', `/v1/agent-rollouts/${id}/screens`)).json()) as {
        data: Array<{ screenId: string; stage: number; state: string; reason: string | null }>
      }
    ).data
  await upload(release(fs.readFileSync(tarB), key.privateKeyPem))
  await upload(variantOf(t, tarB, '9.0.5-broken', key.privateKeyPem, 'throw'))

  // B to both in one stage: each installs it, restarts into it, and reports it.
  const toB = ((await (await cloud.request('POST', '/v1/agent-rollouts', { version: B, stages: [100] })).json()) as { data: { id: string } }).data
  const updated = await until(5 * 60_000, async () => {
    const v = await get(toB.id)
    return v.counts.updated === 2 ? v : undefined
  })
  t.match(updated, { state: 'running', counts: { screens: 2, updated: 2, healthy: 2 } }, 'both updated and healthy')
  for (const p of players) {
    const s = ((await (await cloud.request('GET', `/v1/screens/${p.screenId}`)).json()) as { data: { agentVersion: string } }).data
    t.equal(s.agentVersion, B, 'the screen view shows the new agent version')
  }
  t.equal((await cloud.request('POST', `/v1/agent-rollouts/${toB.id}/abort`)).status, 200, 'closed, so the next one may start')

  // The broken release in two stages, no failure allowed: the first stage's player rolls back by itself, the rollout stops, the other never gets it.
  const toBroken = (
    (await (await cloud.request('POST', '/v1/agent-rollouts', { version: '9.0.5-broken', stages: [50, 100], abortIf: { unhealthyPercent: 0 } })).json()) as {
      data: { id: string }
    }
  ).data
  const stopped = await until(5 * 60_000, async () => {
    const v = await get(toBroken.id)
    return v.state === 'stopped' ? v : undefined
  })
  t.match(stopped, { reason: /stage 1 \(50%\): 1 of 1 screens failed or rolled back, more than 0%/, counts: { rolledBack: 1, cancelled: 1 } })
  const list = await screens(toBroken.id)
  const first = list.find((s) => s.stage === 0)!
  const second = list.find((s) => s.stage === 1)!
  t.match(first, { state: 'rolled_back', reason: /rolled back to 9\.0\.1: version 9\.0\.5-broken exited with code 1 during its trial/ })
  t.match(second, { state: 'cancelled' })
  const rolledBack = players.find((p) => p.screenId === first.screenId)!
  const untouched = players.find((p) => p.screenId === second.screenId)!
  t.ok(
    rolledBack.agent.json().some((l) => l.msg === 'update rolled back'),
    'the first player went back by itself',
  )
  t.notOk(
    untouched.agent.json().some((l) => l.msg === 'restarting into the update' && l.to === '9.0.5-broken'),
    'the second player never installed it',
  )
  const drift = await until(5 * 60_000, async () => {
    const s = (
      (await (await cloud.request('GET', `/v1/screens/${first.screenId}`)).json()) as {
        data: { agentVersion: string; drift: { state: string; items: unknown[] } }
      }
    ).data
    return s.drift.state === 'drifting' ? s : undefined
  })
  t.match(drift, { agentVersion: B, drift: { items: [{ field: 'agent.version', desired: '9.0.5-broken', reported: B }] } }, 'drift: off its rollout’s version')
  for (const p of players) process.kill(p.agent.child.pid!, 'SIGTERM')
  for (const p of players) t.same(await p.agent.exited, { code: 0, signal: null }, 'SIGTERM: exit 0')
})
