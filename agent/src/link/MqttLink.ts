// The agent's MQTT link to the cloud: a persistent session
// (clean: false) with client id = username = screen id, the device secret as password,
// a retained `offline` Last Will on its status topic, `online` published retained on
// every connect, and subscriptions to its `desired` and `jobs` topics. mqtt.js retries on
// a fixed period, so the link turns that off and reconnects itself with full-jitter
// exponential backoff. A CONNACK refused for bad username or password, repeated, means
// the credential was revoked (screen deleted or re-paired): the link stops and says so.
import { EventEmitter } from 'node:events'
import { connect as mqttConnect, type IClientOptions, type MqttClient } from 'mqtt'
import { encodeMessage, QOS, topics, type StatusMessage } from '@svc/shared/mqtt/index'
import { Backoff, type BackoffOptions } from '../runtime/Backoff.js'
import type { Logger } from '../runtime/Logger.js'
import { certificateHint } from '../pairing/trust.js'
import type { Clock, TimerHandle, Timers } from '../runtime/time.js'

/** MQTT 3.1.1 CONNACK codes (the embedded broker speaks 3.1.1). */
export const CONNACK_BAD_USERNAME_OR_PASSWORD = 4
export const CONNACK_NOT_AUTHORIZED = 5

export type MqttConnect = (url: string, options: IClientOptions) => MqttClient

export interface MqttLinkOptions {
  /** `mqtts://…`, `wss://…/mqtt` (or, plaintext, `mqtt://…`, `ws://…/mqtt`). */
  url: string
  /** The CAs that verify the broker's certificate over TLS (default: the system's roots). */
  ca?: string[]
  screenId: string
  deviceSecret: string
  log: Logger
  clock: Clock
  timers: Timers
  /** Reconnect windows (default base 1 s, cap 60 s, Math.random). */
  backoff?: BackoffOptions
  /** Consecutive bad-credential refusals that mean "revoked" (default 2: one may be a fluke of a restoring cloud). */
  revokeAfterRefusals?: number
  /** mqtt.connect in production. */
  connect?: MqttConnect
  keepaliveSeconds?: number
  connectTimeoutMs?: number
}

export type InboundKind = 'desired' | 'jobs'

export interface MqttLinkEvents {
  /** CONNACK accepted, `online` sent, subscriptions requested. */
  connected: []
  /** The connection ended; a reconnect is scheduled unless stopped or revoked. */
  disconnected: []
  message: [kind: InboundKind, payload: Buffer]
  /** The broker refuses the credential: pair again. */
  revoked: []
}

export class MqttLink extends EventEmitter<MqttLinkEvents> {
  readonly #o: MqttLinkOptions
  readonly #backoff: Backoff
  #client: MqttClient | null = null
  #timer: TimerHandle | null = null
  #running = false
  #refusals = 0
  #revoked = false
  #lastError: string | null = null

  constructor(options: MqttLinkOptions) {
    super()
    this.#o = options
    this.#backoff = new Backoff(options.backoff)
  }

  get connected(): boolean {
    return this.#client?.connected === true
  }

  get revoked(): boolean {
    return this.#revoked
  }

  start(): void {
    if (this.#running) return
    this.#running = true
    const { screenId, deviceSecret } = this.#o
    const client = (this.#o.connect ?? mqttConnect)(this.#o.url, {
      clientId: screenId,
      username: screenId,
      password: deviceSecret,
      clean: false,
      protocolVersion: 4,
      reconnectPeriod: 0,
      keepalive: this.#o.keepaliveSeconds ?? 30,
      connectTimeout: this.#o.connectTimeoutMs ?? 15_000,
      will: { topic: topics.status(screenId), payload: this.#status('offline'), qos: QOS, retain: true },
      // Used for mqtts:// and (mqtt.js hands it to the WebSocket) wss://; certificates are always verified.
      ...(this.#o.ca ? { ca: this.#o.ca } : {}),
    })
    this.#client = client
    client.on('connect', () => this.#onConnect(client))
    client.on('message', (topic, payload) => {
      if (topic === topics.desired(screenId)) this.emit('message', 'desired', payload)
      else if (topic === topics.jobs(screenId)) this.emit('message', 'jobs', payload)
    })
    client.on('error', (err) => this.#onError(err))
    client.on('close', () => this.#onClose())
  }

  /** Publishes `offline` (when connected, waiting briefly for the ack) and ends the client. */
  async stop(): Promise<void> {
    if (!this.#running) return
    this.#running = false
    this.#cancelTimer()
    const client = this.#client
    this.#client = null
    if (!client) return
    if (client.connected) {
      try {
        await withTimeout(client.publishAsync(topics.status(this.#o.screenId), this.#status('offline'), { qos: QOS, retain: true }), 2000)
      } catch (err) {
        this.#o.log.warn({ err: err as Error }, 'could not publish offline status')
      }
      await withTimeout(client.endAsync(false), 2000).catch(() => client.end(true))
    } else {
      await client.endAsync(true).catch(() => undefined)
    }
  }

  /**
   * Publishes a message on one of this screen's agent-to-cloud topics. While disconnected
   * mqtt.js keeps QoS 1 messages in its outgoing store and sends them on reconnect.
   */
  async publish(kind: 'reported' | 'job-results' | 'status' | 'play-log', message: unknown, retain: boolean): Promise<void> {
    const client = this.#client
    if (!client) throw new Error('link not started')
    const id = this.#o.screenId
    const topic =
      kind === 'reported' ? topics.reported(id) : kind === 'status' ? topics.status(id) : kind === 'play-log' ? topics.playLog(id) : topics.jobResults(id)
    await client.publishAsync(topic, encodeMessage(message), { qos: QOS, retain })
  }

  #status(status: StatusMessage['status']): Buffer {
    const m: StatusMessage = { status, at: this.#o.clock.now().toISOString() }
    return encodeMessage(m)
  }

  #onConnect(client: MqttClient): void {
    if (client !== this.#client) return
    this.#backoff.reset()
    this.#refusals = 0
    this.#lastError = null
    // Small packets go out at once (no Nagle): a job's PUBACK followed by its result would
    // otherwise wait for the broker's delayed ACK, about 40 ms on Linux.
    ;(client.stream as { setNoDelay?: (on: boolean) => void } | undefined)?.setNoDelay?.(true)
    const { screenId, log } = this.#o
    log.info({ url: this.#o.url, screenId }, 'connected to the broker')
    client.publish(topics.status(screenId), this.#status('online'), { qos: QOS, retain: true }, (err) => {
      if (err) log.warn({ err }, 'could not publish online status')
    })
    client.subscribe({ [topics.desired(screenId)]: { qos: QOS }, [topics.jobs(screenId)]: { qos: QOS } }, (err, granted) => {
      if (err) return log.warn({ err }, 'subscribe failed')
      const refused = (granted ?? []).filter((g) => g.qos === 128).map((g) => g.topic)
      if (refused.length) log.error({ topics: refused }, 'the broker refused subscriptions')
    })
    this.emit('connected')
  }

  #onError(err: Error & { code?: unknown }): void {
    const code = err.code
    if (code === CONNACK_BAD_USERNAME_OR_PASSWORD) {
      this.#refusals++
      const limit = this.#o.revokeAfterRefusals ?? 2
      this.#o.log.warn({ refusals: this.#refusals, of: limit }, 'the broker refused the device credential')
      if (this.#refusals >= limit && !this.#revoked) {
        this.#revoked = true
        this.#cancelTimer()
        this.#o.log.error({ screenId: this.#o.screenId }, 'device credential revoked (screen deleted or paired again): bad username or password')
        this.emit('revoked')
      }
      return
    }
    const text = typeof code === 'string' ? `${code}` : err.message
    // One line per distinct failure, not one per retry.
    if (text !== this.#lastError) this.#o.log.warn(`cannot reach the broker at ${this.#o.url}: ${text}${certificateHint(text)}`)
    this.#lastError = text
  }

  #onClose(): void {
    if (!this.#running || this.#revoked) return
    if (this.#timer !== null) return
    this.emit('disconnected')
    const delay = this.#backoff.next()
    this.#o.log.debug({ inMs: delay, attempt: this.#backoff.attempt }, 'reconnecting')
    this.#timer = this.#o.timers.setTimer(() => {
      this.#timer = null
      const client = this.#client
      if (!this.#running || this.#revoked || !client) return
      // The Last Will carries the time of this attempt; keep the queued QoS 1 messages.
      if (client.options.will) client.options.will.payload = this.#status('offline')
      client.reconnect({ incomingStore: client.incomingStore, outgoingStore: client.outgoingStore })
    }, delay)
  }

  #cancelTimer(): void {
    if (this.#timer !== null) {
      this.#o.timers.clearTimer(this.#timer)
      this.#timer = null
    }
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms)
    }),
  ]).finally(() => clearTimeout(timer))
}
