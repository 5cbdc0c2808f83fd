// The agent and an https cloud, against a real cloud behind a TLS-terminating proxy (the
// committed test certificate for `localhost`, signed by the test CA): pairing over HTTPS
// trusting --ca; a plaintext broker address refused with a log line saying why, or used
// with --allow-insecure-mqtt; MQTT over TLS and over secure WebSocket, verified against
// --ca; the command line's --ca.
import t, { type Test } from 'tap'
import fs from 'node:fs'
import { once } from 'node:events'
import { Agent, type AgentOptions } from '../../src/Agent.js'
import { CA_FILE, CERT_FILE, KEY_FILE, httpsFront, startCloud } from '../cloud.js'
import { captureLog, eventually, runAgentCli, tempDir } from '../helpers.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

const CA = fs.readFileSync(CA_FILE, 'utf8')

function agentOptions(cloudUrl: string, log: AgentOptions['log'], more: Partial<AgentOptions> = {}): AgentOptions {
  return {
    cloudUrl,
    dataDir: '',
    playerPort: 0,
    random: () => 0.2,
    pairing: { pollIntervalMs: 50, pollIntervalCapMs: 200 },
    backoff: { baseMs: 200, capMs: 1000 },
    ...(log ? { log } : {}),
    ...more,
  }
}

/** `p`, or a failure naming `what` after `ms` (a pairing that cannot happen fails the test instead of holding it). */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms)
  })
  return Promise.race([p, late]).finally(() => clearTimeout(timer))
}

/** Starts an agent on a new data folder, pairs it through the cloud's API, and answers its screen id. */
async function pairAgent(t: Test, cloud: Awaited<ReturnType<typeof startCloud>>, options: AgentOptions): Promise<{ agent: Agent; screenId: string }> {
  const agent = new Agent({ ...options, dataDir: tempDir(t) })
  t.after(() => agent.stop())
  const code = once(agent, 'code')
  await agent.start()
  const [registration] = await within(code, HANG_GUARD_MS, 'a pairing code')
  const paired = once(agent, 'paired')
  const screenId = await cloud.pair(registration.pairingCode)
  await within(paired, HANG_GUARD_MS, 'paired')
  return { agent, screenId }
}

t.test('a cloud behind https handing out plaintext broker addresses: refused with a log line, used with allowInsecureMqtt', async (t) => {
  // SVC_PUBLIC_URL unset behind the proxy: the cloud sees plain HTTP and hands out mqtt:// and ws://.
  const front = await httpsFront(t, () => cloud.running.httpPort)
  const cloud = await startCloud(t)

  const refusing = captureLog()
  const { agent, screenId } = await pairAgent(t, cloud, agentOptions(front.base, refusing.log, { caPem: CA }))
  const line = await refusing.waitFor((l) => l.level === 'error' && /refusing the plaintext broker address/.test(String(l.msg)))
  t.match(line.msg, `mqtt://localhost:${cloud.running.mqttPort}`)
  t.match(line.msg, `the cloud ${front.base} is https`)
  t.match(line.msg, '--allow-insecure-mqtt')
  t.same(line.offered, [`mqtt://localhost:${cloud.running.mqttPort}`, `ws://${new URL(front.base).host}/mqtt`])
  t.equal(agent.phase, 'running', 'paired, the credential stored')
  t.equal(agent.link?.connected, false)
  t.notOk(
    refusing.lines.some((l) => l.msg === 'connected to the broker'),
    'no connection attempted',
  )
  t.same(cloud.seen(`svc/v1/screens/${screenId}/status`), [], 'the broker never heard from it')

  const allowing = captureLog()
  const insecure = await pairAgent(t, cloud, agentOptions(front.base, allowing.log, { caPem: CA, allowInsecureMqtt: true }))
  await cloud.waitFor(`svc/v1/screens/${insecure.screenId}/status`, (p) => p.status === 'online')
  t.ok(
    allowing.lines.some((l) => l.level === 'warn' && /plaintext broker address although the cloud is https/.test(String(l.msg))),
    'it says it is using a plaintext address',
  )
  t.match(
    allowing.lines.find((l) => l.msg === 'connected to the broker'),
    { url: `mqtt://localhost:${cloud.running.mqttPort}` },
  )
})

t.test('an https cloud with MQTT over TLS: pairing and the link verified against the given CA', async (t) => {
  const front = await httpsFront(t, () => cloud.running.httpPort)
  const cloud = await startCloud(t, { publicUrl: front.base, mqttTlsCertFile: CERT_FILE, mqttTlsKeyFile: KEY_FILE, mqttsPort: 0 })

  // Without the CA, the pairing call itself fails verification, and says what to do.
  const untrusting = captureLog()
  const lost = new Agent(agentOptions(front.base, untrusting.log, { dataDir: tempDir(t) }))
  t.after(() => lost.stop())
  await lost.start()
  const failed = await untrusting.waitFor((l) => /^cannot reach cloud at /.test(String(l.msg)))
  t.match(failed.msg, /SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY/)
  t.match(failed.msg, 'give the CA that signed it with --ca FILE')
  await lost.stop()

  const { log, lines } = captureLog()
  const { agent, screenId } = await pairAgent(t, cloud, agentOptions(front.base, log, { caPem: CA }))
  await cloud.waitFor(`svc/v1/screens/${screenId}/status`, (p) => p.status === 'online')
  t.match(
    lines.find((l) => l.msg === 'connected to the broker'),
    { url: `mqtts://localhost:${cloud.running.mqttsPort}` },
    'over MQTT over TLS',
  )
  t.equal(agent.link?.connected, true)
})

t.test('an https cloud without a TLS listener: MQTT over secure WebSocket through the proxy, verified against the given CA', async (t) => {
  const front = await httpsFront(t, () => cloud.running.httpPort)
  const cloud = await startCloud(t, { publicUrl: front.base, mqttPort: -1 })
  const { log, lines } = captureLog()
  const { screenId } = await pairAgent(t, cloud, agentOptions(front.base, log, { caPem: CA }))
  await cloud.waitFor(`svc/v1/screens/${screenId}/status`, (p) => p.status === 'online')
  t.match(
    lines.find((l) => l.msg === 'connected to the broker'),
    { url: `wss://localhost:${front.port}/mqtt` },
  )
})

t.test(
  'the command line: --ca pairs and connects over MQTT over TLS; a plaintext address refused, or used with --allow-insecure-mqtt; a --ca file that is not a certificate is a usage error',
  async (t) => {
    const front = await httpsFront(t, () => cloud.running.httpPort)
    const cloud = await startCloud(t, { publicUrl: front.base, mqttTlsCertFile: CERT_FILE, mqttTlsKeyFile: KEY_FILE, mqttsPort: 0 })
    // A cloud behind https without SVC_PUBLIC_URL: it hands out plaintext addresses.
    const plainFront = await httpsFront(t, () => plainCloud.running.httpPort)
    const plainCloud = await startCloud(t)
    const cli = (cloudUrl: string, ...more: string[]) => runAgentCli(t, ['start', '--cloud', cloudUrl, '--data', tempDir(t), '--player-port', '0', ...more])
    const [bad, missing, agent, refusing, allowing] = await Promise.all([
      cli(front.base, '--ca', KEY_FILE),
      cli(front.base, '--ca', '/nonexistent/ca.pem'),
      cli(front.base, '--ca', CA_FILE),
      cli(plainFront.base, '--ca', CA_FILE),
      cli(plainFront.base, '--ca', CA_FILE, '--allow-insecure-mqtt'),
    ])

    t.same(await bad.exited, { code: 2, signal: null })
    t.match(bad.err(), `agent: --ca: ${KEY_FILE} holds no PEM certificate`)
    t.same(await missing.exited, { code: 2, signal: null })
    t.match(missing.err(), 'agent: --ca: cannot read /nonexistent/ca.pem: ENOENT')

    const codeLine = await eventually('a pairing code over HTTPS', () => agent.json().find((l) => l.msg === 'pairing code'))
    const screenId = await cloud.pair(String(codeLine.pairingCode))
    await cloud.waitFor(`svc/v1/screens/${screenId}/status`, (p) => p.status === 'online')
    t.match(
      agent.json().find((l) => l.msg === 'connected to the broker'),
      { url: `mqtts://localhost:${cloud.running.mqttsPort}` },
    )
    agent.child.kill('SIGTERM')
    t.same(await agent.exited, { code: 0, signal: null })

    const pairCli = async (p: typeof agent): Promise<string> => {
      const line = await eventually('a pairing code', () => p.json().find((l) => l.msg === 'pairing code'))
      return plainCloud.pair(String(line.pairingCode))
    }
    await pairCli(refusing)
    const refusal = await eventually('the refusal of the plaintext broker address', () =>
      refusing.json().find((l) => /^refusing the plaintext broker address/.test(String(l.msg))),
    )
    t.match(refusal, { level: 'error', msg: /--allow-insecure-mqtt/ }, 'refused, saying why')
    const allowed = await pairCli(allowing)
    await plainCloud.waitFor(`svc/v1/screens/${allowed}/status`, (p) => p.status === 'online')
    t.match(
      allowing.json().find((l) => l.msg === 'connected to the broker'),
      { url: `mqtt://localhost:${plainCloud.running.mqttPort}` },
      '--allow-insecure-mqtt: the plaintext address is used',
    )
    t.notOk(
      refusing.json().some((l) => l.msg === 'connected to the broker'),
      'the refusing agent never connected',
    )
  },
)
