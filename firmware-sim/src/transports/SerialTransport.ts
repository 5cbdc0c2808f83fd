/**
 * The panel on a serial port: a real device, one end of a socat pty pair, or
 * a serialport MockBinding port in tests. The port object is injected through
 * `openPort` so tests never touch hardware.
 */
import { SerialPort } from 'serialport'
import type { PanelSession, SimulatedPanel } from '../SimulatedPanel.js'
import type { Transport } from './Transport.js'

/** The part of serialport's stream the transport uses (SerialPort and SerialPortMock both fit). */
export interface SerialPortLike {
  readonly path: string
  readonly isOpen: boolean
  open(callback: (err: Error | null) => void): void
  close(callback: (err: Error | null) => void): void
  write(data: Buffer, callback?: (err: Error | null | undefined) => void): boolean
  on(event: 'data', listener: (chunk: Buffer) => void): this
  on(event: 'close', listener: (err?: Error & { disconnected?: boolean }) => void): this
  on(event: 'error', listener: (err: Error) => void): this
  removeAllListeners(): this
}

export interface SerialTransportOptions {
  path: string
  /** Ignored by ptys; real panels use 9600. */
  baudRate?: number
  /** Creates the port (not yet open). Default: `new SerialPort({path, baudRate, autoOpen: false})`. */
  openPort?: (opts: { path: string; baudRate: number }) => SerialPortLike
}

export class SerialTransport implements Transport {
  private port: SerialPortLike | null = null
  private session: PanelSession | null = null
  private readonly onUnplug = () => void this.unplug()

  constructor(
    private readonly panel: SimulatedPanel,
    private readonly opts: SerialTransportOptions,
  ) {
    if (typeof opts.path !== 'string' || opts.path === '') throw new TypeError('serial path is required')
  }

  get path(): string {
    return this.opts.path
  }

  get isOpen(): boolean {
    return this.port?.isOpen ?? false
  }

  async start(): Promise<void> {
    const baudRate = this.opts.baudRate ?? 9600
    const make = this.opts.openPort ?? ((o) => new SerialPort({ ...o, autoOpen: false }) as unknown as SerialPortLike)
    const port = make({ path: this.opts.path, baudRate })
    await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())))
    this.port = port
    const session = this.panel.attach({
      label: `serial ${this.opts.path}`,
      write: (bytes) => {
        if (port.isOpen) port.write(bytes, (err) => err && this.panel.reportError(err))
      },
    })
    this.session = session
    port.on('data', (chunk) => session.feed(chunk))
    port.on('error', (err) => this.panel.reportError(err))
    port.on('close', () => {
      session.close()
      if (this.session === session) this.session = null
    })
    this.panel.on('unplug', this.onUnplug)
  }

  async unplug(): Promise<void> {
    const port = this.port
    this.port = null
    this.session?.close()
    this.session = null
    if (port?.isOpen) await new Promise<void>((resolve) => port.close(() => resolve()))
  }

  async stop(): Promise<void> {
    this.panel.off('unplug', this.onUnplug)
    await this.unplug()
  }
}
