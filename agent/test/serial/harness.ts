// Test wiring: a DisplayDriver port factory backed by firmware-sim's MockBinding panel
// harness. Host → panel bytes go in through the panel's mock port (emitData); panel →
// host bytes are taken where the panel writes them, chunk by chunk, so split replies stay
// split. `unplug()` closes the port the way serialport reports an unplug. With a
// ManualClock shared by the panel and the driver, `drive()` runs a command to its end by
// moving the clock from one due timer to the next once the bytes in flight have landed.
import { EventEmitter } from 'node:events'
import { type ManualClock, settle, systemClock } from '@svc/shared'
import { createMockSerialPanel, type MockSerialPanel } from '@svc/firmware-sim/testing'
import type { SimulatedPanelOptions } from '@svc/firmware-sim'
import type { PanelPort, PanelPortFactory } from '../../src/serial/index.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

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
    this.ctl.sentAt.push(this.ctl.clock.now().getTime())
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
  /** When each write of `sent` was made, on the panel's clock (ms since the epoch). */
  sentAt: number[]
  clock: { now(): Date }
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
    sentAt: [],
    clock: opts.clock ?? systemClock,
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

/**
 * Resolves with `p` once it settles, moving `clock` meanwhile: the mock port's bytes travel
 * on promise jobs and nextTicks, so once those have run and `p` is still pending, the clock
 * goes to its next due timer (a reply gap, a silence, a timeout, a retry delay, a reopen).
 * With no timer due either, it waits on real events (a hang guard, HANG_GUARD_MS, names `what`).
 */
export async function drive<T>(clock: ManualClock, p: Promise<T>, what = 'the command'): Promise<T> {
  let settled = false
  p.then(
    () => (settled = true),
    () => (settled = true),
  )
  const giveUp = Date.now() + HANG_GUARD_MS
  for (;;) {
    await settle(20)
    if (settled) return p
    let next: number | undefined
    for (const { at } of clock.timers.values()) if (next === undefined || at < next) next = at
    if (next !== undefined) await clock.advanceSettling(Math.max(0, next - clock.nowMs))
    else if (Date.now() > giveUp) throw new Error(`gave up after ${HANG_GUARD_MS / 60_000} minutes waiting for ${what} (no timer due on the clock)`)
    else await new Promise((r) => setTimeout(r, 5))
  }
}
