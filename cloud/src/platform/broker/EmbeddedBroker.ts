// The embedded MQTT broker (Aedes): MQTT over TCP on SVC_MQTT_PORT, over TLS on
// SVC_MQTTS_PORT (when a certificate is configured; re-read when its files change, see
// TlsCertificate.ts) and over WebSocket at /mqtt on the HTTP server. Every listener hands
// its connections to the same handling (accept, handle): authentication, topic rules,
// packet guard and presence are the same whichever way a device came in. Policy is injected (authenticate / authorize hooks) so the
// device link can own who may connect and which topics each device reaches. Until a
// policy is installed every client is refused: the broker never runs open.
//
// Nothing a client sends, or a store left behind, may take the process down: aedes'
// `error` events (its will sweep) and client errors are logged, and stored Last Wills the
// policy does not allow are deleted at start and whenever the will sweep meets one.
// Every connection, TCP or WebSocket, gets a packet size guard in its MQTT parser (PacketGuard.ts).
//
// Several instances of one cloud (`cluster`, SVC_REDIS_URL): aedes' message bus is
// mqemitter-redis, so a publish on any instance reaches a subscriber on any other, and a
// client id connecting on one instance closes its older connection on the others (aedes
// announces every new client on `$SYS/<broker>/new/clients`). Nothing durable goes through
// the bus: the cloud's desired states go out unretained and every SUBSCRIBE rebuilds the
// latest one from the database (DeviceSessions), and the cloud's own subscriptions to
// device topics only take messages from devices connected here, so each device message
// is handled once in the cloud. Without `cluster` aedes keeps its in-process bus.
import net from 'node:net'
import tls from 'node:tls'
import type { Server as HttpServer } from 'node:http'
import { performance } from 'node:perf_hooks'
import { Aedes, type Client, type PublishPacket, type PubrelPacket, type Subscription } from 'aedes'
import { WebSocketServer, createWebSocketStream } from 'ws'
import { MAX_CONNECT_PACKET_BYTES, MAX_DEVICE_PACKET_BYTES } from '@svc/shared/mqtt/index'
import type { Timers } from '@svc/shared'
import { memoryPersistence, type BrokerPersistence, type PersistenceFactory } from './persistence.js'
import { LiveConnections, type ConnectionListener } from './LiveConnections.js'
import { DeviceBudget } from './DeviceBudget.js'
import { DEFAULT_HANDSHAKE_LIMITS, HandshakeGate, type HandshakeLimits } from './HandshakeGate.js'
import { indexRetained } from './RetainedIndex.js'
import { ReadHold, guardClient, markAuthenticated, type GuardedClient, type PacketGuardOptions, type PacketLimits } from './PacketGuard.js'
import { clusterBus } from './clusterBus.js'
import { describe, readTlsPair, watchTlsPair, type TlsFiles } from './TlsCertificate.js'
import type { BrokerPolicy } from './BrokerPolicy.js'

export type { BrokerPolicy }

/** A Last Will as the persistence stores it (with the id of the client that left it). */
export interface StoredWill {
  clientId: unknown
  topic: string
  payload: Buffer | Uint8Array | string
}

export interface BrokerLog {
  debug(obj: object, msg: string): void
  info(obj: object, msg: string): void
  warn(obj: object, msg: string): void
  error(obj: object, msg: string): void
}

export interface BrokerOptions {
  /** Sessions, queued messages, retained messages; in memory unless given (see persistence.ts). */
  persistence?: PersistenceFactory
  /**
   * aedes' heartbeat, ms (default 60 000). The sweep that publishes the stored wills of a
   * broker that went away (this process before a restart) runs every 4 heartbeats.
   */
  heartbeatIntervalMs?: number
  /** Which stored wills may stay; the others are deleted. Default: every will. */
  keepWill?: (will: StoredWill) => boolean
  /** Largest MQTT packets accepted; default the contract's (shared/src/mqtt parse.ts). */
  packetLimits?: PacketLimits
  /** Joins the brokers of one cloud through Redis pub/sub (channel names start with `prefix`). */
  cluster?: { redisUrl: string; prefix: string }
  /** Bounds on the TCP and TLS connections not yet through an authenticated CONNECT (HandshakeGate.ts). */
  handshake?: Partial<HandshakeLimits>
  /** The timers handshake deadlines run on (the system's by default; tests hand a ManualClock). */
  timers?: Timers
}

/** Keeps log entries until the app's logger is handed over (the broker starts first). */
class PendingLog implements BrokerLog {
  readonly entries: [keyof BrokerLog, object, string][] = []
  private keep(level: keyof BrokerLog, obj: object, msg: string): void {
    if (this.entries.length < 1000) this.entries.push([level, obj, msg])
  }
  debug(obj: object, msg: string): void {
    this.keep('debug', obj, msg)
  }
  info(obj: object, msg: string): void {
    this.keep('info', obj, msg)
  }
  warn(obj: object, msg: string): void {
    this.keep('warn', obj, msg)
  }
  error(obj: object, msg: string): void {
    this.keep('error', obj, msg)
  }
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

/** A device's MQTT client as broker events hand it over (its `id` is the screen id). */
export type DeviceClient = Client
export type { Subscription as DeviceSubscription }

/** The client events the device link follows: readiness, SUBSCRIBE, the PUBACK of a cloud publish, disconnection. */
export interface ClientEvents {
  clientReady: (client: Client) => void
  clientDisconnect: (client: Client) => void
  subscribe: (subs: Subscription[], client: Client) => void
  ack: (packet: PublishPacket | PubrelPacket, client: Client) => void
}

export class EmbeddedBroker {
  /** The aedes instance. The rest of the cloud goes through this class's methods; tests look inside. */
  aedes!: Aedes
  private tcp: net.Server | null = null
  private tls: tls.Server | null = null
  private boundTlsPort: number | null = null
  private stopTlsWatch: (() => void) | null = null
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
  /** The TCP and TLS connections in handshake: a deadline each, and at most so many per address and in all. */
  readonly handshakes: HandshakeGate
  private log: BrokerLog = new PendingLog()
  /** Topics this process has published a retained message on (the broker's store is in memory). */
  private readonly retainedTopics = new Set<string>()

  constructor(
    private readonly policy: BrokerPolicy = refuseAll,
    private readonly options: BrokerOptions = {},
  ) {
    this.handshakes = new HandshakeGate({ ...DEFAULT_HANDSHAKE_LIMITS, ...options.handshake }, options.timers, () => this.log)
  }

  async start(): Promise<void> {
    this.persistence = await (this.options.persistence ?? memoryPersistence)()
    try {
      this.aedes = await Aedes.createBroker({
        ...this.policy,
        authenticate: this.authenticate,
        authorizePublish: this.budget.wrap(this.authorizePublish),
        // No emitter queue. With aedes' default (100 messages delivered at once, the rest
        // queued), the queue is drained by recursion: every queued message whose subscribers
        // finish at once (a `reported` the cloud follows, a topic nobody follows) starts the
        // next on the same stack, and a few thousand devices reporting during a fan-out
        // overflowed it. The cluster bus (mqemitter-redis) already runs without a limit.
        concurrency: 0,
        ...(this.options.heartbeatIntervalMs ? { heartbeatInterval: this.options.heartbeatIntervalMs } : {}),
        ...(this.persistence ? { persistence: this.persistence } : {}),
        ...(this.options.cluster
          ? { mq: clusterBus(this.options.cluster.redisUrl, this.options.cluster.prefix, { warn: (o, m) => this.log.warn(o, m) }) }
          : {}),
      })
      if (this.options.cluster) this.trackForeignPackets()
      this.watchHandOver()
      // aedes' own memory store scans every retained message per SUBSCRIBE; look topics up instead.
      if (!this.persistence)
        indexRetained((this.aedes as unknown as { persistence: Parameters<typeof indexRetained>[0] }).persistence)
        // An `error` event without a listener throws: aedes emits one when its will sweep
        // fails (a will the policy refuses, a storage error), which would end the process.
      ;(this.aedes as unknown as NodeJS.EventEmitter).on('error', (err: Error) => this.log.error({ err }, 'MQTT broker error'))
      this.aedes.on('clientError', (client, err) => this.log.info({ clientId: client?.id, err: err?.message }, 'MQTT client error, connection closed'))
      this.aedes.on('connectionError', (_client, err) => this.log.debug({ err: err?.message }, 'MQTT connection error before CONNECT, connection closed'))
      // A store that cannot be cleaned does not stop the start: the sweep deletes what it meets.
      await this.purgeWills().catch((err: unknown) => this.log.error({ err }, 'cleaning stored Last Wills failed'))
    } catch (e) {
      if (this.aedes && !this.aedes.closed) await new Promise<void>((r) => this.aedes.close(() => r()))
      await this.persistence?.destroy?.().catch(() => undefined)
      throw e
    }
    this.connections.attach(this.aedes)
  }

  /**
   * aedes tracks a QoS 1 packet for a persistent session (clean: false) in the outgoing queue
   * its persistence filled when the packet was published, which only the publishing broker
   * does. A packet from another instance has no entry there, and its delivery would fail
   * ("no such packet") and close the device: enter it first, then track it as usual.
   */
  private trackForeignPackets(): void {
    type Pkt = { brokerId?: string }
    const store = (this.aedes as unknown as { persistence: Record<string, (...a: unknown[]) => Promise<unknown>> }).persistence
    const update = store.outgoingUpdate!.bind(store)
    const enqueue = store.outgoingEnqueue!.bind(store)
    store.outgoingUpdate = async (client: unknown, packet: unknown) => {
      try {
        return await update(client, packet)
      } catch (err) {
        if ((packet as Pkt).brokerId === this.aedes.id) throw err
        await enqueue({ clientId: (client as { id: string }).id }, packet)
        return update(client, packet)
      }
    }
  }

  /** Publishes whose caller asked to hear when the broker took them (see publish), by payload. */
  private readonly handing = new WeakMap<Buffer, () => void>()

  /**
   * aedes publishes in steps: it stores a retained message, queues it for offline persistent
   * sessions, then hands it to its emitter, which gives it to every subscriber's delivery
   * (each written to its connection on a later turn). It calls the publish back only once
   * every delivery's write has finished, and a write to a device that stopped reading waits
   * for the socket to drain (up to aedes' drainTimeout, then it cuts the device). The emitter
   * step is where the broker has taken the message: hook it, by the payload aedes passes on.
   */
  private watchHandOver(): void {
    const mq = (this.aedes as unknown as { mq: { emit(packet: { payload?: unknown }, cb?: (err?: Error) => void): unknown } }).mq
    const emit = mq.emit
    const handing = this.handing
    mq.emit = function (this: unknown, packet, cb) {
      const result = emit.call(this, packet, cb)
      const payload = packet.payload
      const handed = Buffer.isBuffer(payload) && handing.get(payload)
      if (handed) {
        handing.delete(payload)
        handed()
      }
      return result
    }
  }

  /** Is this broker joined to the other instances of its cloud (through Redis)? */
  get clustered(): boolean {
    return !!this.options.cluster
  }

  /** Where the broker logs (for the policy's own lines too). */
  get logger(): BrokerLog {
    return this.log
  }

  /** Hands the app's logger over; what was logged before goes to it now. */
  setLog(log: BrokerLog): void {
    const pending = this.log instanceof PendingLog ? this.log.entries : []
    this.log = log
    this.budget.log = log
    for (const [level, obj, msg] of pending) log[level](obj, msg)
  }

  private get stored(): { streamWill(brokers?: unknown): AsyncIterable<StoredWill>; delWill(client: { id: unknown }): Promise<unknown> } {
    return (this.aedes as unknown as { persistence: never }).persistence
  }

  /** Deletes every stored will the policy no longer allows (left by an older version). */
  private async purgeWills(): Promise<void> {
    const keep = this.options.keepWill
    if (!keep) return
    const refused: StoredWill[] = []
    for await (const will of this.stored.streamWill()) if (!keep(will)) refused.push(will)
    for (const will of refused) await this.stored.delWill({ id: will.clientId })
    if (refused.length)
      this.log.warn(
        { count: refused.length, clientIds: refused.slice(0, 20).map((w) => w.clientId) },
        'deleted stored Last Wills the device policy does not allow',
      )
  }

  private get limits(): PacketLimits {
    return this.options.packetLimits ?? { beforeAuth: MAX_CONNECT_PACKET_BYTES, afterAuth: MAX_DEVICE_PACKET_BYTES }
  }

  /** The policy's authentication; an accepted client's connection gets the device limit. */
  private readonly authenticate: NonNullable<BrokerPolicy['authenticate']> = (client, username, password, done) => {
    const check = this.policy.authenticate ?? refuseAll.authenticate!
    check(client, username, password, (err, ok) => {
      if (!err && ok) {
        markAuthenticated(client)
        // Through its handshake: the connection no longer counts against the handshake limits.
        const conn = (client as unknown as { conn?: { _parent?: object } }).conn
        this.handshakes.release(conn?._parent ?? conn)
      }
      done(err, ok)
    })
  }

  /** One guard configuration shared by every connection (see PacketGuard.ts). */
  private guardOptions: PacketGuardOptions | null = null
  /** Holds what devices send while a large fan-out goes out (holdReads). */
  private readonly readHold = new ReadHold()

  /**
   * Until the returned function is called (at most 2 s), what connected devices send is kept
   * unparsed: a fan-out's deliveries go out first, the acknowledgements and reports devices
   * send back meanwhile are handled together afterwards (PacketGuard.ts, ReadHold).
   */
  holdReads(): () => void {
    return this.readHold.begin()
  }

  /** Hands a connection to aedes with the packet size guard in its parser. */
  private handle(conn: import('node:stream').Duplex, req?: unknown): void {
    this.guardOptions ??= {
      limits: this.limits,
      hold: this.readHold,
      onRefuse: (r, client) => {
        const c = client as GuardedClient & { conn: { remoteAddress?: string }; req?: { socket?: { remoteAddress?: string } } }
        const remote = c.conn.remoteAddress ?? c.req?.socket?.remoteAddress
        this.log.warn({ clientId: client.id ?? null, remote, ...r }, 'MQTT packet over the size limit, connection closed')
      },
    }
    const client = (this.aedes.handle as (conn: unknown, req?: unknown) => unknown)(conn, req) as GuardedClient
    guardClient(client, this.guardOptions)
  }

  /**
   * The policy's publish check; a stored will it refuses (the will sweep passes no client)
   * is deleted as well, so the sweep does not meet it again every round.
   */
  private readonly authorizePublish: NonNullable<BrokerPolicy['authorizePublish']> = (client, packet, cb) => {
    const keep = this.options.keepWill
    if (client === null && keep) {
      const will = { ...(packet as unknown as StoredWill), clientId: (packet as { clientId?: unknown }).clientId }
      if (!keep(will)) {
        this.stored.delWill({ id: will.clientId }).catch((err: unknown) => this.log.error({ err }, 'deleting a stored Last Will failed'))
        return cb(new Error(`stored Last Will of ${String(will.clientId)} not allowed on ${String(packet.topic).slice(0, 200)}; deleted`))
      }
    }
    const check = this.policy.authorizePublish ?? refuseAll.authorizePublish!
    check(client, packet, cb)
  }

  /**
   * Publishes from the cloud itself (QoS 1). Retained messages are stored by the
   * persistence, and offline persistent sessions subscribed to the topic get it queued.
   * Resolves once every subscriber's write has finished (a device that stopped reading holds
   * it until its socket drains or aedes' drainTimeout cuts it). `handedOver`, when given, is
   * called as soon as the broker has taken the message: retained copy stored, offline sessions
   * queued, the message handed to every live subscriber's delivery; or, at the latest, when
   * the publish resolves. A payload buffer is one publish (it identifies the message in aedes).
   */
  publish(topic: string, payload: Buffer, retain: boolean, handedOver?: () => void): Promise<void> {
    // In a cluster no broker keeps it: each instance's store is its own, and a retained copy
    // left on one would go stale when another publishes. Subscribers get the latest state
    // rebuilt from the database instead (hasRetained is false, see DeviceSessions).
    if (this.options.cluster) retain = false
    // An empty retained payload deletes the retained message (MQTT 3.3.1.3).
    if (retain && payload.length > 0) this.retainedTopics.add(topic)
    else if (retain) this.retainedTopics.delete(topic)
    // Whichever comes first, the emitter hook or the callback, takes `handedOver` from the map.
    if (handedOver) this.handing.set(payload, handedOver)
    return new Promise((resolve, reject) => {
      this.aedes.publish({ cmd: 'publish', topic, payload, qos: 1, retain, dup: false }, (err) => {
        const handed = handedOver && this.handing.get(payload)
        if (handed) this.handing.delete(payload)
        if (err) return reject(err)
        handed?.()
        resolve()
      })
    })
  }

  /** Has this process published a retained message on the topic (so the broker holds one)? */
  hasRetained(topic: string): boolean {
    return this.retainedTopics.has(topic)
  }

  /** Cloud-side subscription (wildcards allowed); resolves once it is in place. */
  async subscribe(filter: string, handler: (msg: BrokerMessage) => void): Promise<void> {
    await this.follow(filter, handler)
  }

  /** A cloud-side subscription that ends: resolves once it is in place, with the function that removes it. */
  follow(filter: string, handler: (msg: BrokerMessage) => void): Promise<() => Promise<void>> {
    const local = !!this.options.cluster
    const deliver = (packet: { topic: string; payload: Buffer | string; brokerId?: string }, cb: () => void): void => {
      cb()
      // In a cluster, a device's message is the business of the instance it is connected to.
      if (local && packet.brokerId !== this.aedes.id) return
      handler({ topic: packet.topic, payload: Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload) })
    }
    const unsubscribe = () =>
      new Promise<void>((resolve) => (this.aedes.closed ? resolve() : this.aedes.unsubscribe(filter, deliver as never, () => resolve())))
    return new Promise((resolve) => this.aedes.subscribe(filter, deliver as never, () => resolve(unsubscribe)))
  }

  /**
   * Asks the instance holding a device's connection to do `what` for it (deliver its open
   * jobs): in a cluster a job queued on one instance is published by the one the device is
   * connected to, whose broker tracks the session. A no-op on a single instance.
   */
  nudge(what: string, screenId: string): void {
    if (!this.options.cluster || this.closed) return
    this.aedes.publish({ cmd: 'publish', topic: `$svc/nudge/${what}`, payload: Buffer.from(screenId), qos: 0, retain: false, dup: false }, (err) => {
      if (err) this.log.warn({ err: err.message, what, screenId }, 'nudging the other instances failed')
    })
  }

  /** Follows the nudges for `what` from every instance; resolves with the function that stops it. */
  onNudge(what: string, handler: (screenId: string) => void): Promise<() => Promise<void>> {
    const deliver = (packet: { payload: Buffer | string }, cb: () => void): void => {
      cb()
      handler(String(packet.payload))
    }
    const topic = `$svc/nudge/${what}`
    const stop = () => new Promise<void>((resolve) => (this.aedes.closed ? resolve() : this.aedes.unsubscribe(topic, deliver as never, () => resolve())))
    if (!this.options.cluster) return Promise.resolve(async () => undefined)
    return new Promise((resolve) => this.aedes.subscribe(topic, deliver as never, () => resolve(stop)))
  }

  /** Has the broker closed (no publish goes out any more)? */
  get closed(): boolean {
    return !this.aedes || this.aedes.closed
  }

  /** Follows one client event (see ClientEvents); returns the function that stops following it. */
  onClient<E extends keyof ClientEvents>(event: E, listener: ClientEvents[E]): () => void {
    const emitter = this.aedes as unknown as NodeJS.EventEmitter
    emitter.on(event, listener)
    return () => void emitter.off(event, listener)
  }

  /** A persistent session (clean: false) whose client, still connected, has no subscription: one this broker lost in a restart. */
  lacksSubscriptions(client: Client): boolean {
    const c = client as Client & { clean?: boolean; subscriptions?: Record<string, unknown>; closed?: boolean }
    return c.clean === false && !c.closed && Object.keys(c.subscriptions ?? {}).length === 0
  }

  /**
   * Gives a connected client these subscriptions as if it had sent SUBSCRIBE. No messageId,
   * so no SUBACK goes to the device; authorizeSubscribe still applies.
   */
  restoreSubscriptions(client: Client, subs: { topic: string; qos: 0 | 1 | 2 }[]): Promise<void> {
    const c = client as unknown as { subscribe(packet: { subscriptions: typeof subs }, done: (err?: Error | null) => void): void }
    return new Promise((resolve, reject) => c.subscribe({ subscriptions: subs }, (err) => (err ? reject(err) : resolve())))
  }

  /** Calls back when an authenticated connection opens (CONNACK 0 sent) and when it closes. */
  onConnections(listener: ConnectionListener): () => void {
    return this.connections.listen(listener)
  }

  /** Is a connection with this client id live right now? */
  isConnected(clientId: string): boolean {
    return this.connections.isConnected(clientId)
  }

  /** Keeps a socket until it closes, so closing the broker can end it (connections that have not sent CONNECT are no aedes clients). */
  private track(socket: net.Socket): void {
    this.sockets.add(socket)
    // One listener function for every socket (`close` comes once): no closure and no once()
    // wrapper held per connected device.
    socket.on('close', this.untrack)
  }

  private readonly untrack = (() => {
    const sockets = this.sockets
    return function (this: net.Socket): void {
      sockets.delete(this)
    }
  })()

  /** Listens for MQTT over TCP; resolves with the bound port. */
  async listenTcp(port: number, host = '0.0.0.0'): Promise<number> {
    // noDelay: MQTT packets are small and often follow one another (a PUBACK, then the next
    // job); with Nagle the second waits for the device's delayed ACK, about 40 ms on Linux.
    const server = net.createServer({ noDelay: true }, (socket) => {
      if (!this.handshakes.admit(socket)) return
      this.track(socket)
      this.handle(socket)
    })
    this.tcp = server
    this.boundTcpPort = await listen(server, port, host)
    return this.boundTcpPort
  }

  /** The port MQTT over TCP listens on, or null when it does not. */
  get tcpPort(): number | null {
    return this.boundTcpPort
  }

  /**
   * Listens for MQTT over TLS with the certificate and key in `files` (PEM), read now (a
   * file that cannot be used throws TlsFileError) and again whenever either changes,
   * checked every `watchMs`. Resolves with the bound port.
   */
  async listenTls(port: number, host: string, files: TlsFiles, watchMs = 1000): Promise<number> {
    const pair = readTlsPair(files)
    const server = tls.createServer({
      cert: pair.cert,
      key: pair.key,
      noDelay: true,
      // The TLS part of the deadline; the gate's deadline (from accept to CONNECT) covers it too.
      handshakeTimeout: this.handshakes.limits.timeoutMs,
    })
    // The raw connection is counted and tracked from its first byte: over the handshake limits
    // it is closed at once, and closing the broker ends handshakes under way too.
    server.on('connection', (socket: net.Socket) => {
      if (this.handshakes.admit(socket)) this.track(socket)
    })
    server.on('secureConnection', (socket: tls.TLSSocket) => this.handle(socket))
    // A client that does not trust the certificate, speaks something else or never finishes
    // the handshake: its connection ends. With a listener here Node leaves the socket open
    // (a handshake timeout only emits this event), so it is destroyed here.
    server.on('tlsClientError', (err, socket) => {
      this.log.debug({ err: err.message, remote: socket.remoteAddress }, 'MQTT over TLS handshake failed, connection closed')
      socket.destroy()
    })
    this.tls = server
    this.boundTlsPort = await listen(server, port, host)
    this.stopTlsWatch = watchTlsPair(files, pair, watchMs, (next) => server.setSecureContext({ cert: next.cert, key: next.key }), this.log)
    this.log.info({ port: this.boundTlsPort, ...describe(pair.certificate) }, 'MQTT over TLS listening')
    return this.boundTlsPort
  }

  /** The port MQTT over TLS listens on, or null when it does not. */
  get tlsPort(): number | null {
    return this.boundTlsPort
  }

  /** Ends the connection of the client with this id, if connected (a deleted screen's agent). */
  disconnect(clientId: string): boolean {
    const client = (this.aedes as unknown as { clients?: Record<string, { close(): void } | undefined> } | undefined)?.clients?.[clientId]
    client?.close()
    return this.connections.disconnect(clientId) || client !== undefined
  }

  /** Serves MQTT over WebSocket at `/mqtt` on an HTTP server. */
  attachWebSocket(server: HttpServer): void {
    // One WebSocket message carries one packet or a part of one (what MQTT clients send);
    // ws buffers a message whole, so it gets the same bound before the guard sees it.
    this.wss = new WebSocketServer({ server, path: '/mqtt', maxPayload: this.limits.afterAuth + 5 })
    this.wss.on('connection', (ws, req) => {
      const stream = createWebSocketStream(ws)
      stream.on('error', () => ws.terminate())
      // Destroying the stream (a refused packet, aedes closing the client) terminates ws.
      this.handle(stream, req)
    })
  }

  /** One publish-to-delivery round trip through the broker, in ms; rejects on failure or timeout. */
  probe(timeoutMs = 2000): Promise<number> {
    const topic = `$svc/probe/${this.aedes.id}/${++this.probeSeq}`
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
    this.budget.clear()
    // The listeners stop accepting first (their close completes once the last connection
    // has ended): a device dropped below cannot connect again while the broker closes.
    const closed = [this.tcp, this.tls].filter((s) => s !== null).map((server) => new Promise<void>((r) => server.close(() => r())))
    // Then the broker: it ends every client connection.
    if (this.aedes && !this.aedes.closed) await new Promise<void>((r) => this.aedes.close(() => r()))
    // aedes does not release its persistence (an injected one may hold a lock or a connection).
    await this.persistence?.destroy?.().catch(() => undefined)
    // Connections that have not (yet) sent CONNECT are no aedes clients: end them here, or
    // the listeners would wait for aedes' connect timeout (30 s) before closing.
    if (this.wss) {
      for (const c of this.wss.clients) c.terminate()
      await new Promise<void>((r) => this.wss!.close(() => r()))
    }
    this.stopTlsWatch?.()
    for (const s of this.sockets) s.destroy()
    await Promise.all(closed)
  }
}

/**
 * The accept queue the MQTT listeners ask the kernel for. After a cloud restart the whole
 * fleet reconnects at once; with Node's default of 511 a burst of connections beyond it, while
 * the process is busy with the TLS handshakes of the first ones, is dropped by the kernel
 * unseen (the device thinks it is connected and waits for its CONNACK until its own timeout).
 * The kernel caps it at `net.core.somaxconn` (4096 on current kernels; docs/operator-guide.md).
 */
export const ACCEPT_BACKLOG = 4096

/** Binds a listener; resolves with its port. */
function listen(server: net.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen({ port, host, backlog: ACCEPT_BACKLOG }, () => resolve((server.address() as net.AddressInfo).port))
  })
}
