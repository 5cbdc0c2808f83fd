// Test wiring: a DisplayDriver port factory backed by firmware-sim's MockBinding panel
// harness. Host → panel bytes go in through the panel's mock port (emitData); panel →
// host bytes are taken where the panel writes them, chunk by chunk, so split replies stay
// split. `unplug()` closes the port the way serialport reports an unplug.
import { EventEmitter } from 'node:events'
import { createMockSerialPanel, type MockSerialPanel } from '@svc/firmware-sim/testing'
import type { SimulatedPanelOptions } from '@svc/firmware-sim'
import type { PanelPort, PanelPortFactory } from '../../src/serial/index.js'

class BridgePort extends EventEmitter implements PanelPort {
  isOpen = false
  constructor(private readonly ctl: MockLine) {
    super()
  }
  open(cb: (err: Error | null) => void): void {
    setImmediate(() => {
      if (this.ctl.refuseOpen) return cb(Object.assign(new Error('cannot open: no such device'), { code: 'ENOENT' }))
      this.isOpen = true
      this.ctl.current = this
      this.ctl.opens++
      cb(null)
    })
  }
  close(cb: (err: Error | null) => void): void {
    this.isOpen = false
    setImmediate(() => {
      this.emit('close')
      cb(null)
    })
  }
  write(data: Buffer, cb?: (err: Error | null | undefined) => void): boolean {
    if (!this.isOpen) {
      cb?.(new Error('port is not open'))
      return false
    }
    this.ctl.sent.push(Buffer.from(data))
    this.ctl.mock.send(data)
    setImmediate(() => cb?.(null))
    return true
  }
}

export interface MockLine {
  mock: MockSerialPanel
  factory: PanelPortFactory
  current: BridgePort | null
  refuseOpen: boolean
  opens: number
  /** Everything the host wrote. */
  sent: Buffer[]
  unplug(): void
  close(): Promise<void>
}

export async function mockLine(opts: SimulatedPanelOptions): Promise<MockLine> {
  const mock = await createMockSerialPanel(opts)
  const ctl: MockLine = {
    mock,
    current: null,
    refuseOpen: false,
    opens: 0,
    sent: [],
    factory: () => new BridgePort(ctl),
    unplug() {
      const p = ctl.current
      if (!p?.isOpen) return
      p.isOpen = false
      p.emit('close', Object.assign(new Error('device disconnected'), { disconnected: true }))
    },
    close: () => mock.close(),
  }
  const binding = mock.binding as unknown as { write(b: Buffer): Promise<void> }
  const write = binding.write.bind(binding)
  binding.write = async (b: Buffer) => {
    await write(b)
    const p = ctl.current
    if (p?.isOpen) p.emit('data', Buffer.from(b))
  }
  return ctl
}
