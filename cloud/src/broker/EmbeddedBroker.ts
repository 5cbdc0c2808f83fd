// The embedded MQTT broker (Aedes): MQTT over TCP on SVC_MQTT_PORT and over WebSocket at
// /mqtt on the HTTP server. Policy is injected (authenticate / authorize hooks) so the
// device link can own who may connect and which topics each device reaches. Until a
// policy is installed every client is refused: the broker never runs open.
import net from 'node:net'
import type { Server as HttpServer } from 'node:http'
import { performance } from 'node:perf_hooks'
import { Aedes, type AedesOptions } from 'aedes'
import { WebSocketServer, createWebSocketStream } from 'ws'
import { memoryPersistence, type BrokerPersistence, type PersistenceFactory } from './persistence.js'
import { LiveConnections, type ConnectionListener } from './LiveConnections.js'
import { DeviceBudget } from './DeviceBudget.js'

export type BrokerPolicy = Pick<AedesOptions, 'authenticate' | 'authorizePublish' | 'authorizeSubscribe' | 'authorizeForward' | 'published'>

export interface BrokerOptions {
  /** Sessions, queued messages, retained messages; in memory unless given (see persistence.ts). */
  persistence?: PersistenceFactory
}

/** A message a device published, as the cloud sees it. */
export interface BrokerMessage {
  topic: string
  payload: Buffer
}

const refuseAll: BrokerPolicy = {
  authenticate: (_client, _u, _p, done) => {
    const err = Object.assign(new Error('no device policy installed'), { returnCode: 5 as const })
    done(err as never, false)
  },
  authorizePublish: (_client, _packet, cb) => cb(new Error('not authorized')),
  authorizeSubscribe: (_client, _sub, cb) => cb(null, null),
}

export class EmbeddedBroker {
  aedes!: Aedes
  private tcp: net.Server | null = null
  private wss: WebSocketServer | null = null
  private probeSeq = 0
  private readonly sockets = new Set<net.Socket>()
  private closing: Promise<void> | null = null
  private boundTcpPort: number | null = null

  private persistence: BrokerPersistence | undefined
  /** Which device connections are live (see LiveConnections.ts): presence follows it. */
  readonly connections = new LiveConnections()
  /** Each device's message budget (see DeviceBudget.ts), in front of authorizePublish. */
  readonly budget = new DeviceBudget()

  constructor(
    private readonly policy: BrokerPolicy = refuseAll,
    private readonly options: BrokerOptions = {},
  ) {}

  async start(): Promise<void> {
    this.persistence = await (this.options.persistence ?? memoryPersistence)()
    try {
      const budgeted = this.policy.authorizePublish ? { authorizePublish: this.budget.wrap(this.policy.authorizePublish) } : {}
      this.aedes = await Aedes.createBroker({ ...this.policy, ...budgeted, ...(this.persistence ? { persistence: this.persistence } : {}) })
    } catch (e) {
      await this.persistence?.destroy?.().catch(() => undefined)
      throw e
    }
    this.connections.attach(this.aedes)
  }

  /**
   * Publishes from the cloud itself (QoS 1). Retained messages are stored by the
   * persistence, and offline persistent sessions subscribed to the topic get it queued.
   */
  publish(topic: string, payload: Buffer, retain: boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      this.aedes.publish({ cmd: 'publish', topic, payload, qos: 1, retain, dup: false }, (err) => (err ? reject(err) : resolve()))
    })
  }

  /** Cloud-side subscription (wildcards allowed); resolves once it is in place. */
  subscribe(filter: string, handler: (msg: BrokerMessage) => void): Promise<void> {
    const deliver = (packet: { topic: string; payload: Buffer | string }, cb: () => void): void => {
      cb()
      handler({ topic: packet.topic, payload: Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload) })
    }
    return new Promise((resolve) => this.aedes.subscribe(filter, deliver as never, () => resolve()))
  }

  /** Calls back when an authenticated connection opens (CONNACK 0 sent) and when it closes. */
  onConnections(listener: ConnectionListener): () => void {
    return this.connections.listen(listener)
  }

  /** Is a connection with this client id live right now? */
  isConnected(clientId: string): boolean {
    return this.connections.isConnected(clientId)
  }

  /** Listens for MQTT over TCP; resolves with the bound port. */
  async listenTcp(port: number, host = '0.0.0.0'): Promise<number> {
    const server = net.createServer((socket) => {
      this.sockets.add(socket)
      socket.once('close', () => this.sockets.delete(socket))
      this.aedes.handle(socket)
    })
    this.tcp = server
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, host, () => resolve())
    })
    this.boundTcpPort = (server.address() as net.AddressInfo).port
    return this.boundTcpPort
  }

  /** The port MQTT over TCP listens on, or null when it does not. */
  get tcpPort(): number | null {
    return this.boundTcpPort
  }

  /** Ends the connection of the client with this id, if connected (a deleted screen's agent). */
  disconnect(clientId: string): boolean {
    const client = (this.aedes as unknown as { clients?: Record<string, { close(): void } | undefined> } | undefined)?.clients?.[clientId]
    client?.close()
    return this.connections.disconnect(clientId) || client !== undefined
  }

  /** Serves MQTT over WebSocket at `/mqtt` on an HTTP server. */
  attachWebSocket(server: HttpServer): void {
    this.wss = new WebSocketServer({ server, path: '/mqtt' })
    this.wss.on('connection', (ws, req) => {
      const stream = createWebSocketStream(ws)
      stream.on('error', () => ws.terminate())
      this.aedes.handle(stream, req)
    })
  }

  /** One publish-to-delivery round trip through the broker, in ms; rejects on failure or timeout. */
  probe(timeoutMs = 2000): Promise<number> {
    const topic = `$svc/probe/${process.pid}/${++this.probeSeq}`
    const started = performance.now()
    return new Promise<number>((resolve, reject) => {
      const deliver = (_packet: unknown, cb: () => void): void => {
        cb()
        clearTimeout(timer)
        this.aedes.unsubscribe(topic, deliver as never, () => resolve(performance.now() - started))
      }
      const timer = setTimeout(() => {
        this.aedes.unsubscribe(topic, deliver as never, () => undefined)
        reject(new Error('broker probe timed out'))
      }, timeoutMs)
      this.aedes.subscribe(topic, deliver as never, () => {
        this.aedes.publish({ cmd: 'publish', topic, payload: Buffer.from('ping'), qos: 0, retain: false, dup: false }, (err) => {
          if (err) {
            clearTimeout(timer)
            reject(err)
          }
        })
      })
    })
  }

  /** Idempotent: the server closes it before the HTTP listener, the app again on close. */
  close(): Promise<void> {
    this.closing ??= this.shutdown()
    return this.closing
  }

  private async shutdown(): Promise<void> {
    // The broker first: it ends every client connection, so the listeners can then close.
    if (this.aedes && !this.aedes.closed) await new Promise<void>((r) => this.aedes.close(() => r()))
    // aedes does not release its persistence; the LevelDB lock must go before a restart.
    await this.persistence?.destroy?.().catch(() => undefined)
    // Connections that have not (yet) sent CONNECT are no aedes clients: end them here, or
    // the listeners would wait for aedes' connect timeout (30 s) before closing.
    if (this.wss) {
      for (const c of this.wss.clients) c.terminate()
      await new Promise<void>((r) => this.wss!.close(() => r()))
    }
    if (this.tcp) {
      const closed = new Promise<void>((r) => this.tcp!.close(() => r()))
      for (const s of this.sockets) s.destroy()
      await closed
    }
  }
}
