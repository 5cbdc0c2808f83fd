// Device links over TLS, through real sockets: MQTT over TLS with the committed test
// certificate (fixtures/tls, `localhost` signed by the test CA) for a device paired over
// HTTP; the broker addresses the pairing answer hands out on an https cloud; the
// certificate replaced on disk and served from the next handshake on; the listener and its
// connections closed by close(); unusable settings and files stopping the start.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import tls from 'node:tls'
import { X509Certificate } from 'node:crypto'
import { connectAsync } from 'mqtt'
import { topics } from '@svc/shared/mqtt/index'
import { loadConfig, testConfig, type Config } from '../../src/config.js'
import { startServer, StartupError } from '../../src/server.js'
import { TLS_DIR } from '../fixtures/receiver.js'
import { cleanEnv, cloudCli, until } from '../fixtures/processes.js'
import { connectDevice, startCloud, tempDir } from './link.js'

const fixture = (name: string): string => path.join(TLS_DIR, name)
const CA = fs.readFileSync(fixture('ca.pem'), 'utf8')
const CA_2 = fs.readFileSync(fixture('ca-2.pem'), 'utf8')
const TLS_FILES = { mqttTlsCertFile: fixture('server.pem'), mqttTlsKeyFile: fixture('server-key.pem'), mqttsPort: 0 }
const fingerprint = (file: string): string => new X509Certificate(fs.readFileSync(fixture(file))).fingerprint256

/** One TLS handshake with the port; answers the certificate the server presented, or the verification error. */
function handshake(port: number, ca: string[]): Promise<{ fingerprint: string } | { error: string }> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', ca })
    socket.once('secureConnect', () => {
      resolve({ fingerprint: socket.getPeerCertificate().fingerprint256 })
      socket.destroy()
    })
    socket.once('error', (err) => resolve({ error: (err as NodeJS.ErrnoException).code ?? err.message }))
  })
}

t.test(
  'MQTT over TLS: a paired device connects with the CA and gets its desired state; same rules as TCP; untrusted certificate and bad credentials refused',
  async (t) => {
    const c = await startCloud(t, { config: { ...TLS_FILES, publicUrl: 'https://localhost' } })
    const { mqttsPort } = c.running
    t.type(mqttsPort, 'number')
    const d = (await c.pair('Foyer')) as Awaited<ReturnType<typeof c.pair>> & { mqtt: { url: string; wsUrl: string } }
    t.equal(d.mqtt.url, `mqtts://localhost:${mqttsPort}`, 'the pairing answer hands out the TLS listener on the public host')

    // The device as the agent is: the URL from the pairing answer, the CA it was given.
    const dev = await connectDevice(t, d.mqtt.url, d, { ca: [CA] })
    t.ok((dev.client.stream as tls.TLSSocket).encrypted, 'the connection is TLS')
    const desired = await dev.next((s) => s.version >= 1)
    t.equal(desired.screenId, d.screenId, 'its retained desired state arrives')

    // Presence follows a TLS connection as it follows a TCP one.
    await servicesOf(c.running.app).presence.idle()
    const screen = (await c.call('GET', `/v1/screens/${d.screenId}`)).body.data
    t.equal(screen.status, 'online', 'the screen is online')

    // The topic rules are the same: another screen's topics are refused.
    const other = await c.pair('Other')
    const granted = await dev.client.subscribeAsync(topics.desired(other.screenId), { qos: 1 }).then(
      (g) => g.map((s) => s.qos),
      (err: { packet?: { granted?: number[] } }) => err.packet?.granted,
    )
    t.same(granted, [128], "another screen's desired topic is refused")

    // A client that does not trust the test CA (system roots only) fails verification.
    const untrusted = await connectAsync(d.mqtt.url, {
      clientId: d.screenId,
      username: d.screenId,
      password: d.deviceSecret,
      protocolVersion: 4,
      reconnectPeriod: 0,
      connectTimeout: 5000,
    }).then(
      (client) => (client.end(true), 'connected'),
      (err: NodeJS.ErrnoException) => String(err.code ?? err.message),
    )
    t.match(untrusted, /SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY/, `refused by verification (${untrusted})`)

    // Bad credentials over TLS: the broker's refusal, as over TCP.
    const wrong = await connectAsync(d.mqtt.url, {
      clientId: d.screenId,
      username: d.screenId,
      password: 'not-the-secret',
      protocolVersion: 4,
      reconnectPeriod: 0,
      connectTimeout: 5000,
      ca: [CA],
    }).then(
      (client) => (client.end(true), 'connected'),
      (err: { code?: number }) => err.code,
    )
    t.ok(wrong === 4 || wrong === 5, `CONNACK refusal (${wrong})`)
  },
)

t.test('an https cloud hands out no mqtt:// or ws:// link, at pairing and on every later poll; SVC_MQTT_PUBLIC_URL names the link', async (t) => {
  const handed = async (config: Partial<Config>) => {
    const c = await startCloud(t, { config })
    const reg = (await c.call('POST', '/v1/devices/register', {}, null)).body.data
    await c.call('POST', '/v1/screens/pair', { code: reg.pairingCode, name: 'S' })
    const poll = () => c.call('GET', `/v1/devices/register/${reg.registrationId}`, undefined, reg.pollSecret)
    const first = await poll()
    const later = await poll()
    t.equal(first.status, 200)
    t.ok(first.body.data.deviceSecret, 'the first poll carries the secret')
    t.notOk(later.body.data.deviceSecret, 'a later poll does not')
    t.same(later.body.data.mqtt, first.body.data.mqtt, 'a later poll hands out the same link')
    const { url, wsUrl } = first.body.data.mqtt as { url: string | null; wsUrl: string }
    return { c, mqtt: { url, wsUrl }, raw: JSON.stringify([first.body, later.body]) }
  }

  // The TCP listener is open (mqttPort 0), but the public URL is https: never handed out.
  const plain = await handed({ publicUrl: 'https://signage.example.com' })
  t.ok(plain.c.running.mqttPort, 'MQTT over TCP listens')
  t.same(plain.mqtt, { url: null, wsUrl: 'wss://signage.example.com/mqtt' } as object, 'only the WebSocket link on the HTTPS origin')
  t.notMatch(plain.raw, /mqtt:\/\/|ws:\/\//)

  const withTls = await handed({ publicUrl: 'https://signage.example.com', ...TLS_FILES })
  t.same(withTls.mqtt, { url: `mqtts://signage.example.com:${withTls.c.running.mqttsPort}`, wsUrl: 'wss://signage.example.com/mqtt' } as object)
  t.notMatch(withTls.raw, /mqtt:\/\/|ws:\/\//)

  const proxied = await handed({ publicUrl: 'https://signage.example.com', mqttPublicUrl: 'mqtts://mqtt.example.com:8883' })
  t.same(proxied.mqtt, { url: 'mqtts://mqtt.example.com:8883', wsUrl: 'wss://signage.example.com/mqtt' } as object, 'the proxy in front of the broker')

  const wsProxied = await handed({ publicUrl: 'https://signage.example.com', mqttPublicUrl: 'wss://mqtt.example.com/broker' })
  t.same(wsProxied.mqtt, { url: null, wsUrl: 'wss://mqtt.example.com/broker' } as object)

  // A lab cloud (http) keeps handing out the plaintext links, TLS first when it listens.
  const lab = await handed({ publicUrl: 'http://lab.local:8080' })
  t.same(lab.mqtt, { url: `mqtt://lab.local:${lab.c.running.mqttPort}`, wsUrl: 'ws://lab.local:8080/mqtt' } as object)
  const labTls = await handed({ publicUrl: 'http://lab.local:8080', ...TLS_FILES })
  t.equal(labTls.mqtt.url, `mqtts://lab.local:${labTls.c.running.mqttsPort}`)
})

t.test('a replaced certificate is served from the next handshake on, without a restart', async (t) => {
  const dir = tempDir(t)
  const cert = path.join(dir, 'cert.pem')
  const key = path.join(dir, 'key.pem')
  fs.copyFileSync(fixture('server.pem'), cert)
  fs.copyFileSync(fixture('server-key.pem'), key)
  const c = await startCloud(t, { config: { mqttTlsCertFile: cert, mqttTlsKeyFile: key, mqttsPort: 0, mqttTlsWatchMs: 20 } })
  const port = c.running.mqttsPort!
  t.same(await handshake(port, [CA]), { fingerprint: fingerprint('server.pem') })
  const d = await c.pair()
  const before = await connectDevice(t, `mqtts://localhost:${port}`, d, { ca: [CA] })
  const beforeClosed = new Promise((r) => before.client.stream.once('close', r))

  // As a renewal tool does it: the new certificate renamed over the old one, the key
  // written in place (for a moment the two do not match: the old pair is kept meanwhile).
  fs.copyFileSync(fixture('server-2.pem'), `${cert}.new`)
  fs.renameSync(`${cert}.new`, cert)
  fs.writeFileSync(key, fs.readFileSync(fixture('server-2-key.pem')))

  const renewed = await until(5 * 60_000, async () => {
    const r = await handshake(port, [CA, CA_2])
    return 'fingerprint' in r && r.fingerprint === fingerprint('server-2.pem') ? r : undefined
  })
  t.ok(renewed, 'the next handshakes present the new certificate')
  t.match(await handshake(port, [CA]), { error: /UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY/ }, 'which the old CA does not sign')
  t.ok(before.client.connected, 'a connection made before the renewal stays up')

  // A device that trusts the new CA connects with the new certificate.
  const after = await connectDevice(t, `mqtts://localhost:${port}`, d, { ca: [CA_2] })
  t.equal((after.client.stream as tls.TLSSocket).getPeerCertificate().fingerprint256, fingerprint('server-2.pem'))
  await beforeClosed // the same client id took the session over
})

t.test('close() ends the TLS connections, handshakes under way included, and the TLS port stops accepting', async (t) => {
  const c = await startCloud(t, { config: TLS_FILES })
  const port = c.running.mqttsPort!
  const d = await c.pair()
  const dev = await connectDevice(t, `mqtts://localhost:${port}`, d, { ca: [CA] })
  const devClosed = new Promise((r) => dev.client.stream.once('close', r))
  // A connection that never starts its handshake (the listener would wait 30 s for it).
  const raw = net.connect(port, '127.0.0.1')
  raw.on('error', () => undefined)
  await new Promise((r) => raw.once('connect', r))
  const rawClosed = new Promise((r) => raw.once('close', r))
  await c.running.close()
  // Without closing the connection that never handshakes, close() would wait for the listener's 30 s.
  await Promise.all([devClosed, rawClosed])
  t.match(await handshake(port, [CA]), { error: 'ECONNREFUSED' }, 'the TLS port is closed')
})

t.test('unusable TLS settings and files stop the start with a message naming the setting', async (t) => {
  t.throws(() => loadConfig({ SVC_MQTT_TLS_CERT: fixture('server.pem') }), {
    message: 'SVC_MQTT_TLS_CERT is set but SVC_MQTT_TLS_KEY is not: MQTT over TLS needs both the certificate and its private key',
  })
  t.throws(() => loadConfig({ SVC_MQTT_TLS_KEY: fixture('server-key.pem') }), { message: /^SVC_MQTT_TLS_KEY is set but SVC_MQTT_TLS_CERT is not/ })
  t.throws(() => loadConfig({ SVC_PUBLIC_URL: 'https://signage.example.com', SVC_MQTT_PUBLIC_URL: 'mqtt://signage.example.com:1883' }), {
    message: /^SVC_MQTT_PUBLIC_URL must be an mqtts:\/\/ or wss:\/\/ URL when SVC_PUBLIC_URL is https/,
  })
  t.throws(() => loadConfig({ SVC_PUBLIC_URL: 'https://signage.example.com', SVC_MQTT_PUBLIC_URL: 'ws://signage.example.com/mqtt' }), {
    message: /^SVC_MQTT_PUBLIC_URL must be an mqtts:\/\/ or wss:\/\/ URL when SVC_PUBLIC_URL is https/,
  })
  t.throws(() => loadConfig({ SVC_MQTT_PUBLIC_URL: 'signage.example.com:8883' }), { message: /^SVC_MQTT_PUBLIC_URL must be an mqtts:\/\// })
  t.throws(() => loadConfig({ SVC_PUBLIC_URL: 'signage.example.com' }), {
    message: 'SVC_PUBLIC_URL must be an http:// or https:// URL, got "signage.example.com"',
  })
  t.match(
    loadConfig({
      SVC_MQTT_TLS_CERT: 'c.pem',
      SVC_MQTT_TLS_KEY: 'k.pem',
      SVC_MQTT_PUBLIC_URL: 'mqtts://m.example.com:8883',
      SVC_PUBLIC_URL: 'https://s.example.com',
    }),
    { mqttTlsCertFile: path.resolve('c.pem'), mqttTlsKeyFile: path.resolve('k.pem'), mqttsPort: 8883, mqttPublicUrl: 'mqtts://m.example.com:8883' },
  )
  t.equal(loadConfig({ SVC_MQTTS_PORT: '0' }).mqttsPort, 0)

  const start = (files: { mqttTlsCertFile: string; mqttTlsKeyFile: string }) => {
    const dataDir = tempDir(t)
    return startServer(testConfig({ dataDir, host: '127.0.0.1', httpPort: 0, mqttPort: -1, mqttsPort: 0, ...files })).then(
      async (r) => (await r.close(), 'started'),
      (e: Error) => e,
    )
  }
  const missing = await start({ mqttTlsCertFile: '/nonexistent/cert.pem', mqttTlsKeyFile: fixture('server-key.pem') })
  t.type(missing, StartupError)
  t.equal((missing as Error).message, 'SVC_MQTT_TLS_CERT: cannot read /nonexistent/cert.pem: ENOENT')
  const notKey = await start({ mqttTlsCertFile: fixture('server.pem'), mqttTlsKeyFile: fixture('server.pem') })
  t.match((notKey as Error).message, /^SVC_MQTT_TLS_KEY: .*server\.pem is not a PEM private key/)
  const mismatch = await start({ mqttTlsCertFile: fixture('server.pem'), mqttTlsKeyFile: fixture('server-2-key.pem') })
  t.match((mismatch as Error).message, /^SVC_MQTT_TLS_CERT and SVC_MQTT_TLS_KEY: the private key in .*server-2-key\.pem does not belong to the certificate/)

  // The command line: one line, exit 1.
  const cli = cloudCli(
    t,
    ['start'],
    cleanEnv({ SVC_DATA_DIR: tempDir(t), SVC_HOST: '127.0.0.1', SVC_HTTP_PORT: '0', SVC_MQTT_PORT: '-1', SVC_MQTT_TLS_CERT: fixture('server.pem') }),
  )
  t.same(await cli.exited, { code: 1, signal: null })
  t.equal(cli.output(), 'error: SVC_MQTT_TLS_CERT is set but SVC_MQTT_TLS_KEY is not: MQTT over TLS needs both the certificate and its private key\n')
})
