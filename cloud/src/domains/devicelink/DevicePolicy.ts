// The broker's device policy (shared/src/mqtt README
// "Device ACL"): who may connect (username = screen id, password = device secret, client
// id = screen id) and which topics each device reaches (publish only its own status,
// reported, job-results; subscribe only its own desired, jobs). The credential is looked
// up at every connect, so a deleted or re-paired screen's secret stops working at once.
// A device's Last Will may only be its own status topic with an `offline` status: any
// other will is refused at CONNECT, and a stored one (left by an older version) is never
// republished.
// A `play-log` batch is stored (by the listener of `playLogBatches`: the play-log module's) before authorizePublish
// returns, and Aedes writes the PUBACK only after it: an acknowledged batch is stored, so
// the agent may forget it. A batch that can never be stored (invalid, another screen's
// records) is acknowledged and dropped with a warning, so the agent does not resend it
// forever, and so are the records the play log's limits refuse (PlayLogService); a batch
// past the screen's play rate is answered late, and until then Aedes reads nothing more
// from that device. A storage failure refuses the publish (the connection closes, no
// PUBACK) and the agent sends the batch again after reconnecting.
// Retained messages from a device: only its own status, a valid status message (kept as
// `{status, at}`); a retain flag on `reported` or `job-results` is dropped, so the message
// reaches the cloud but the broker stores nothing.
import type { Client, PublishPacket, Subscription } from 'aedes'
import { encodeMessage, isValidScreenId, mayDevicePublish, mayDeviceSubscribe, parseScreenTopic, parseStatusMessage, topics } from '@svc/shared/mqtt/index'
import { hashSecret, secretMatches } from '../../platform/secrets.js'
import type { DeviceDirectory } from '../screens/index.js'
import type { BrokerPolicy } from '../../platform/broker/BrokerPolicy.js'
import { type Hook, Listeners } from '../../platform/hooks.js'

/** CONNACK return codes of MQTT 3.1.1 that this policy answers. */
const IDENTIFIER_REJECTED = 2
const SERVER_UNAVAILABLE = 3
const BAD_USERNAME_OR_PASSWORD = 4
const NOT_AUTHORIZED = 5

// Compared against when the screen is unknown, so both paths hash and compare.
const DUMMY_HASH = hashSecret('no such screen')

function refusal(returnCode: number, message: string): Error & { returnCode: number } {
  return Object.assign(new Error(message), { returnCode })
}

/** A Last Will as the CONNECT carries it or the broker stored it. */
export interface WillMessage {
  topic: string
  payload: Buffer | Uint8Array | string
}

/**
 * The only Last Will screen `screenId` may leave: on its own `status` topic, a valid
 * status message saying `offline`. Anything else would be published by the broker in the
 * device's name after it went away.
 */
export function isAllowedWill(screenId: unknown, will: WillMessage | null | undefined): boolean {
  if (!will || !isValidScreenId(screenId) || will.topic !== topics.status(screenId)) return false
  const msg = parseStatusMessage(will.payload ?? '')
  return msg.ok && msg.value.status === 'offline'
}

/** Where play-log batches go: resolves once stored (ok false: dropped for good); rejects on a storage failure. */
export type PlayLogSink = (screenId: string, payload: Buffer) => Promise<{ ok: boolean; reason?: string; errors?: unknown }>

/** Topic a dropped message is rerouted to: `$` topics match no wildcard and nothing subscribes here. */
const DROPPED_PLAY_LOG = '$svc/play-log-dropped'

export class DevicePolicy {
  private readonly playLogSinks = new Listeners<PlayLogSink>()
  /**
   * Where play-log batches are stored: the play-log module joins this hook while it is wired
   * (and leaves it on close). The first listener stores; with none, batches are refused.
   */
  readonly playLogBatches: Hook<PlayLogSink> = this.playLogSinks
  /** The clients authenticated as a screen (their client id is the screen id: checked at CONNECT). */
  private readonly screens = new WeakSet<Client>()
  /** The Last Will of each CONNECT between preConnect and authenticate. */
  private readonly wills = new WeakMap<Client, WillMessage | null>()

  constructor(
    private readonly directory: DeviceDirectory,
    private readonly log: { warn(obj: object, msg: string): void } = { warn: () => undefined },
  ) {}

  /** The screen id a connected client authenticated as, or null. */
  screenOf(client: Client | null): string | null {
    return client && this.screens.has(client) ? client.id : null
  }

  /** Notes the CONNECT's will for authenticate (which aedes hands only the credentials). */
  readonly preConnect: NonNullable<BrokerPolicy['preConnect']> = (client, packet, done) => {
    const will = (packet as { will?: WillMessage | null }).will ?? null
    this.wills.set(client, will)
    done(null as never, true)
  }

  readonly authenticate: NonNullable<BrokerPolicy['authenticate']> = (client, username, password, done) => {
    const will = this.wills.get(client) ?? null
    this.wills.delete(client)
    const refuse = (code: number, msg: string): void => done(refusal(code, msg) as never, false)
    if (typeof username !== 'string' || !isValidScreenId(username) || !password) {
      return refuse(BAD_USERNAME_OR_PASSWORD, 'bad username or password')
    }
    this.directory.credentialHash(username).then(
      (hash) => {
        // Always hash and compare, so an unknown screen costs what a wrong secret costs.
        const ok = secretMatches(password.toString('utf8'), hash ?? DUMMY_HASH) && hash !== null
        if (!ok) return refuse(BAD_USERNAME_OR_PASSWORD, 'bad username or password')
        // One session per screen: the client id is the screen id, so a reconnecting agent
        // takes over its persistent session and a deleted screen's client can be found.
        if (client.id !== username) return refuse(IDENTIFIER_REJECTED, 'client id must equal the screen id')
        // Stored with the session and published in the device's name after it leaves,
        // possibly by a later process: only the device's own `offline` status.
        if (will !== null && !isAllowedWill(username, will)) {
          this.log.warn({ screenId: username, willTopic: String(will.topic).slice(0, 200) }, 'CONNECT refused: Last Will not allowed')
          return refuse(NOT_AUTHORIZED, "a Last Will may only be the screen's own offline status")
        }
        this.screens.add(client)
        done(null, true)
      },
      (err: unknown) => {
        this.log.warn({ err }, 'device credential lookup failed')
        refuse(SERVER_UNAVAILABLE, 'server unavailable')
      },
    )
  }

  readonly authorizePublish: NonNullable<BrokerPolicy['authorizePublish']> = (client, packet: PublishPacket, cb) => {
    if (client === null) {
      // A stored Last Will republished for a client no longer present (after a broker
      // restart): the same rule as at CONNECT, for the client that left it.
      const owner = (packet as { clientId?: unknown }).clientId
      return cb(this.keepWill({ clientId: owner, topic: packet.topic, payload: packet.payload }) ? null : new Error('stored Last Will not allowed'))
    }
    const screenId = this.screenOf(client)
    if (screenId === null || !mayDevicePublish(screenId, packet.topic)) return cb(new Error('not authorized'))
    const kind = parseScreenTopic(packet.topic)?.kind
    if (kind === 'play-log') return this.storePlayLog(screenId, packet, cb)
    if (kind === 'status') {
      // Retained and announced in the device's name: a valid status message, nothing more.
      const msg = parseStatusMessage(packet.payload)
      if (!msg.ok) return cb(new Error('not a status message'))
      packet.payload = encodeMessage(msg.value)
    } else if (packet.retain) {
      // Older agents retain `reported`: accepted, but not stored (see docs/mqtt-contract.md).
      packet.retain = false
    }
    cb(null)
  }

  private storePlayLog(screenId: string, packet: PublishPacket, cb: (err: Error | null) => void): void {
    const sink = this.playLogSinks.all()[0]
    if (!sink) return cb(new Error('play log not available'))
    packet.retain = false
    const payload = Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload)
    sink(screenId, payload).then(
      (r) => {
        if (!r.ok) this.log.warn({ screenId, reason: r.reason, errors: r.errors }, 'play-log batch dropped')
        // Stored (or never storable): nothing else needs the bytes.
        packet.topic = DROPPED_PLAY_LOG
        packet.payload = Buffer.alloc(0)
        cb(null)
      },
      (err: unknown) => {
        this.log.warn({ screenId, err }, 'play-log batch not stored; refused so the device sends it again')
        cb(new Error('play log not stored'))
      },
    )
  }

  readonly authorizeSubscribe: NonNullable<BrokerPolicy['authorizeSubscribe']> = (client, sub: Subscription, cb) => {
    const screenId = this.screenOf(client)
    // null grants nothing: the SUBACK carries 128 for this filter, the connection stays.
    if (screenId === null || !mayDeviceSubscribe(screenId, sub.topic)) return cb(null, null)
    cb(null, sub)
  }

  /** Whether a will the broker stored may stay (and be published); see isAllowedWill. */
  readonly keepWill = (will: { clientId: unknown } & WillMessage): boolean => isAllowedWill(will.clientId, will)

  /** The hooks to hand to EmbeddedBroker. */
  hooks(): BrokerPolicy {
    return {
      preConnect: this.preConnect,
      authenticate: this.authenticate,
      authorizePublish: this.authorizePublish,
      authorizeSubscribe: this.authorizeSubscribe,
    }
  }
}
