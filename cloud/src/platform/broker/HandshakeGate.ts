// Bounds the MQTT connections that have not yet been accepted as a device: from the moment
// a TCP or TLS listener accepts a socket until its CONNECT is authenticated (CONNACK 0), a
// connection is "in handshake" (for TLS the TLS handshake, then the wait for CONNECT). Every
// such connection holds a file descriptor and costs nothing to an attacker who never
// finishes it, so:
// - each one has a deadline (`timeoutMs`, from accept, not reset by bytes trickling in):
//   past it the socket is destroyed;
// - at most `perAddress` are in handshake from one remote address and `total` from all:
//   a connection over either limit is destroyed as soon as it is accepted, so its file
//   descriptor is released at once and the process keeps descriptors for HTTP and for
//   the devices already connected.
// Devices reconnect with backoff, so a device refused in a burst gets in on a later try.
// Time is the injected timers (the system's by default).
import type net from 'node:net'
import { systemTimers, type Timers } from '@svc/shared'

export interface HandshakeLimits {
  /** From accept to an authenticated CONNECT, at most this long, ms. */
  timeoutMs: number
  /** Connections in handshake from one remote address. */
  perAddress: number
  /** Connections in handshake in all (every MQTT listener of this process). */
  total: number
}

export const DEFAULT_HANDSHAKE_LIMITS: HandshakeLimits = { timeoutMs: 10_000, perAddress: 32, total: 256 }

/** What the gate did since the process started (tests and logs read it). */
export interface HandshakeStats {
  /** Connections destroyed at accept because a limit was reached. */
  refused: number
  /** Connections destroyed because their handshake outlived the deadline. */
  timedOut: number
}

type Log = { warn(obj: object, msg: string): void }

/** How often, at most, a refusal is logged (a flood would otherwise write a line per connection). */
const WARN_EVERY = 1000

/** An IPv4 address seen through an IPv6 socket counts as the IPv4 address. */
function addressOf(socket: net.Socket): string {
  const a = socket.remoteAddress ?? ''
  return a.startsWith('::ffff:') ? a.slice(7) : a
}

export class HandshakeGate {
  private readonly byAddress = new Map<string, number>()
  private pending = 0
  private readonly releases = new WeakMap<object, () => void>()
  readonly stats: HandshakeStats = { refused: 0, timedOut: 0 }

  constructor(
    readonly limits: HandshakeLimits = DEFAULT_HANDSHAKE_LIMITS,
    private readonly timers: Timers = systemTimers,
    private readonly log: () => Log = () => ({ warn: () => undefined }),
  ) {}

  /** Connections in handshake right now. */
  get inHandshake(): number {
    return this.pending
  }

  /**
   * A socket a listener has just accepted: counted until `release(socket)` or its close,
   * destroyed at its deadline; destroyed at once (answers false) when a limit is reached.
   */
  admit(socket: net.Socket): boolean {
    const address = addressOf(socket)
    const fromAddress = this.byAddress.get(address) ?? 0
    if (this.pending >= this.limits.total || fromAddress >= this.limits.perAddress) {
      this.stats.refused++
      if (this.stats.refused % WARN_EVERY === 1)
        this.log().warn(
          { remote: address, inHandshake: this.pending, fromAddress, refused: this.stats.refused, ...this.limits },
          'MQTT connections in handshake at their limit: new connection closed',
        )
      socket.destroy()
      return false
    }
    this.pending++
    this.byAddress.set(address, fromAddress + 1)
    let done = false
    const timer = this.timers.setTimer(() => {
      if (done) return
      this.stats.timedOut++
      release()
      socket.destroy()
    }, this.limits.timeoutMs)
    const release = (): void => {
      if (done) return
      done = true
      this.timers.clearTimer(timer)
      this.pending--
      const n = (this.byAddress.get(address) ?? 1) - 1
      if (n > 0) this.byAddress.set(address, n)
      else this.byAddress.delete(address)
      this.releases.delete(socket)
      // Through its handshake, the connection keeps nothing of the gate (no listener, no timer):
      // a connected fleet would otherwise hold both for every device.
      socket.off('close', release)
    }
    this.releases.set(socket, release)
    socket.once('close', release)
    return true
  }

  /** The connection is through its handshake (its CONNECT authenticated): it no longer counts. */
  release(socket: object | undefined): void {
    if (socket) this.releases.get(socket)?.()
  }
}
