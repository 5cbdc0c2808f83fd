// A real cloud for agent tests: startServer on free ports with an on-disk database, a
// workspace with an owner key, helpers to pair a code, publish desired state through the
// embedded broker, and read retained messages the agent published. httpsFront puts a
// TLS-terminating reverse proxy in front of it, as in production.
import { servicesOf } from '../../cloud/src/app.js'
import type { Test } from 'tap'
import fs from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import net from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { startServer, type Running } from '../../cloud/src/server.js'
import type { EmbeddedBroker } from '../../cloud/src/platform/broker/EmbeddedBroker.js'
import { testConfig, type Config } from '../../cloud/src/config.js'
import { tempDir, until } from './helpers.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

type Aedes = EmbeddedBroker['aedes']
type PublishPacket = Parameters<Aedes['publish']>[0]

export interface TestCloud {
  running: Running
  base: string
  apiKey: string
  /** Claims a pairing code; answers the new screen's id. */
  pair(code: string, name?: string): Promise<string>
  /** Publishes a retained QoS 1 message on a topic through the broker, in-process. */
  publish(topic: string, payload: unknown, retain?: boolean): Promise<void>
  /** Every message seen on a topic (including retained ones), in order. */
  seen(topic: string): Array<{ payload: Record<string, unknown>; retain: boolean }>
  /** Waits for a message on `topic` matching `pred`. */
  waitFor(topic: string, pred: (payload: Record<string, unknown>) => boolean, ms?: number): Promise<Record<string, unknown>>
  close(): Promise<void>
  request(method: string, url: string, body?: unknown): Promise<Response>
}

export async function startCloud(t: Test, config: Partial<Config> = {}): Promise<TestCloud> {
  const dataDir = tempDir(t, 'svc-cloud-')
  const running = await startServer(testConfig({ dataDir, dbFile: path.join(dataDir, 'svc.sqlite'), host: '127.0.0.1', httpPort: 0, mqttPort: 0, ...config }))
  let closed = false
  const close = async (): Promise<void> => {
    if (closed) return
    closed = true
    await running.close()
  }
  t.after(close)
  const { app } = running
  const ws = await servicesOf(app).workspaces.create('Agent tests', 'us')
  const { secret: apiKey } = await servicesOf(app).apiKeys.createRoot(ws.id, ws.region, 'Owner key', 'all')
  const base = `http://127.0.0.1:${running.httpPort}`

  const messages = new Map<string, Array<{ payload: Record<string, unknown>; retain: boolean }>>()
  await new Promise<void>((resolve) =>
    servicesOf(app).broker.aedes.subscribe(
      'svc/v1/screens/#',
      (packet: PublishPacket, cb: () => void) => {
        let payload: Record<string, unknown> = {}
        try {
          payload = JSON.parse(String(packet.payload)) as Record<string, unknown>
        } catch {
          // not JSON
        }
        const list = messages.get(packet.topic) ?? []
        list.push({ payload, retain: packet.retain })
        messages.set(packet.topic, list)
        cb()
      },
      () => resolve(),
    ),
  )

  const request = (method: string, url: string, body?: unknown): Promise<Response> =>
    fetch(`${base}${url}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    })

  return {
    running,
    base,
    apiKey,
    request,
    async pair(code, name = 'Lobby') {
      const res = await request('POST', '/v1/screens/pair', { code, name })
      if (res.status !== 201) throw new Error(`pair: ${res.status} ${await res.text()}`)
      return ((await res.json()) as { data: { id: string } }).data.id
    },
    publish(topic, payload, retain = true) {
      return new Promise((resolve, reject) =>
        servicesOf(app).broker.aedes.publish(
          { cmd: 'publish', topic, payload: Buffer.from(JSON.stringify(payload)), qos: 1, retain, dup: false },
          (err?: Error | null) => (err ? reject(err) : resolve()),
        ),
      )
    },
    seen: (topic) => messages.get(topic) ?? [],
    async waitFor(topic, pred, ms = HANG_GUARD_MS) {
      const hit = await until(ms, () => (messages.get(topic) ?? []).map((m) => m.payload).find(pred))
      if (!hit) throw new Error(`nothing matching on ${topic} within ${ms} ms; saw ${JSON.stringify(messages.get(topic) ?? [])}`)
      return hit
    },
    close,
  }
}

/** The committed test certificates (`localhost`, signed by the test CA in ca.pem). */
export const TLS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../cloud/test/fixtures/tls')
export const CA_FILE = path.join(TLS_DIR, 'ca.pem')
export const CERT_FILE = path.join(TLS_DIR, 'server.pem')
export const KEY_FILE = path.join(TLS_DIR, 'server-key.pem')

/**
 * A reverse proxy on 127.0.0.1 that terminates TLS with the test certificate and passes
 * requests and WebSocket upgrades on to the cloud's HTTP port (`upstream`, asked per
 * connection, so the proxy can start before the cloud that names it in SVC_PUBLIC_URL) as
 * they are (Host included), as nginx or a load balancer does. Closed when the test ends.
 */
export async function httpsFront(t: Test, upstream: () => number): Promise<{ base: string; port: number }> {
  const server = https.createServer({ cert: fs.readFileSync(CERT_FILE), key: fs.readFileSync(KEY_FILE) }, (req, res) => {
    const forward = http.request({ host: '127.0.0.1', port: upstream(), method: req.method, path: req.url, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers)
      up.pipe(res)
    })
    forward.on('error', () => res.destroy())
    req.pipe(forward)
  })
  const sockets = new Set<net.Socket>()
  server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    const up = net.connect(upstream(), '127.0.0.1', () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`, ...Object.entries(req.headers).map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : v}`)]
      up.write(`${lines.join('\r\n')}\r\n\r\n`)
      up.write(head)
      up.pipe(socket)
      socket.pipe(up)
    })
    for (const s of [socket, up]) {
      sockets.add(s)
      s.on('error', () => undefined)
      s.once('close', () => (sockets.delete(s), socket.destroy(), up.destroy()))
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(async () => {
    for (const s of sockets) s.destroy()
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  const port = (server.address() as net.AddressInfo).port
  return { base: `https://localhost:${port}`, port }
}
