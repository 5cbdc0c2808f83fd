// Agent updates through the real interfaces: releases uploaded as multipart forms (the
// tarball read, the signature checked), rollouts in stages over real MQTT devices (the
// update job on their jobs topic, the tarball downloaded with their device credential, the
// result on job-results), pause, resume, abort, the abort threshold, a stage's time running
// out on the injected clock, and drift against the rollout's version.
import { servicesOf } from '../../src/app.js'
import t, { type Test } from 'tap'
import { newReleaseKey } from '@svc/shared/releases'
import { topics, type UpdateJob } from '@svc/shared/mqtt/index'
import { connectDevice, startCloud, type Cloud, type Device, type DeviceClient } from '../devicelink/link.js'
import { fakeRelease, releaseForm } from '../fixtures/agentRelease.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

async function upload(c: Cloud, form: FormData, token = c.apiKey): Promise<{ status: number; body: any }> {
  const res = await fetch(`http://127.0.0.1:${c.running.httpPort}/v1/agent-releases`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  })
  return { status: res.status, body: await res.json() }
}

interface Player {
  d: Device
  dev: DeviceClient
  jobs: UpdateJob[]
  report(agentVersion: string, arch?: string): Promise<void>
  result(jobId: string, r: { outcome: 'ok' | 'failed'; reason?: string; rolledBack?: boolean }): Promise<void>
}

async function player(t: Test, c: Cloud, name: string, version = '1.0.0'): Promise<Player> {
  const d = await c.pair(name)
  const dev = await connectDevice(t, `mqtt://127.0.0.1:${c.running.mqttPort}`, d)
  const jobs: UpdateJob[] = []
  dev.client.on('message', (topic, payload) => {
    if (topic === topics.jobs(d.screenId)) {
      const j = JSON.parse(String(payload)) as UpdateJob
      if (j.kind === 'update') jobs.push(j)
    }
  })
  const { presence } = servicesOf(c.running.app)
  const p: Player = {
    d,
    dev,
    jobs,
    async report(agentVersion, arch = 'x64') {
      const reported = {
        version: 0,
        playing: { source: 'none', contentKind: null, contentId: null },
        agentVersion,
        agentArch: arch,
        at: c.clock.now().toISOString(),
      }
      await dev.client.publishAsync(topics.reported(d.screenId), JSON.stringify(reported), { qos: 1 })
      await presence.idle()
    },
    async result(jobId, r) {
      const msg = { jobId, kind: 'update', sentHex: '', replyHex: '', at: c.clock.now().toISOString(), ...r }
      await dev.client.publishAsync(topics.jobResults(d.screenId), JSON.stringify(msg), { qos: 1 })
    },
  }
  await p.report(version)
  return p
}

async function until<T>(f: () => Promise<T | undefined> | T | undefined, ms = HANG_GUARD_MS): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await f()
    if (v !== undefined && v !== false) return v
    if (Date.now() > end) throw new Error(`waited ${ms / 60_000} minutes for ${f.toString()}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

t.test('releases: uploaded with a matching signature, read from the tarball, refused in words otherwise', async (t) => {
  const c = await startCloud(t)
  const r = await fakeRelease(t, { version: '2.0.0', arch: 'arm64' })
  const created = await upload(c, releaseForm(r))
  t.equal(created.status, 201)
  t.match(created.body.data, { id: /^arel_/, version: '2.0.0', arch: 'arm64', sha256: r.sha256, sizeBytes: r.bytes.length, keyFingerprint: /^[0-9a-f]{16}$/ })
  t.equal((await c.call('GET', `/v1/agent-releases/${created.body.data.id}`)).body.data.version, '2.0.0')
  t.same(
    (await c.call('GET', '/v1/agent-releases?version=2.0.0')).body.data.map((x: { id: string }) => x.id),
    [created.body.data.id],
  )
  t.same((await c.call('GET', '/v1/agent-releases?version=9.9.9')).body.data, [])

  const again = await upload(c, releaseForm(r))
  t.equal(again.status, 409, 'one release per version and architecture')
  t.match(again.body, { error: 'conflict', message: /2\.0\.0 for arm64 is already uploaded/ })

  const other = await fakeRelease(t, { version: '2.0.1' })
  const swapped = await upload(c, releaseForm({ bytes: other.bytes, signature: r.signature }))
  t.equal(swapped.status, 422, "another file's signature")
  t.match(swapped.body, { error: 'validation_error', message: /signature: it signs a file whose SHA-256 is/ })
  const otherKey = await fakeRelease(t, { version: '2.0.1', key: newReleaseKey().privateKeyPem })
  const forged = JSON.stringify({ ...JSON.parse(otherKey.signature), sha256: other.sha256, publicKey: JSON.parse(r.signature).publicKey })
  t.match((await upload(c, releaseForm({ bytes: other.bytes, signature: forged }))).body, { error: 'validation_error', message: /does not verify/ })
  t.match((await upload(c, releaseForm({ bytes: other.bytes, signature: 'hello' }))).body, {
    error: 'validation_error',
    message: /signature: the signature is not JSON/,
  })
  t.match((await upload(c, releaseForm({ bytes: Buffer.from('not a tarball'), signature: other.signature }))).body, {
    error: 'validation_error',
    message: /file: not a gzipped tar file/,
  })
  const noProgram = await fakeRelease(t, { version: '2.0.2', omit: 'lib/svc-agent.mjs' })
  t.match((await upload(c, releaseForm(noProgram))).body, { message: /not a packed agent .*svc-agent\/lib\/svc-agent\.mjs missing/ })
  const odd = await fakeRelease(t, { version: '2.0.3', arch: 'mips' })
  t.match((await upload(c, releaseForm(odd))).body, { message: /exactly one architecture .* found mips/ })
  const onlyFile = new FormData()
  onlyFile.append('file', new Blob([other.bytes]), 'x.tar.gz')
  t.match((await upload(c, onlyFile)).body, { error: 'validation_error', message: /signature is required/ })
  const extra = releaseForm(other)
  extra.append('notes', 'hi')
  t.match((await upload(c, extra)).body, { error: 'validation_error', message: /body\.notes: not a field/ })
  t.equal((await c.call('POST', '/v1/agent-releases', {})).status, 415, 'JSON is not a form')
  t.equal((await c.call('GET', '/v1/agent-releases')).body.data.length, 1, 'nothing refused was kept')

  const viewer = (await c.call('POST', '/v1/api-keys', { name: 'viewer', permissions: ['screen.view'] })).body.data.secret
  t.equal((await upload(c, releaseForm(other), viewer)).status, 403, 'uploading needs account.edit')
  t.equal((await c.call('GET', '/v1/agent-releases', undefined, viewer)).status, 200, 'reading needs screen.view')

  t.equal((await c.call('DELETE', `/v1/agent-releases/${created.body.data.id}`)).status, 200)
  t.equal((await c.call('GET', `/v1/agent-releases/${created.body.data.id}`)).status, 404)
})

t.test('a rollout in stages: jobs to the first stage, downloads with the device credential, the next stage after its minutes, completed', async (t) => {
  const c = await startCloud(t)
  const { agentRollouts } = servicesOf(c.running.app)
  const x64 = await fakeRelease(t, { version: '1.1.0' })
  const arm = await fakeRelease(t, { version: '1.1.0', arch: 'arm64' })
  const relX64 = (await upload(c, releaseForm(x64))).body.data
  const relArm = (await upload(c, releaseForm(arm))).body.data
  const players = [await player(t, c, 'A'), await player(t, c, 'B'), await player(t, c, 'C')]
  await players[2]!.report('1.0.0', 'arm64')

  t.match((await c.call('POST', '/v1/agent-rollouts', { version: '9.0.0' })).body, { error: 'validation_error', message: /no release of 9\.0\.0/ })
  t.match((await c.call('POST', '/v1/agent-rollouts', { version: '1.1.0', stages: [50, 40, 100] })).body, { message: /stages must rise/ })
  t.match((await c.call('POST', '/v1/agent-rollouts', { version: '1.1.0', stages: [50, 90] })).body, { message: /stages must end at 100/ })
  t.match((await c.call('POST', '/v1/agent-rollouts', { version: '1.1.0', screenIds: ['scr_nope'] })).body, { message: /no such screen: scr_nope/ })
  t.match((await c.call('POST', '/v1/agent-rollouts', { version: '1.1.0', nodeId: 'node_x', screenIds: ['scr_nope'] })).body, { message: /not both/ })

  const created = await c.call('POST', '/v1/agent-rollouts', { version: '1.1.0', stages: [34, 100], stageMinutes: 10, abortIf: { unhealthyPercent: 0 } })
  t.equal(created.status, 201)
  const ro = created.body.data
  t.match(ro, { id: /^arol_/, state: 'running', stage: 0, stages: [34, 100], stageMinutes: 10, abortIf: { unhealthyPercent: 0 } })
  t.match(ro.counts, { screens: 3, waiting: 1 })
  t.equal(ro.counts.pending + ro.counts.sent, 2, 'the first stage: two jobs queued (or already received: delivery races the answer)')
  t.match(
    ro.stageCounts,
    [
      { percent: 34, screens: 2 },
      { percent: 100, screens: 1 },
    ],
    'ceil(3 × 34%) = 2 screens, then the last one',
  )
  t.equal((await c.call('POST', '/v1/agent-rollouts', { version: '1.1.0' })).status, 409, 'one open rollout per workspace')

  const first = (await c.call('GET', `/v1/agent-rollouts/${ro.id}/screens`)).body.data.filter((s: { stage: number }) => s.stage === 0)
  t.equal(first.length, 2)
  const byId = new Map(players.map((p) => [p.d.screenId, p]))
  for (const s of first) {
    const p = byId.get(s.screenId)!
    const job = await until(() => p.jobs[0])
    const arch = p === players[2] ? 'arm64' : 'x64'
    const rel = arch === 'arm64' ? relArm : relX64
    t.match(job, {
      id: /^aupd_/,
      kind: 'update',
      version: '1.1.0',
      arch,
      url: `/v1/devices/agent-releases/${rel.id}/tarball`,
      sha256: rel.sha256,
      size: rel.sizeBytes,
    })
    t.equal(job.signature, JSON.parse((arch === 'arm64' ? arm : x64).signature).signature)
    const auth = `Basic ${Buffer.from(`${p.d.screenId}:${p.d.deviceSecret}`).toString('base64')}`
    const res = await fetch(`http://127.0.0.1:${c.running.httpPort}${job.url}`, { headers: { authorization: auth } })
    t.equal(res.status, 200)
    t.equal(res.headers.get('content-type'), 'application/gzip')
    t.same(Buffer.from(await res.arrayBuffer()), (arch === 'arm64' ? arm : x64).bytes, 'the tarball, byte for byte')
  }
  await until(async () => (await c.call('GET', `/v1/agent-rollouts/${ro.id}`)).body.data.counts.sent === 2 || undefined)
  const late = players.find((p) => !first.some((s: { screenId: string }) => s.screenId === p.d.screenId))!
  const lateAuth = `Basic ${Buffer.from(`${late.d.screenId}:${late.d.deviceSecret}`).toString('base64')}`
  t.equal(
    (await fetch(`http://127.0.0.1:${c.running.httpPort}/v1/devices/agent-releases/${relX64.id}/tarball`, { headers: { authorization: lateAuth } })).status,
    401,
    'a screen not sent the release cannot download it',
  )
  t.equal((await fetch(`http://127.0.0.1:${c.running.httpPort}/v1/devices/agent-releases/${relX64.id}/tarball`)).status, 401)
  t.equal(late.jobs.length, 0, 'the later stage has no job yet')

  // The first stage comes back on the new version.
  for (const s of first) {
    const p = byId.get(s.screenId)!
    await p.report('1.1.0', p === players[2] ? 'arm64' : 'x64')
    await p.result(p.jobs[0]!.id, { outcome: 'ok' })
  }
  const updated = await until(async () => {
    const v = (await c.call('GET', `/v1/agent-rollouts/${ro.id}`)).body.data
    return v.stageCounts[0].updated === 2 ? v : undefined
  })
  t.match(updated, { state: 'running', stage: 0, stageCounts: [{ updated: 2, healthy: 2 }, { waiting: 1 }] }, 'the stage waits out its minutes')
  c.clock.advance(10 * 60_000)
  await c.running.app.workers.agentRollouts.runOnce()
  const began = (await c.call('GET', `/v1/agent-rollouts/${ro.id}`)).body.data
  t.match(began, { stage: 1, counts: { waiting: 0 } }, 'the next stage began')
  t.equal(began.counts.pending + began.counts.sent, 1, 'its job queued (or already received)')
  const job = await until(() => late.jobs[0])
  await late.report('1.1.0')
  await late.result(job.id, { outcome: 'ok' })
  await until(async () => (await c.call('GET', `/v1/agent-rollouts/${ro.id}`)).body.data.counts.updated === 3 || undefined)
  c.clock.advance(10 * 60_000)
  await agentRollouts.tickAll()
  t.match((await c.call('GET', `/v1/agent-rollouts/${ro.id}`)).body.data, {
    state: 'completed',
    finishedAt: c.clock.now().toISOString(),
    counts: { updated: 3, healthy: 3 },
  })
  t.same(
    (await c.call('GET', '/v1/agent-rollouts?state=completed')).body.data.map((x: { id: string }) => x.id),
    [ro.id],
  )
  t.equal((await c.call('DELETE', `/v1/agent-releases/${relX64.id}`)).status, 200, 'a release whose rollout ended can go')
})

t.test('the abort threshold stops a rollout when a screen rolls back; drift shows the screen off its rollout’s version', async (t) => {
  const c = await startCloud(t)
  const { drift } = servicesOf(c.running.app)
  await upload(c, releaseForm(await fakeRelease(t, { version: '3.0.0' })))
  const a = await player(t, c, 'A', '2.0.0')
  const b = await player(t, c, 'B', '2.0.0')
  const ro = (await c.call('POST', '/v1/agent-rollouts', { version: '3.0.0', stages: [50, 100], abortIf: { unhealthyPercent: 0 } })).body.data
  const [first] = (await c.call('GET', `/v1/agent-rollouts/${ro.id}/screens`)).body.data.filter((s: { stage: number }) => s.stage === 0)
  const p = first.screenId === a.d.screenId ? a : b
  const other = p === a ? b : a
  const job = await until(() => p.jobs[0])
  await p.report('2.0.0')
  await p.result(job.id, { outcome: 'failed', rolledBack: true, reason: 'the new version did not come back within 300 s; back on 2.0.0' })
  const stopped = await until(async () => {
    const v = (await c.call('GET', `/v1/agent-rollouts/${ro.id}`)).body.data
    return v.state === 'stopped' ? v : undefined
  })
  t.match(stopped, { reason: /stage 1 \(50%\): 1 of 1 screens failed or rolled back, more than 0%/, counts: { rolledBack: 1, cancelled: 1 } })
  t.match((await c.call('GET', `/v1/agent-rollouts/${ro.id}/screens?state=rolled_back`)).body.data, [{ screenId: p.d.screenId, reason: /did not come back/ }])
  t.equal(other.jobs.length, 0, 'the other screen never got the release')

  await drift.evaluate(c.workspaceId, [p.d.screenId, other.d.screenId])
  const screen = (await c.call('GET', `/v1/screens/${p.d.screenId}`)).body.data
  t.match(screen.drift, { state: 'drifting', items: [{ field: 'agent.version', desired: '3.0.0', reported: '2.0.0' }] })
  t.notMatch(
    (await c.call('GET', `/v1/screens/${other.d.screenId}`)).body.data.drift,
    { state: 'drifting' },
    'a screen the rollout never reached is not off its version',
  )
  t.same(
    (await c.call('GET', '/v1/screens?drift=drifting')).body.data.map((s: { id: string }) => s.id),
    [p.d.screenId],
  )
})

t.test('pause holds a rollout, resume goes on, abort cancels what was not sent; a stage out of time fails its silent screens', async (t) => {
  const c = await startCloud(t)
  await upload(c, releaseForm(await fakeRelease(t, { version: '4.0.0' })))
  const players = [await player(t, c, 'A'), await player(t, c, 'B'), await player(t, c, 'C'), await player(t, c, 'D')]
  const ro = (await c.call('POST', '/v1/agent-rollouts', { version: '4.0.0', stages: [25, 50, 100], stageMinutes: 5, abortIf: { unhealthyPercent: 50 } })).body
    .data
  t.match(
    ro.stageCounts.map((s: { screens: number }) => s.screens),
    [1, 1, 2],
  )
  t.match((await c.call('POST', `/v1/agent-rollouts/${ro.id}/resume`)).body, { error: 'conflict', message: /only a paused one/ })
  t.equal((await c.call('POST', `/v1/agent-rollouts/${ro.id}/pause`)).body.data.state, 'paused')
  c.clock.advance(60 * 60_000)
  await c.running.app.workers.agentRollouts.runOnce()
  t.match((await c.call('GET', `/v1/agent-rollouts/${ro.id}`)).body.data, { state: 'paused', stage: 0, counts: { failed: 0 } }, 'nothing judged while paused')
  t.match((await c.call('POST', `/v1/agent-rollouts/${ro.id}/resume`)).body.data, { state: 'running', stageStartedAt: c.clock.now().toISOString() })

  // The first stage's screen stays silent: failed when its minutes are up; 1 of 1 > 50 % stops it.
  c.clock.advance(5 * 60_000)
  await c.running.app.workers.agentRollouts.runOnce()
  const stopped = (await c.call('GET', `/v1/agent-rollouts/${ro.id}`)).body.data
  t.match(stopped, { state: 'stopped', counts: { failed: 1, cancelled: 3 } })
  t.match((await c.call('GET', `/v1/agent-rollouts/${ro.id}/screens?state=failed`)).body.data, [{ reason: "no answer within the stage's 5 minutes" }])
  t.equal((await c.call('POST', `/v1/agent-rollouts/${ro.id}/abort`)).status, 409, 'a stopped rollout is over')

  // Another: aborted at once; what it had not sent is cancelled, and nothing more goes out.
  const next = (await c.call('POST', '/v1/agent-rollouts', { version: '4.0.0', stages: [100] })).body.data
  t.equal(next.counts.pending + next.counts.sent, 4)
  const viewer = (await c.call('POST', '/v1/api-keys', { name: 'viewer', permissions: ['screen.view'] })).body.data.secret
  t.equal((await c.call('POST', `/v1/agent-rollouts/${next.id}/abort`, undefined, viewer)).status, 403)
  const aborted = (await c.call('POST', `/v1/agent-rollouts/${next.id}/abort`)).body.data
  t.match(aborted, { state: 'aborted', reason: /^aborted by / })
  t.equal(aborted.counts.cancelled + aborted.counts.sent, 4)
  t.ok(players.length)
})

t.test(
  'a rollout to an older version than a screen runs is refused unless it says allowDowngrade (recorded and shown); a screen found newer when its stage begins fails',
  async (t) => {
    const c = await startCloud(t)
    const old = (await upload(c, releaseForm(await fakeRelease(t, { version: '1.9.0' })))).body.data
    const a = await player(t, c, 'A', '2.0.0')
    const b = await player(t, c, 'B', '1.5.0')

    const refused = await c.call('POST', '/v1/agent-rollouts', { version: '1.9.0' })
    t.equal(refused.status, 422, 'a downgrade is refused by default')
    t.match(refused.body, {
      error: 'validation_error',
      message: new RegExp(
        `^version: 1\\.9\\.0 is older than the agent 1 of the targeted screens run \\(${a.d.screenId} on 2\\.0\\.0\\); send allowDowngrade: true`,
      ),
    })
    t.same((await c.call('GET', '/v1/agent-rollouts')).body.data, [], 'nothing was started')
    t.equal(a.jobs.length, 0)
    t.equal((await c.call('POST', '/v1/agent-rollouts', { version: '1.9.0', allowDowngrade: 'yes' })).status, 422, 'allowDowngrade is a boolean')

    // Only the older screen: an upgrade for it, allowed without the flag, shown as not allowing downgrades.
    const up = await c.call('POST', '/v1/agent-rollouts', { version: '1.9.0', screenIds: [b.d.screenId], stages: [100] })
    t.equal(up.status, 201)
    t.equal(up.body.data.allowDowngrade, false)
    t.equal((await until(() => b.jobs[0])).url, `/v1/devices/agent-releases/${old.id}/tarball`)
    t.equal((await c.call('POST', `/v1/agent-rollouts/${up.body.data.id}/abort`)).status, 200)

    // With the flag: the newer screen is moved back too, and the rollout says so.
    const down = await c.call('POST', '/v1/agent-rollouts', { version: '1.9.0', allowDowngrade: true, stages: [100], abortIf: { unhealthyPercent: 100 } })
    t.equal(down.status, 201)
    t.equal(down.body.data.allowDowngrade, true)
    t.equal((await c.call('GET', `/v1/agent-rollouts/${down.body.data.id}`)).body.data.allowDowngrade, true, 'recorded')
    t.match((await c.call('GET', '/v1/agent-rollouts')).body.data[0], { id: down.body.data.id, allowDowngrade: true }, 'shown in the list')
    t.match(await until(() => a.jobs[0]), { version: '1.9.0', url: `/v1/devices/agent-releases/${old.id}/tarball` }, 'the newer screen gets the older release')
    t.equal((await c.call('POST', `/v1/agent-rollouts/${down.body.data.id}/abort`)).status, 200)

    // A screen that moved past the version between the rollout's start and its stage: not moved back.
    const c2 = await startCloud(t)
    await upload(c2, releaseForm(await fakeRelease(t, { version: '1.9.0' })))
    const early = await player(t, c2, 'early', '1.0.0')
    const late = await player(t, c2, 'late', '1.0.0')
    const staged = (await c2.call('POST', '/v1/agent-rollouts', { version: '1.9.0', stages: [50, 100], stageMinutes: 5, abortIf: { unhealthyPercent: 100 } }))
      .body.data
    t.equal(staged.allowDowngrade, false)
    const screens = (await c2.call('GET', `/v1/agent-rollouts/${staged.id}/screens`)).body.data as Array<{ screenId: string; stage: number }>
    const second = screens.find((s) => s.stage === 1)!.screenId === late.d.screenId ? late : early
    await second.report('3.0.0')
    c2.clock.advance(5 * 60_000)
    await c2.running.app.workers.agentRollouts.runOnce()
    t.match(
      ((await c2.call('GET', `/v1/agent-rollouts/${staged.id}/screens`)).body.data as Array<{ screenId: string }>).find(
        (s) => s.screenId === second.d.screenId,
      ),
      { stage: 1, state: 'failed', reason: 'the screen runs 3.0.0, newer than 1.9.0, and the rollout does not allow downgrades' },
    )
    t.equal(second.jobs.length, 0, 'no job went to it')
  },
)
