// The broker's device policy (DESIGN "Screens and pairing" 4, shared/src/mqtt README
// "Device ACL"): who may connect (username = screen id, password = device secret, client
// id = screen id) and which topics each device reaches (publish only its own status,
// reported, job-results; subscribe only its own desired, jobs). The credential is looked
// up at every connect, so a deleted or re-paired screen's secret stops working at once.
import type { Client, PublishPacket, Subscription } from 'aedes'
import { isValidScreenId, mayDevicePublish, mayDeviceSubscribe, parseScreenTopic } from '@svc/shared/mqtt/index'
import { hashSecret, secretMatches } from '../auth/secrets.js'
import type { DeviceDirectory } from '../services/ScreenService.js'
import type { BrokerPolicy } from './EmbeddedBroker.js'

/** CONNACK return codes of MQTT 3.1.1 that this policy answers. */
const IDENTIFIER_REJECTED = 2
const SERVER_UNAVAILABLE = 3
const BAD_USERNAME_OR_PASSWORD = 4

// Compared against when the screen is unknown, so both paths hash and compare.
const DUMMY_HASH = hashSecret('no such screen')

function refusal(returnCode: number, message: string): Error & { returnCode: number } {
  return Object.assign(new Error(message), { returnCode })
}

export class DevicePolicy {
  /** The screen each authenticated client connected as. */
  private readonly screens = new WeakMap<Client, string>()

  constructor(
    private readonly directory: DeviceDirectory,
    private readonly log: { warn(obj: object, msg: string): void } = { warn: () => undefined },
  ) {}

  /** The screen id a connected client authenticated as, or null. */
  screenOf(client: Client | null): string | null {
    return client ? (this.screens.get(client) ?? null) : null
  }

  readonly authenticate: NonNullable<BrokerPolicy['authenticate']> = (client, username, password, done) => {
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
        this.screens.set(client, username)
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
      // A Last Will republished for a client no longer present (e.g. after a broker
      // restart): only a status topic, and only its own when the will names its client.
      const parsed = parseScreenTopic(packet.topic)
      const owner = (packet as { clientId?: unknown }).clientId
      const ok = parsed !== null && parsed.kind === 'status' && (owner === undefined || owner === parsed.screenId)
      return cb(ok ? null : new Error('not authorized'))
    }
    const screenId = this.screenOf(client)
    if (screenId === null || !mayDevicePublish(screenId, packet.topic)) return cb(new Error('not authorized'))
    cb(null)
  }

  readonly authorizeSubscribe: NonNullable<BrokerPolicy['authorizeSubscribe']> = (client, sub: Subscription, cb) => {
    const screenId = this.screenOf(client)
    // null grants nothing: the SUBACK carries 128 for this filter, the connection stays.
    if (screenId === null || !mayDeviceSubscribe(screenId, sub.topic)) return cb(null, null)
    cb(null, sub)
  }

  /** The hooks to hand to EmbeddedBroker. */
  hooks(): BrokerPolicy {
    return { authenticate: this.authenticate, authorizePublish: this.authorizePublish, authorizeSubscribe: this.authorizeSubscribe }
  }
}
