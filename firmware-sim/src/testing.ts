/**
 * Test doubles for firmware-sim and its users (agent tests): a manual clock
 * and a simulated panel on a serialport MockBinding port that a test drives
 * like the host would. Not exported from the main entry.
 */
import { SerialPortMock } from 'serialport'
import { panelProtocols, type Framer } from '@svc/shared/panels/index'
import { SimulatedPanel, type SimulatedPanelOptions } from './SimulatedPanel.js'
import { SerialTransport, type SerialPortLike } from './transports/SerialTransport.js'

// The shared ManualClock: the simulator answers on the next tick, so tests move it with
// advanceSettling(), which lets promise continuations (and MockBinding's nextTick writes)
// run between due timers.
import { settle } from '@svc/shared'

export { ManualClock, settle } from '@svc/shared'

/** The parts of @serialport/binding-mock's port binding the tests use. */
export interface MockPortBinding {
  readonly isOpen: boolean
  lastWrite: Buffer | null
  recording: Buffer
  emitData(data: Buffer | string): void
}

let mockSeq = 0

export interface MockSerialPanel {
  panel: SimulatedPanel
  transport: SerialTransport
  /** The mock port binding: `lastWrite`, `recording`, `emitData`. */
  binding: MockPortBinding
  path: string
  /** Bytes from the host to the panel. */
  send(bytes: Buffer | string): void
  /** Everything the panel wrote to the port that was not read yet. */
  takeWritten(): Buffer
  /** The next complete reply frame (by the protocol's reply framer), or null after `timeoutMs` of real time. */
  nextReply(timeoutMs?: number): Promise<Buffer | null>
  /**
   * Waits until every frame received so far has been answered and written.
   * With a ManualClock, advance it first when faults delay the answer.
   */
  idle(): Promise<void>
  close(): Promise<void>
}

/**
 * A simulated panel listening on a MockBinding serial port. Replies are read
 * back from the mock port's recording, so they went through the serial stack.
 */
export async function createMockSerialPanel(opts: SimulatedPanelOptions): Promise<MockSerialPanel> {
  const path = `/dev/mock-panel-${process.pid}-${++mockSeq}`
  SerialPortMock.binding.createPort(path, { echo: false, record: true })
  let stream: InstanceType<typeof SerialPortMock> | null = null
  const panel = new SimulatedPanel(opts)
  const transport = new SerialTransport(panel, {
    path,
    openPort: (o) => {
      stream = new SerialPortMock({ ...o, autoOpen: false })
      return stream as unknown as SerialPortLike
    },
  })
  await transport.start()
  const binding = (stream as unknown as { port: MockPortBinding }).port
  const framer: Framer | null = opts.protocol === 'raw' ? null : panelProtocols[opts.protocol].createReplyFramer()
  let offset = 0
  const frames: Buffer[] = []
  const pull = () => {
    const fresh = binding.recording.subarray(offset)
    offset = binding.recording.length
    if (framer && fresh.length) frames.push(...framer.push(fresh))
    return fresh
  }
  const sessionIdle = async () => {
    // bytes reach the panel through the stream's async read; then the answer queue; then the mock write
    await settle()
    await panel.idle()
    await settle()
  }
  return {
    panel,
    transport,
    binding,
    path,
    send: (bytes) => binding.emitData(Buffer.from(bytes)),
    takeWritten: () => {
      const fresh = binding.recording.subarray(offset)
      offset = binding.recording.length
      if (framer && fresh.length) frames.push(...framer.push(fresh))
      frames.length = 0
      return Buffer.from(fresh)
    },
    nextReply: async (timeoutMs = 1000) => {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        pull()
        const f = frames.shift()
        if (f) return f
        if (Date.now() >= deadline) return null
        await new Promise<void>((r) => setTimeout(r, 2))
      }
    },
    idle: sessionIdle,
    close: async () => {
      await transport.stop()
      panel.close()
    },
  }
}
