// The local player page: an HTTP server (default port 7070) serving the kiosk page at `/`,
// the current view as JSON at `/state`, and a WebSocket feed at `/feed` that sends the
// current view on connect and every change after.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, WebSocket } from 'ws';
import type { Logger } from '../runtime/Logger.js';
import { PLAYER_PAGE } from './page.js';
import type { PlayerView } from './PlayerView.js';

export interface PlayerServerOptions {
  /** 0 picks a free port. */
  port: number;
  /** Default 127.0.0.1: the kiosk browser runs on the player itself. */
  host?: string;
  log: Logger;
}

export class PlayerServer {
  readonly #o: PlayerServerOptions;
  #server: http.Server | null = null;
  #wss: WebSocketServer | null = null;
  #view: PlayerView = { type: 'starting' };
  #port: number | null = null;

  constructor(options: PlayerServerOptions) {
    this.#o = options;
  }

  /** The bound port once started. */
  get port(): number | null {
    return this.#port;
  }

  get view(): PlayerView {
    return this.#view;
  }

  async start(): Promise<void> {
    if (this.#server) return;
    const server = http.createServer((req, res) => this.#serve(req, res));
    const wss = new WebSocketServer({ noServer: true });
    server.on('upgrade', (req, socket, head) => {
      if (new URL(req.url ?? '/', 'http://x').pathname !== '/feed') {
        socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        ws.on('error', () => ws.terminate());
        ws.send(JSON.stringify(this.#view));
      });
    });
    this.#server = server;
    this.#wss = wss;
    const host = this.#o.host ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#o.port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.#port = (server.address() as AddressInfo).port;
    this.#o.log.info('player page listening', { url: `http://${host.includes(':') ? `[${host}]` : host}:${this.#port}/` });
  }

  /** Shows a new view on every connected page. */
  show(view: PlayerView): void {
    this.#view = view;
    const text = JSON.stringify(view);
    for (const ws of this.#wss?.clients ?? []) if (ws.readyState === WebSocket.OPEN) ws.send(text);
  }

  async stop(): Promise<void> {
    const server = this.#server;
    const wss = this.#wss;
    this.#server = null;
    this.#wss = null;
    if (!server || !wss) return;
    for (const ws of wss.clients) ws.terminate();
    await new Promise<void>((r) => wss.close(() => r()));
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }

  #serve(req: http.IncomingMessage, res: http.ServerResponse): void {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
    } else if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(PLAYER_PAGE);
    } else if (path === '/state') {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(this.#view));
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    }
  }
}
