/**
 * One simulated panel with everything an installer or a test asks for:
 * the panel itself plus any of TCP listener, pty pair, real serial port and
 * live web page. start() opens them in order; stop() closes whatever opened.
 */
import type { Clock, Timers } from './Clock.js'
import type { Faults } from './faults.js'
import type { PanelState } from './PanelModel.js'
import type { PersonalityOptions } from './personalities/index.js'
import type { SimProtocol } from './personalities/Personality.js'
import { SimulatedPanel, type HostFrameHook } from './SimulatedPanel.js'
import { PtyTransport, type PtyTransportOptions } from './transports/PtyTransport.js'
import { SerialTransport, type SerialTransportOptions } from './transports/SerialTransport.js'
import { TcpTransport, type TcpTransportOptions } from './transports/TcpTransport.js'
import type { Transport } from './transports/Transport.js'
import { WebView, type WebViewOptions } from './WebView.js'

export interface FirmwareSimOptions {
  protocol: SimProtocol
  /** Initial panel state (id = set id, default 1). */
  state?: Partial<PanelState>
  /** Listen on TCP. */
  tcp?: TcpTransportOptions
  /** Make a pty pair with socat; `true` for an unnamed one. */
  pty?: PtyTransportOptions | boolean
  /** Open a real serial device. */
  serial?: SerialTransportOptions
  /** Serve the live page. */
  web?: WebViewOptions
  faults?: Faults
  personalityOptions?: PersonalityOptions
  onHostFrame?: HostFrameHook
  clock?: Clock & Timers
}

/** What start() opened; printed by the CLI as its first line. */
export interface FirmwareSimInfo {
  protocol: SimProtocol
  id: number
  tcpPort: number | null
  ptyPath: string | null
  serialPath: string | null
  webUrl: string | null
}

export class FirmwareSim {
  readonly panel: SimulatedPanel
  readonly tcp: TcpTransport | null
  readonly pty: PtyTransport | null
  readonly serial: SerialTransport | null
  readonly web: WebView | null
  private started: (Transport | WebView)[] = []

  constructor(opts: FirmwareSimOptions) {
    this.panel = new SimulatedPanel({
      protocol: opts.protocol,
      ...(opts.state ? { state: opts.state } : {}),
      ...(opts.faults ? { faults: opts.faults } : {}),
      ...(opts.personalityOptions ? { personalityOptions: opts.personalityOptions } : {}),
      ...(opts.onHostFrame ? { onHostFrame: opts.onHostFrame } : {}),
      ...(opts.clock ? { clock: opts.clock } : {}),
    })
    this.tcp = opts.tcp ? new TcpTransport(this.panel, opts.tcp) : null
    this.pty = opts.pty ? new PtyTransport(this.panel, opts.pty === true ? {} : opts.pty) : null
    this.serial = opts.serial ? new SerialTransport(this.panel, opts.serial) : null
    this.web = opts.web ? new WebView(this.panel, opts.web) : null
  }

  async start(): Promise<FirmwareSimInfo> {
    try {
      for (const part of [this.tcp, this.pty, this.serial, this.web]) {
        if (!part) continue
        await part.start()
        this.started.push(part)
      }
    } catch (err) {
      await this.stop()
      throw err
    }
    return this.info()
  }

  info(): FirmwareSimInfo {
    return {
      protocol: this.panel.protocol,
      id: this.panel.model.id,
      tcpPort: this.tcp && this.started.includes(this.tcp) ? this.tcp.port : null,
      ptyPath: this.pty && this.started.includes(this.pty) ? this.pty.hostPath : null,
      serialPath: this.serial ? this.serial.path : null,
      webUrl: this.web && this.started.includes(this.web) ? this.web.url : null,
    }
  }

  /** Pulls the cable on every transport; resolves once ports are closed and socat has exited. */
  async unplug(): Promise<void> {
    for (const part of this.started) if (part !== this.web) await (part as Transport).unplug()
  }

  async stop(): Promise<void> {
    const parts = this.started.reverse()
    this.started = []
    for (const p of parts) await p.stop()
    this.panel.close()
  }
}
