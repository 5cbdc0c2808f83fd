/**
 * The panel behind a pseudo-terminal pair made by socat:
 *   socat -d -d pty,raw,echo=0 pty,raw,echo=0,link=LINK
 * The simulator opens the first pty with serialport; the agent opens the
 * second (`hostPath`: LINK when given, else /dev/pts/N read from socat's
 * stderr). Killing socat is the unplug. A pty ignores baud rate and flow
 * control, and modem-line calls fail on it.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import type { SimulatedPanel } from '../SimulatedPanel.js'
import { SerialTransport, type SerialPortLike } from './SerialTransport.js'
import type { Transport } from './Transport.js'

export interface PtyTransportOptions {
  /** Stable path (symlink) for the agent's end, e.g. /tmp/panel1. */
  link?: string
  /** socat binary; default "socat" on PATH. */
  socatPath?: string
  /** Give up if socat has not set up both ptys by then. */
  startTimeoutMs?: number
  openPort?: (opts: { path: string; baudRate: number }) => SerialPortLike
}

export class PtyTransport implements Transport {
  private child: ChildProcess | null = null
  private serial: SerialTransport | null = null
  private paths: { sim: string; host: string } | null = null
  private exited: Promise<void> = Promise.resolve()
  private readonly onUnplug = () => void this.unplug()

  constructor(
    private readonly panel: SimulatedPanel,
    private readonly opts: PtyTransportOptions = {},
  ) {
    if (opts.link !== undefined && (opts.link === '' || /[,!:]/.test(opts.link))) {
      throw new TypeError(`pty link "${opts.link}" must be a path without , ! or :`)
    }
  }

  /** The path the agent opens. */
  get hostPath(): string {
    if (!this.paths) throw new Error('PtyTransport not started')
    return this.opts.link ?? this.paths.host
  }

  /** The pty the simulator itself holds open. */
  get simPath(): string {
    if (!this.paths) throw new Error('PtyTransport not started')
    return this.paths.sim
  }

  get pid(): number | undefined {
    return this.child?.pid
  }

  async start(): Promise<void> {
    const hostAddr = `pty,raw,echo=0${this.opts.link ? `,link=${this.opts.link}` : ''}`
    const child = spawn(this.opts.socatPath ?? 'socat', ['-d', '-d', 'pty,raw,echo=0', hostAddr], {
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    this.child = child
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()))
    try {
      this.paths = await this.readPaths(child)
      const serial = new SerialTransport(this.panel, {
        path: this.paths.sim,
        ...(this.opts.openPort ? { openPort: this.opts.openPort } : {}),
      })
      await serial.start()
      this.serial = serial
    } catch (err) {
      await this.killSocat()
      throw err
    }
    // the serial transport already listens for unplug; we add killing socat
    this.panel.on('unplug', this.onUnplug)
  }

  async unplug(): Promise<void> {
    await this.killSocat()
    await this.serial?.stop()
    this.serial = null
  }

  async stop(): Promise<void> {
    this.panel.off('unplug', this.onUnplug)
    await this.unplug()
  }

  private async killSocat(): Promise<void> {
    const child = this.child
    this.child = null
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM')
      await this.exited
    }
  }

  private readPaths(child: ChildProcess): Promise<{ sim: string; host: string }> {
    return new Promise((resolve, reject) => {
      let stderr = ''
      const ptys: string[] = []
      const timer = setTimeout(
        () => fail(new Error(`socat did not open two ptys within ${this.opts.startTimeoutMs ?? 5000} ms: ${stderr.trim()}`)),
        this.opts.startTimeoutMs ?? 5000,
      )
      const done = () => {
        clearTimeout(timer)
        child.stderr?.off('data', onData)
        child.off('error', onError)
        child.off('exit', onExit)
        child.stderr?.resume() // keep draining so socat never blocks on stderr
      }
      const fail = (err: Error) => {
        done()
        reject(err)
      }
      const onData = (chunk: Buffer) => {
        stderr += chunk.toString()
        for (const m of stderr.matchAll(/PTY is (\S+)/g)) if (!ptys.includes(m[1]!)) ptys.push(m[1]!)
        if (ptys.length >= 2 && /starting data transfer loop/.test(stderr)) {
          done()
          resolve({ sim: ptys[0]!, host: ptys[1]! })
        }
      }
      const onError = (err: NodeJS.ErrnoException) =>
        fail(err.code === 'ENOENT' ? new Error('socat is not installed (apt-get install -y socat) or not on PATH') : err)
      const onExit = (code: number | null) => fail(new Error(`socat exited (${code}) before the ptys were ready: ${stderr.trim()}`))
      child.stderr?.on('data', onData)
      child.once('error', onError)
      child.once('exit', onExit)
    })
  }
}
