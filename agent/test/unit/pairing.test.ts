// Pairing against a scripted cloud (register/poll answers) and against a closed port.
import t from 'tap'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { CloudClient, type FetchLike } from '../../src/pairing/CloudClient.js'
import { CredentialStore, type Credentials } from '../../src/pairing/CredentialStore.js'
import { Pairing } from '../../src/pairing/Pairing.js'
import { FakeTime, captureLog, tempDir, until } from '../helpers.js'

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } })

t.test('an expired code is replaced by a new registration; the credential is stored 0600', async (t) => {
  const dir = tempDir(t)
  const time = new FakeTime('2026-06-01T12:00:00.000Z')
  const { log, lines } = captureLog(time.clock)
  const calls: string[] = []
  let registrations = 0
  let polls = 0
  const fetchStub: FetchLike = async (url, init) => {
    calls.push(`${init?.method} ${new URL(url).pathname} ${(init?.headers as Record<string, string>)?.authorization ?? ''}`.trim())
    if (init?.method === 'POST') {
      registrations++
      return json(201, {
        data: {
          registrationId: `reg_${registrations}`,
          pairingCode: registrations === 1 ? 'AAA222' : 'BBB333',
          pollSecret: `ps${registrations}`,
          expiresAt: '2026-06-01T12:15:00.000Z',
        },
      })
    }
    polls++
    if (registrations === 1) return json(200, { data: { state: polls === 1 ? 'pending' : 'expired', expiresAt: '2026-06-01T12:15:00.000Z' } })
    return json(200, {
      data: {
        state: 'paired',
        screenId: 'scr_9',
        deviceSecret: 'dev-secret',
        mqtt: { url: 'mqtt://c:1883', wsUrl: 'ws://c/mqtt', username: 'scr_9', topicPrefix: 'svc/v1/screens/scr_9/' },
      },
    })
  }
  const store = new CredentialStore(dir)
  const pairing = new Pairing({
    client: new CloudClient({ cloudUrl: 'http://cloud.test/', fetch: fetchStub }),
    store,
    log,
    clock: time.clock,
    timers: time,
    device: { model: 'M1' },
    pollIntervalMs: 1000,
    pollIntervalCapMs: 1200,
  })
  const codes: string[] = []
  pairing.on('code', (r) => codes.push(r.pairingCode))
  let done = false
  const paired = new Promise<Credentials>((r) => pairing.once('paired', r)).finally(() => (done = true))
  pairing.start()
  t.after(() => pairing.stop())
  for (let i = 0; i < 10 && !done; i++) {
    await until(5 * 60_000, () => (time.timers.size || done ? true : undefined))
    time.advance(1200)
  }
  const creds = await paired
  t.same(codes, ['AAA222', 'BBB333'], 'a new code after the first expired')
  t.same(calls, [
    'POST /v1/devices/register',
    'GET /v1/devices/register/reg_1 Bearer ps1',
    'GET /v1/devices/register/reg_1 Bearer ps1',
    'POST /v1/devices/register',
    'GET /v1/devices/register/reg_2 Bearer ps2',
  ])
  t.same(time.delays.slice(0, 2), [1000, 1200], 'poll interval grows to its cap')
  t.match(creds, { screenId: 'scr_9', deviceSecret: 'dev-secret', cloudUrl: 'http://cloud.test', mqtt: { url: 'mqtt://c:1883' } })
  const file = path.join(dir, 'credentials.json')
  t.equal(fs.statSync(file).mode & 0o777, 0o600, 'credential readable by the agent user only')
  t.same(await store.load(), creds)
  t.ok(
    lines.some((l) => l.msg === 'pairing code' && l.pairingCode === 'AAA222'),
    'the code is a JSON log line too',
  )
})

t.test('a wrong cloud address: a clear error and retries with backoff, not a crash', async (t) => {
  const srv = net.createServer()
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()))
  const port = (srv.address() as net.AddressInfo).port
  await new Promise((r) => srv.close(r))

  const time = new FakeTime('2026-06-01T12:00:00.000Z')
  const { log, lines, waitFor } = captureLog(time.clock)
  const pairing = new Pairing({
    client: new CloudClient({ cloudUrl: `http://127.0.0.1:${port}` }),
    store: new CredentialStore(tempDir(t)),
    log,
    clock: time.clock,
    timers: time,
    device: {},
    backoff: { baseMs: 1000, capMs: 4000, random: () => 0.5 },
  })
  pairing.start()
  t.after(() => pairing.stop())
  for (let i = 1; i <= 4; i++) {
    await waitFor(() => lines.filter((l) => l.level === 'warn').length >= i)
    await until(5 * 60_000, () => (time.timers.size ? true : undefined))
    time.advance(time.delays.at(-1)!)
  }
  const warn = lines.find((l) => l.level === 'warn')!
  t.equal(warn.msg, `cannot reach cloud at http://127.0.0.1:${port}: ECONNREFUSED`)
  t.equal(warn.code, 'ECONNREFUSED')
  t.same(time.delays.slice(0, 4), [500, 1000, 2000, 2000], 'jittered exponential retries, capped')
})
