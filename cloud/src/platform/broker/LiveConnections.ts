// The record of which device connections are live, kept from the connections themselves
// rather than from Aedes' `clients` map and its clientReady / clientDisconnect events.
//
// Why not those: in Aedes 1.2 CONNACK is written before the session is restored (queued
// messages are streamed after it) and `clientReady` only comes once that is done. A socket
// that closes inside that window gets `clientDisconnect` first and, sometimes, `clientReady`
// after it, for a connection already gone; a connection whose queue is slow to drain gets
// no `clientReady` for as long as that takes although it is authenticated and open. A
// socket that closes before its session is registered makes Aedes delete the entry of the
// *other* (live) connection with the same client id and then register the dead one.
//
// Here a connection is live from the moment its CONNACK 0 is written (the device is
// authenticated) until its socket closes, whatever the reason: DISCONNECT, a cut link, a
// take-over by the same client id, a keepalive timeout, the broker closing it. Each gets
// a generation, increasing in the order connections open, and `open` always precedes
// `close` for a generation, which is never reused: a listener that keeps the live
// generations per client id cannot be confused by the order Aedes emits its events in.
import type { Aedes, Client } from 'aedes'

export interface Connection {
  clientId: string
  /** Unique within this process, increasing in opening order. */
  generation: number
}

export interface ConnectionListener {
  open(c: Connection): void
  close(c: Connection): void
}

interface Closable {
  closed?: boolean
  conn?: { destroyed?: boolean; on(ev: 'close', fn: () => void): unknown }
  close(): void
}

/** The live connections of one client id, newest first: nearly always one, so a list of one, not a Map each. */
interface Live {
  generation: number
  client: Closable
  next: Live | null
}

export class LiveConnections {
  private seq = 0
  private readonly seen = new WeakSet<object>()
  private readonly live = new Map<string, Live>()
  private readonly listeners: ConnectionListener[] = []

  /** Follows an Aedes broker: CONNACK 0 opens a connection, its socket's close ends it. */
  attach(aedes: Aedes): void {
    aedes.on('connackSent', (packet, client) => {
      if ((packet as { returnCode?: number }).returnCode === 0) this.opened(client)
    })
    // Normally after connackSent (a no-op then); kept in case an Aedes version skips it.
    aedes.on('clientReady', (client) => this.opened(client))
  }

  listen(l: ConnectionListener): () => void {
    this.listeners.push(l)
    return () => this.listeners.splice(this.listeners.indexOf(l) >>> 0, 1)
  }

  /** How many client ids have a live connection now. */
  get count(): number {
    return this.live.size
  }

  isConnected(clientId: string): boolean {
    return this.live.has(clientId)
  }

  /** The generations live for a client id right now, oldest first. */
  generations(clientId: string): number[] {
    const out: number[] = []
    for (let l: Live | null | undefined = this.live.get(clientId); l; l = l.next) out.unshift(l.generation)
    return out
  }

  /** Closes every live connection of this client id; false if there was none. */
  disconnect(clientId: string): boolean {
    const conns: Closable[] = []
    for (let l: Live | null | undefined = this.live.get(clientId); l; l = l.next) conns.unshift(l.client)
    for (const c of conns) c.close()
    return conns.length > 0
  }

  private remove(clientId: string, generation: number): void {
    let prev: Live | null = null
    for (let l: Live | null | undefined = this.live.get(clientId); l; prev = l, l = l.next) {
      if (l.generation !== generation) continue
      if (prev) prev.next = l.next
      else if (l.next) this.live.set(clientId, l.next)
      else this.live.delete(clientId)
      return
    }
  }

  private opened(client: Client): void {
    const c = client as unknown as Closable & { id: string }
    if (this.seen.has(c)) return
    this.seen.add(c)
    // Closed before we heard of it: it never counts as live.
    if (c.closed || !c.conn || c.conn.destroyed) return
    const conn: Connection = { clientId: c.id, generation: ++this.seq }
    this.live.set(c.id, { generation: conn.generation, client: c, next: this.live.get(c.id) ?? null })
    // One listener function for every connection, its Connection looked up by socket: no
    // closure and no once() wrapper held per connected device (`close` comes once).
    this.bySocket.set(c.conn, conn)
    c.conn.on('close', this.onSocketClose)
    for (const l of [...this.listeners]) l.open(conn)
  }

  /** The Connection each open socket carries. */
  private readonly bySocket = new WeakMap<object, Connection>()

  private readonly onSocketClose = (() => {
    const self = this
    return function (this: object): void {
      const conn = self.bySocket.get(this)
      if (!conn) return
      self.bySocket.delete(this)
      self.remove(conn.clientId, conn.generation)
      for (const l of [...self.listeners]) l.close(conn)
    }
  })()
}
