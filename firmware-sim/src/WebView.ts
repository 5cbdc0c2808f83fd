/**
 * A tiny live page for installers: shows power, input, volume and mute and
 * updates over a WebSocket (`/ws`) whenever the panel changes. Messages:
 *   {"type":"state","protocol":"lg","state":{...},"faults":[...]}
 *   {"type":"trace","direction":"rx","hex":"AA 11 ...","at":"..."}
 * A page opened later first gets the recent traffic (the last TRACE_REPLAY exchanges'
 * bytes), oldest first, so an installer who opens it after sending sees what happened.
 * The page draws text only: nothing that needs an emoji font.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { WebSocketServer, WebSocket } from 'ws'
import { hexPreview } from '@svc/shared/serial/index'
import type { SimulatedPanel } from './SimulatedPanel.js'
import type { TraceEntry } from './trace.js'

export interface WebViewOptions {
  /** 0 picks a free port. */
  port: number
  /** Default 127.0.0.1. */
  host?: string
}

/** How many trace messages a newly opened page gets replayed. */
export const TRACE_REPLAY = 200

export class WebView {
  private readonly recent: object[] = []
  private server: http.Server | null = null
  private wss: WebSocketServer | null = null
  private boundPort: number | null = null
  private readonly onChange = () => this.broadcast(this.stateMessage())
  private readonly onTrace = (e: TraceEntry) => {
    const msg = { type: 'trace', direction: e.direction, link: e.link, hex: hexPreview(e.bytes), at: new Date(e.at).toISOString() }
    this.recent.push(msg)
    if (this.recent.length > TRACE_REPLAY) this.recent.splice(0, this.recent.length - TRACE_REPLAY)
    this.broadcast(msg)
  }

  constructor(
    private readonly panel: SimulatedPanel,
    private readonly opts: WebViewOptions,
  ) {
    if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) {
      throw new TypeError(`web port must be 0–65535, got ${opts.port}`)
    }
  }

  get url(): string {
    if (this.boundPort === null) throw new Error('WebView not started')
    return `http://${this.opts.host ?? '127.0.0.1'}:${this.boundPort}/`
  }

  async start(): Promise<void> {
    const server = http.createServer((req, res) => {
      if (req.method === 'GET' && (req.url === '/' || req.url === '/index.html')) {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
        res.end(PAGE)
      } else if (req.method === 'GET' && req.url === '/state') {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify(this.stateMessage()))
      } else {
        res.writeHead(404, { 'content-type': 'text/plain' })
        res.end('not found\n')
      }
    })
    const wss = new WebSocketServer({ server, path: '/ws' })
    wss.on('connection', (ws) => {
      ws.send(JSON.stringify(this.stateMessage()))
      for (const m of this.recent) ws.send(JSON.stringify(m))
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(this.opts.port, this.opts.host ?? '127.0.0.1', () => {
        server.off('error', reject)
        resolve()
      })
    })
    this.server = server
    this.wss = wss
    this.boundPort = (server.address() as AddressInfo).port
    this.panel.on('state', this.onChange)
    this.panel.on('faults', this.onChange)
    this.panel.on('trace', this.onTrace)
  }

  async stop(): Promise<void> {
    this.panel.off('state', this.onChange)
    this.panel.off('faults', this.onChange)
    this.panel.off('trace', this.onTrace)
    const { wss, server } = this
    this.wss = null
    this.server = null
    if (wss) {
      for (const c of wss.clients) c.terminate()
      await new Promise<void>((resolve) => wss.close(() => resolve()))
    }
    if (server) {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }

  private stateMessage() {
    return { type: 'state', protocol: this.panel.protocol, state: this.panel.state, faults: this.panel.describeFaults() }
  }

  private broadcast(msg: object): void {
    if (!this.wss) return
    const text = JSON.stringify(msg)
    for (const c of this.wss.clients) if (c.readyState === WebSocket.OPEN) c.send(text)
  }
}

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>firmware-sim panel</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
 body{font:16px system-ui,sans-serif;margin:2rem;background:#111;color:#eee}
 .screen{width:min(36rem,90vw);aspect-ratio:16/9;border:.6rem solid #333;border-radius:.5rem;
   display:flex;align-items:center;justify-content:center;font-size:2rem;background:#000;transition:background .3s}
 .screen.on{background:linear-gradient(135deg,#1e5799,#7db9e8);color:#fff}
 dl{display:grid;grid-template-columns:8rem auto;gap:.3rem 1rem} dt{color:#999}
 #log{font:12px monospace;white-space:pre;max-height:14rem;overflow:auto;color:#8c8}
 .off{color:#f66}
</style></head><body>
<h1>Simulated panel <small id="proto"></small></h1>
<div id="screen" class="screen">…</div>
<dl><dt>Power</dt><dd id="power">?</dd><dt>Input</dt><dd id="input">?</dd>
<dt>Volume</dt><dd id="volume">?</dd><dt>Mute</dt><dd id="muted">?</dd>
<dt id="idlabel">Set id</dt><dd id="id">?</dd><dt>Faults</dt><dd id="faults">none</dd>
<dt>Link</dt><dd id="link" class="off">connecting</dd></dl>
<div id="log"></div>
<script>
const $ = (id) => document.getElementById(id);
function connect() {
  const ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/ws');
  ws.onopen = () => { $('link').textContent = 'live'; $('link').className = ''; };
  ws.onclose = () => { $('link').textContent = 'disconnected, retrying'; $('link').className = 'off'; setTimeout(connect, 1000); };
  ws.onmessage = (ev) => {
    const m = JSON.parse(ev.data);
    if (m.type === 'state') {
      const s = m.state;
      $('proto').textContent = m.protocol === 'cec' ? 'cec (Pulse-Eight adapter, TV behind it)' : m.protocol;
      $('idlabel').textContent = m.protocol === 'cec' ? 'Player on HDMI' : 'Set id';
      for (const k of ['power', 'input', 'volume', 'id']) $(k).textContent = s[k];
      $('muted').textContent = s.muted ? 'muted' : 'sound on';
      $('faults').textContent = m.faults.length ? m.faults.join(', ') : 'none';
      $('screen').className = 'screen' + (s.power === 'on' ? ' on' : '');
      $('screen').textContent = s.power === 'on' ? (m.protocol === 'cec' && s.input === 'hdmi' + s.id ? 'PLAYER (' + s.input.toUpperCase() + ')' : s.input.toUpperCase()) + (s.muted ? ' · muted' : ' · volume ' + s.volume) : s.power;
    } else if (m.type === 'trace') {
      const log = $('log');
      log.textContent = (m.at.slice(11, 23) + ' ' + m.direction + ' ' + m.hex + '\\n' + log.textContent).slice(0, 8000);
    }
  };
}
connect();
</script></body></html>
`
