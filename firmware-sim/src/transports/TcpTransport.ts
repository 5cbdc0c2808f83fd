/**
 * The panel as a TCP listener (RS232-over-IP adapter or a panel's LAN port).
 * Every connection gets its own session; unplug drops the connections but
 * keeps listening, like an adapter whose serial side was pulled and replugged.
 */
import net from 'node:net'
import type { SimulatedPanel } from '../SimulatedPanel.js'
import type { Transport } from './Transport.js'

export interface TcpTransportOptions {
  /** 0 picks a free port; read `port` after start(). */
  port: number
  /** Interface to bind; default 127.0.0.1. Use 0.0.0.0 to reach the panel from another host. */
  host?: string
}

export class TcpTransport implements Transport {
  private server: net.Server | null = null
  private readonly sockets = new Set<net.Socket>()
  private boundPort: number | null = null
  private readonly onUnplug = () => void this.unplug()

  constructor(
    private readonly panel: SimulatedPanel,
    private readonly opts: TcpTransportOptions,
  ) {
    if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) {
      throw new TypeError(`tcp port must be 0–65535, got ${opts.port}`)
    }
  }

  /** The bound port (after start). */
  get port(): number {
    if (this.boundPort === null) throw new Error('TcpTransport not started')
    return this.boundPort
  }

  get host(): string {
    return this.opts.host ?? '127.0.0.1'
  }

  async start(): Promise<void> {
    const server = net.createServer((socket) => this.accept(socket))
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(this.opts.port, this.host, () => {
        server.off('error', reject)
        resolve()
      })
    })
    server.on('error', (err) => this.panel.reportError(err))
    this.server = server
    this.boundPort = (server.address() as net.AddressInfo).port
    this.panel.on('unplug', this.onUnplug)
  }

  async unplug(): Promise<void> {
    for (const s of this.sockets) s.destroy()
    this.sockets.clear()
  }

  async stop(): Promise<void> {
    this.panel.off('unplug', this.onUnplug)
    await this.unplug()
    const server = this.server
    this.server = null
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()))
  }

  private accept(socket: net.Socket): void {
    this.sockets.add(socket)
    socket.setNoDelay(true)
    const session = this.panel.attach({
      label: `tcp ${socket.remoteAddress}:${socket.remotePort}`,
      write: (bytes) => {
        if (!socket.destroyed) socket.write(bytes)
      },
    })
    socket.on('data', (chunk: Buffer) => session.feed(chunk))
    socket.on('error', () => socket.destroy())
    socket.on('close', () => {
      this.sockets.delete(socket)
      session.close()
    })
  }
}
