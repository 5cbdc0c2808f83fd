/**
 * The byte stream to a panel: a serial device (RS232 / USB adapter / pty) or a
 * serial-over-IP gateway given as `tcp://host:port`. The driver only sees this
 * interface; tests inject a factory that returns a MockBinding-backed port.
 */
import net from 'node:net'
import { EventEmitter } from 'node:events'
import { SerialPort } from 'serialport'
import { CecCtlPort, isCecDevicePath } from './CecCtlPort.js'

/** The part of serialport's stream the driver uses (SerialPort, SerialPortMock and TcpPanelPort fit). */
export interface PanelPort {
  readonly isOpen: boolean
  open(callback: (err: Error | null) => void): void
  close(callback: (err: Error | null) => void): void
  write(data: Buffer, callback?: (err: Error | null | undefined) => void): boolean
  on(event: 'data', listener: (chunk: Buffer) => void): this
  /** An unplug arrives as `close` with an error whose `disconnected` is true. */
  on(event: 'close', listener: (err?: Error & { disconnected?: boolean }) => void): this
  on(event: 'error', listener: (err: Error) => void): this
  removeAllListeners(): this
}

export interface PanelPortOptions {
  /** Device path (`/dev/ttyUSB0`, a pty) or `tcp://host:port`. */
  path: string
  /** Default 9600; ignored by ptys and TCP. */
  baudRate: number
  dataBits: 5 | 6 | 7 | 8
  parity: 'none' | 'even' | 'odd'
  stopBits: 1 | 2
}

/** Creates a port, not yet open. */
export type PanelPortFactory = (opts: PanelPortOptions) => PanelPort

const TCP_URL = /^tcp:\/\/(\[[^\]]+\]|[^:/]+):(\d{1,5})\/?$/

export function isTcpPath(path: string): boolean {
  return TCP_URL.test(path)
}

/** The default factory: `tcp://host:port` → a socket, `/dev/cecN` → cec-ctl, anything else → serialport. */
export const openPanelPort: PanelPortFactory = (opts) => {
  if (isTcpPath(opts.path)) return new TcpPanelPort(opts.path)
  if (isCecDevicePath(opts.path)) return new CecCtlPort(opts.path)
  return new SerialPort({
    path: opts.path,
    baudRate: opts.baudRate,
    dataBits: opts.dataBits,
    parity: opts.parity,
    stopBits: opts.stopBits,
    autoOpen: false,
  }) as unknown as PanelPort
}

/** A TCP socket to a serial-over-IP gateway, shaped like a serial port. */
export class TcpPanelPort extends EventEmitter implements PanelPort {
  private socket: net.Socket | null = null
  private closing = false
  readonly host: string
  readonly port: number

  constructor(url: string) {
    super()
    const m = TCP_URL.exec(url)
    if (!m) throw new TypeError(`"${url}" is not tcp://host:port`)
    this.host = m[1]!.replace(/^\[|\]$/g, '')
    this.port = Number(m[2])
    if (this.port < 1 || this.port > 65535) throw new TypeError(`port in "${url}" must be 1–65535`)
  }

  get isOpen(): boolean {
    return this.socket !== null && !this.socket.destroyed
  }

  open(callback: (err: Error | null) => void): void {
    this.closing = false
    const socket = net.connect({ host: this.host, port: this.port })
    socket.setNoDelay(true)
    const onError = (err: Error) => {
      socket.destroy()
      callback(err)
    }
    socket.once('error', onError)
    socket.once('connect', () => {
      socket.off('error', onError)
      this.socket = socket
      socket.on('data', (chunk: Buffer) => this.emit('data', chunk))
      socket.on('error', (err) => this.emit('error', err))
      socket.once('close', () => {
        this.socket = null
        // A drop we did not ask for is an unplug, as serialport reports it.
        this.emit('close', this.closing ? undefined : Object.assign(new Error('connection closed by the gateway'), { disconnected: true }))
      })
      callback(null)
    })
  }

  close(callback: (err: Error | null) => void): void {
    const s = this.socket
    if (!s) return callback(null)
    this.closing = true
    s.once('close', () => callback(null))
    s.end()
    setTimeout(() => s.destroy(), 200).unref()
  }

  write(data: Buffer, callback?: (err: Error | null | undefined) => void): boolean {
    if (!this.socket) {
      callback?.(new Error('port is not open'))
      return false
    }
    return this.socket.write(data, callback)
  }
}
