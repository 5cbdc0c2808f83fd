// The local player page: an HTTP server (default port 7070) serving the kiosk page at `/`,
// the current view as JSON at `/state`, cached media at `/media/<key>` (with byte ranges,
// for video), and a WebSocket feed at `/feed` that sends the current view on connect and
// every change after; the page answers on it with what it actually plays (`page` events),
// except a screenshot capture's page (`/feed?capture=1`), which only watches. `/health`
// answers whether a kiosk page is there and how long it has been silent: the page says
// `{type:"alive"}` every 10 s from its main thread, so a hung browser goes quiet
// (`svc-agent health`, the watchdog of the packed agent, reads it). A kiosk page also sends
// its console's messages (`{type:"console", level, message}`), which the agent keeps for the
// cloud's `logs` jobs, and its video frame counts (`{type:"frames", decoded, dropped}`);
// a message on the feed is at most FEED_MAX_MESSAGE_BYTES.
import { EventEmitter } from 'node:events'
import { createReadStream } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { WebSocketServer, WebSocket } from 'ws'
import type { AgentLogLevel } from '@svc/shared/mqtt/index'
import type { Logger } from '../runtime/Logger.js'
import { consoleLevel } from '../runtime/LogRing.js'
import { systemClock, type Clock } from '../runtime/time.js'
import { PLAYER_PAGE } from './page.js'
import type { PlayerView } from './PlayerView.js'

export interface PlayerServerOptions {
  /** 0 picks a free port. */
  port: number
  /** Default 127.0.0.1: the kiosk browser runs on the player itself. */
  host?: string
  log: Logger
  /** Finds a cached file by key for `/media/<key>` (absent = no media route). */
  media?: (key: string) => { file: string; mimeType: string | null; bytes: number } | null
  /** For `/health`: how long the kiosk page has been silent. */
  clock?: Clock
}

/** `GET /health`: the agent answers; how many kiosk pages are connected and how long since one last spoke. */
export interface PlayerHealth {
  ok: true
  pages: number
  /** Milliseconds since a kiosk page last connected or said anything (since the page server started when none has). */
  pageSilentMs: number
}

/** What the page tells the agent about what it shows. */
export interface PageEvent {
  /** Which page connection said it (several pages may be open, e.g. one with `?debug=1`). */
  page: number
  type: 'play'
  event: 'start' | 'end' | 'error'
  /** `main`, or `main/<zone>` inside a layout. */
  slot: string
  source?: string
  contentKind?: string
  contentId?: string
  castId?: string | null
  emergencyId?: string | null
  itemKind?: string
  itemId?: string
  url?: string | null
}

/** A console message of a kiosk page (its own console.*, uncaught errors and rejections). */
export interface ConsoleEvent {
  page: number
  level: AgentLogLevel
  /** As the page sent it (the agent's log ring cuts it to its bound). */
  message: string
}

/** A kiosk page's video frame counts since it loaded (`{type:"frames"}`, every 10 s and when a video ends). */
export interface FramesEvent {
  page: number
  decoded: number
  dropped: number
}

/** The largest message a page may send on the feed (a console message is cut to 2000 characters by the page). */
export const FEED_MAX_MESSAGE_BYTES = 64 * 1024

export interface PlayerServerEvents {
  /** A message from a page. */
  page: [event: PageEvent]
  /** A console message from a kiosk page. */
  console: [event: ConsoleEvent]
  /** A kiosk page's video frame counts. */
  frames: [event: FramesEvent]
  /** A page connection closed (what it showed is no longer known to be on screen). */
  pageGone: [page: number]
}

function parsePageMessage(text: string): Record<string, unknown> | null {
  let m: unknown
  try {
    m = JSON.parse(text)
  } catch {
    return null
  }
  return m && typeof m === 'object' && !Array.isArray(m) ? (m as Record<string, unknown>) : null
}

function parsePageEvent(e: Record<string, unknown>, page: number): PageEvent | null {
  if (e.type !== 'play' || !['start', 'end', 'error'].includes(e.event as string) || typeof e.slot !== 'string' || e.slot.length > 200) return null
  if (e.event !== 'end' && (typeof e.itemId !== 'string' || typeof e.itemKind !== 'string' || typeof e.contentId !== 'string')) return null
  return { ...(e as unknown as PageEvent), page }
}

export class PlayerServer extends EventEmitter<PlayerServerEvents> {
  readonly #o: PlayerServerOptions
  #server: http.Server | null = null
  #wss: WebSocketServer | null = null
  #view: PlayerView = { type: 'starting' }
  #port: number | null = null
  #pages = 0
  /** Kiosk page connections open now (captures not counted). */
  #open = 0
  #lastHeard = 0

  constructor(options: PlayerServerOptions) {
    super()
    this.#o = options
  }

  /** The bound port once started. */
  get port(): number | null {
    return this.#port
  }

  get view(): PlayerView {
    return this.#view
  }

  get health(): PlayerHealth {
    return { ok: true, pages: this.#open, pageSilentMs: Math.max(0, this.#now() - this.#lastHeard) }
  }

  #now(): number {
    return (this.#o.clock ?? systemClock).now().getTime()
  }

  async start(): Promise<void> {
    if (this.#server) return
    const server = http.createServer((req, res) => this.#serve(req, res))
    const wss = new WebSocketServer({ noServer: true, maxPayload: FEED_MAX_MESSAGE_BYTES })
    server.on('upgrade', (req, socket, head) => {
      const url = new URL(req.url ?? '/', 'http://x')
      if (url.pathname !== '/feed') {
        socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n')
        return
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        ws.on('error', () => ws.terminate())
        // A screenshot capture (`/feed?capture=1`) watches the view but its plays are not plays.
        if (url.searchParams.get('capture') === '1') {
          ws.send(JSON.stringify(this.#view))
          return
        }
        const page = ++this.#pages
        this.#open++
        this.#lastHeard = this.#now()
        ws.on('message', (data) => {
          this.#lastHeard = this.#now()
          const m = parsePageMessage(String(data))
          if (!m) return
          if (m.type === 'console') {
            const level = consoleLevel(m.level)
            if (level && typeof m.message === 'string') this.emit('console', { page, level, message: m.message })
            return
          }
          if (m.type === 'frames') {
            const count = (v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : null)
            const decoded = count(m.decoded)
            const dropped = count(m.dropped)
            if (decoded !== null && dropped !== null) this.emit('frames', { page, decoded, dropped })
            return
          }
          const e = parsePageEvent(m, page)
          if (e) this.emit('page', e)
        })
        ws.on('close', () => {
          this.#open--
          this.emit('pageGone', page)
        })
        ws.send(JSON.stringify(this.#view))
      })
    })
    this.#server = server
    this.#wss = wss
    this.#lastHeard = this.#now()
    const host = this.#o.host ?? '127.0.0.1'
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(this.#o.port, host, () => {
        server.off('error', reject)
        resolve()
      })
    })
    this.#port = (server.address() as AddressInfo).port
    this.#o.log.info({ url: `http://${host.includes(':') ? `[${host}]` : host}:${this.#port}/` }, 'player page listening')
  }

  /** Shows a new view on every connected page. */
  show(view: PlayerView): void {
    this.#view = view
    const text = JSON.stringify(view)
    for (const ws of this.#wss?.clients ?? []) if (ws.readyState === WebSocket.OPEN) ws.send(text)
  }

  async stop(): Promise<void> {
    const server = this.#server
    const wss = this.#wss
    this.#server = null
    this.#wss = null
    if (!server || !wss) return
    for (const ws of wss.clients) ws.terminate()
    await new Promise<void>((r) => wss.close(() => r()))
    server.closeAllConnections()
    await new Promise<void>((r) => server.close(() => r()))
  }

  #serve(req: http.IncomingMessage, res: http.ServerResponse): void {
    const path = new URL(req.url ?? '/', 'http://x').pathname
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end()
    } else if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(PLAYER_PAGE)
    } else if (path === '/state') {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(this.#view))
    } else if (path === '/health') {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(this.health))
    } else if (path.startsWith('/media/') && this.#o.media) {
      this.#serveMedia(req, res, path.slice('/media/'.length))
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n')
    }
  }

  #serveMedia(req: http.IncomingMessage, res: http.ServerResponse, key: string): void {
    const hit = /^[0-9a-f]{64}$/.test(key) ? this.#o.media!(key) : null
    if (!hit) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not cached\n')
      return
    }
    const headers: http.OutgoingHttpHeaders = {
      'content-type': hit.mimeType ?? 'application/octet-stream',
      'accept-ranges': 'bytes',
      'cache-control': 'no-cache',
    }
    let start = 0
    let end = hit.bytes - 1
    let status = 200
    const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '')
    if (range && (range[1] || range[2])) {
      if (range[1]) {
        start = Number(range[1])
        if (range[2]) end = Math.min(end, Number(range[2]))
      } else start = Math.max(0, hit.bytes - Number(range[2]))
      if (start > end || start >= hit.bytes) {
        res.writeHead(416, { 'content-range': `bytes */${hit.bytes}` }).end()
        return
      }
      status = 206
      headers['content-range'] = `bytes ${start}-${end}/${hit.bytes}`
    }
    headers['content-length'] = hit.bytes === 0 ? 0 : end - start + 1
    res.writeHead(status, headers)
    if (req.method === 'HEAD' || hit.bytes === 0) {
      res.end()
      return
    }
    createReadStream(hit.file, { start, end })
      .on('error', () => res.destroy())
      .pipe(res)
  }
}
