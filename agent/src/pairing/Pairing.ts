// First-run pairing: register with the cloud, show the code, poll until an operator claims
// it, then store the credential. A registration that expires (15 minutes) or vanishes is
// replaced by a new one with a new code. An unreachable cloud is retried with jittered
// backoff and a clear log line, never a crash.
import { EventEmitter } from 'node:events'
import { Backoff, type BackoffOptions } from '../runtime/Backoff.js'
import type { Logger } from '../runtime/Logger.js'
import { wait, type Clock, type Timers } from '../runtime/time.js'
import { CloudResponseError, CloudUnreachableError, type CloudClient, type Registration } from './CloudClient.js'
import type { CredentialStore, Credentials } from './CredentialStore.js'

export interface PairingOptions {
  client: CloudClient
  store: CredentialStore
  log: Logger
  clock: Clock
  timers: Timers
  /** What the device tells the cloud about itself. */
  device: { model?: string; serialNumber?: string }
  /** First wait between polls, ms (default 1000); grows ×1.5 per pending answer... */
  pollIntervalMs?: number
  /** ...up to this, ms (default 10000). */
  pollIntervalCapMs?: number
  /** Retry windows when the cloud cannot be reached (default 1 s → 60 s, full jitter). */
  backoff?: BackoffOptions
}

export interface PairingEvents {
  /** A new code to show; replaces any earlier one. */
  code: [registration: Registration]
  /** Paired and stored. */
  paired: [credentials: Credentials]
}

export class Pairing extends EventEmitter<PairingEvents> {
  readonly #o: PairingOptions
  #abort: AbortController | null = null
  #loop: Promise<void> | null = null
  #registration: Registration | null = null

  constructor(options: PairingOptions) {
    super()
    this.#o = options
  }

  /** The registration whose code is on screen now, if any. */
  get registration(): Registration | null {
    return this.#registration
  }

  start(): void {
    if (this.#loop) return
    const abort = new AbortController()
    this.#abort = abort
    this.#loop = this.#run(abort.signal).catch((err: unknown) => {
      this.#o.log.error({ err }, 'pairing stopped on an unexpected error')
    })
  }

  async stop(): Promise<void> {
    this.#abort?.abort()
    await this.#loop
    this.#loop = null
    this.#abort = null
  }

  async #run(signal: AbortSignal): Promise<void> {
    const { client, store, log, clock, timers } = this.#o
    const base = this.#o.pollIntervalMs ?? 1000
    const cap = this.#o.pollIntervalCapMs ?? 10_000
    const backoff = new Backoff(this.#o.backoff)
    let interval = base
    let reg: Registration | null = null

    while (!signal.aborted) {
      try {
        if (!reg) {
          reg = await client.register(this.#o.device)
          if (signal.aborted) return
          backoff.reset()
          interval = base
          this.#registration = reg
          log.info({ pairingCode: reg.pairingCode, expiresAt: reg.expiresAt, registrationId: reg.registrationId, cloud: client.cloudUrl }, 'pairing code')
          this.emit('code', reg)
        }
        await wait(timers, interval, signal)
        if (signal.aborted) return
        const expires = Date.parse(reg.expiresAt)
        if (Number.isFinite(expires) && clock.now().getTime() >= expires) {
          log.info({ pairingCode: reg.pairingCode }, 'pairing code expired, registering again')
          reg = null
          continue
        }
        const answer = await client.poll(reg.registrationId, reg.pollSecret)
        if (signal.aborted) return
        backoff.reset()
        if (answer.state === 'pending') {
          interval = Math.min(cap, Math.round(interval * 1.5))
        } else if (answer.state === 'expired' || answer.state === 'unknown') {
          log.info(
            {
              pairingCode: reg.pairingCode,
            },
            answer.state === 'expired' ? 'pairing code expired, registering again' : 'the cloud no longer knows this registration, registering again',
          )
          reg = null
        } else if (!answer.deviceSecret || !answer.mqtt) {
          // Only the first poll after the claim carries the secret; if another poll took
          // it (a second agent on the same data dir?), this one can never connect.
          log.error({ screenId: answer.screenId }, 'paired, but the device secret was already handed out; registering again')
          reg = null
        } else {
          const credentials: Credentials = {
            screenId: answer.screenId,
            deviceSecret: answer.deviceSecret,
            mqtt: answer.mqtt,
            cloudUrl: client.cloudUrl,
            pairedAt: clock.now().toISOString(),
          }
          await store.save(credentials)
          this.#registration = null
          log.info({ screenId: credentials.screenId, credentials: store.file }, 'paired')
          this.emit('paired', credentials)
          return
        }
      } catch (err) {
        if (signal.aborted) return
        let delay = backoff.next()
        if (err instanceof CloudResponseError && err.retryAfterMs !== null) delay = Math.max(delay, err.retryAfterMs)
        const message = err instanceof Error ? err.message : String(err)
        const fields = { retryInMs: delay, attempt: backoff.attempt, ...(err instanceof CloudUnreachableError ? { code: err.code } : {}) }
        if (err instanceof CloudUnreachableError || err instanceof CloudResponseError) log.warn(fields, message)
        else log.error(fields, `pairing failed: ${message}`)
        await wait(timers, delay, signal)
      }
    }
  }
}
