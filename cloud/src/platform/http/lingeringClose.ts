// A lingering close, as nginx's `lingering_close`: when the cloud refuses a request while its
// body is still coming (an upload over a size limit, an archive refused mid-stream) it answers
// with `Connection: close`. Closing the socket at once with the client's bytes unread makes
// the kernel reset the connection (RST), and a client still writing can lose the answer it
// had not read yet (EPIPE / ECONNRESET instead of the 4xx). So, after the answer is written,
// the cloud closes its sending side only (FIN) and reads and discards what the client still
// sends, then closes the socket when the first of these comes:
//   - the client closes its side (it read the answer and stopped);
//   - LINGER_IDLE_MS pass without a byte from it;
//   - LINGER_MAX_MS pass in all;
//   - LINGER_MAX_BYTES are discarded.
// A stop of the cloud (preClose) closes lingering sockets at once, and a refusal sent while
// it stops closes at once as before.
import type { IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance, FastifyRequest } from 'fastify'

/** Longest a refused request's socket is kept reading after its answer. */
export const LINGER_MAX_MS = 10_000
/** Longest wait for the client's next bytes before closing. */
export const LINGER_IDLE_MS = 2_000
/** Most bytes read and discarded after the answer. */
export const LINGER_MAX_BYTES = 32 * 1024 * 1024

const lingering = new WeakMap<FastifyInstance, { sockets: Set<Socket>; closing: boolean }>()

/** How often a lingering socket's bytes read are looked at. */
const LINGER_TICK_MS = 100

/** Reads and discards what the client still sends on `socket` (its sending side already ended), within the bounds. */
function linger(socket: Socket, body: IncomingMessage, sockets: Set<Socket>): void {
  const started = performance.now()
  const firstByte = socket.bytesRead
  let seen = firstByte
  let lastRead = started
  const done = () => {
    clearInterval(tick)
    sockets.delete(socket)
    socket.destroy()
  }
  // The socket's byte count, not its data events: the HTTP parser reads the socket itself
  // (and drops what a request nobody reads sends), so this works however the body was read.
  const tick = setInterval(() => {
    const t = performance.now()
    const read = socket.bytesRead
    if (read !== seen) {
      seen = read
      lastRead = t
    }
    if (read - firstByte >= LINGER_MAX_BYTES || t - lastRead >= LINGER_IDLE_MS || t - started >= LINGER_MAX_MS) done()
  }, LINGER_TICK_MS)
  tick.unref()
  sockets.add(socket)
  socket.once('end', done)
  socket.once('close', done)
  socket.on('error', done)
  // The refused body flows to nowhere: taken from whatever read it (which stopped reading, and
  // so the socket), it is let flow, which lets the socket read on.
  body.unpipe()
  body.on('error', () => undefined)
  body.resume()
  socket.resume()
}

/**
 * Makes the socket of `req` linger when Node closes it after this answer (a `Connection:
 * close` answer ends with the socket's destroySoon: its sending side ends, then it is
 * destroyed; here the sending side ends and the socket lingers instead).
 */
export function lingerAfterAnswer(app: FastifyInstance, req: FastifyRequest): void {
  const state = lingering.get(app)
  const socket = req.raw.socket as Socket | null
  if (!state || state.closing || !socket || socket.destroyed) return
  socket.destroySoon = function lingeringClose(this: Socket) {
    if (this.writable) this.end()
    if (state.closing) this.destroy()
    else linger(this, req.raw, state.sockets)
  }
}

/** Sets up the lingering sockets of `app`, closed at once when it stops. */
export function installLingeringClose(app: FastifyInstance): void {
  const state = { sockets: new Set<Socket>(), closing: false }
  lingering.set(app, state)
  app.addHook('preClose', (done) => {
    state.closing = true
    for (const s of state.sockets) s.destroy()
    state.sockets.clear()
    done()
  })
}
