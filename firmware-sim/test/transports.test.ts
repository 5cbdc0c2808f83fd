import t from 'tap'
import net from 'node:net'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { SerialPort } from 'serialport'
import WebSocket from 'ws'
import { SamsungMdc, PjLink, createMdcReplyFramer, createPjLinkReplyFramer, type Framer } from '@svc/shared/panels/index'
import { hexPreview } from '@svc/shared/serial/index'
import { HANG_GUARD_MS, socat, toolTest } from '@svc/shared/testing'
import { FirmwareSim } from '../src/FirmwareSim.js'

/** Reads from a stream until the framer yields a frame. */
function nextFrame(stream: NodeJS.EventEmitter, framer: Framer, timeoutMs = HANG_GUARD_MS): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stream.off('data', onData)
      reject(new Error(`no whole frame from the stream within ${timeoutMs / 60_000} minutes`))
    }, timeoutMs)
    const onData = (chunk: Buffer) => {
      const [frame] = framer.push(chunk)
      if (frame) {
        clearTimeout(timer)
        stream.off('data', onData)
        resolve(frame)
      }
    }
    stream.on('data', onData)
  })
}

t.test('TCP: real socket, port 0, MDC power on, unplug drops the connection', async (t) => {
  const sim = new FirmwareSim({ protocol: 'samsung-mdc', tcp: { port: 0 } })
  t.after(() => sim.stop())
  const info = await sim.start()
  t.ok(info.tcpPort! > 0, 'bound port reported')
  t.equal(info.ptyPath, null)
  const socket = net.connect(info.tcpPort!, '127.0.0.1')
  t.after(() => socket.destroy())
  await once(socket, 'connect')
  const framer = createMdcReplyFramer()
  socket.write(SamsungMdc.powerOn(1))
  t.equal(hexPreview(await nextFrame(socket, framer)), 'AA FF 01 03 41 11 01 56')
  t.equal(sim.panel.state.power, 'on')
  const closed = once(socket, 'close')
  await sim.unplug()
  await closed
  // the listener stays up: a reconnecting host is served again
  const again = net.connect(info.tcpPort!, '127.0.0.1')
  t.after(() => again.destroy())
  await once(again, 'connect')
  again.write(SamsungMdc.powerQuery(1))
  t.match(SamsungMdc.parseReply(await nextFrame(again, createMdcReplyFramer())), { power: 'on' })
})

t.test('TCP: PJLink greets every connection', async (t) => {
  const sim = new FirmwareSim({ protocol: 'pjlink', tcp: { port: 0 } })
  t.after(() => sim.stop())
  const { tcpPort } = await sim.start()
  const socket = net.connect(tcpPort!, '127.0.0.1')
  t.after(() => socket.destroy())
  const framer = createPjLinkReplyFramer()
  t.equal((await nextFrame(socket, framer)).toString('latin1'), 'PJLINK 0\r')
  socket.write(PjLink.powerOn(1))
  t.equal((await nextFrame(socket, framer)).toString('latin1'), '%1POWR=OK\r')
})

t.test('TCP: a port in use is a start error, not a crash', async (t) => {
  const blocker = net.createServer()
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r))
  t.after(() => blocker.close())
  const port = (blocker.address() as net.AddressInfo).port
  const sim = new FirmwareSim({ protocol: 'lg', tcp: { port }, web: { port: 0 } })
  await t.rejects(sim.start(), { code: 'EADDRINUSE' })
  t.throws(() => new FirmwareSim({ protocol: 'lg', tcp: { port: 70000 } }), TypeError)
})

toolTest(t, socat, 'pty via socat: open the printed path with serialport, MDC power on, ACK; unplug kills socat', async (t) => {
  const link = `${t.testdir()}/panel`
  const sim = new FirmwareSim({ protocol: 'samsung-mdc', pty: { link } })
  t.after(() => sim.stop())
  const info = await sim.start()
  t.equal(info.ptyPath, link)
  t.ok(existsSync(link), 'socat made the link')
  const host = new SerialPort({ path: info.ptyPath!, baudRate: 9600, autoOpen: false })
  await new Promise<void>((resolve, reject) => host.open((err) => (err ? reject(err) : resolve())))
  t.after(() => (host.isOpen ? new Promise<void>((r) => host.close(() => r())) : undefined))
  const framer = createMdcReplyFramer()
  const reply = nextFrame(host, framer)
  host.write(SamsungMdc.powerOn(1))
  t.equal(hexPreview(await reply), 'AA FF 01 03 41 11 01 56')
  t.equal(sim.panel.state.power, 'on')

  const pid = sim.pty!.pid!
  t.ok(pid > 0)
  const closes: ((Error & { disconnected?: boolean }) | undefined)[] = []
  const disconnected = new Promise<void>((resolve) =>
    host.on('close', (err?: Error & { disconnected?: boolean }) => {
      closes.push(err)
      if (err?.disconnected) resolve()
    }),
  )
  await sim.unplug()
  t.notOk(existsSync(link), 'link removed')
  t.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, 'socat is gone')
  // a pty reports the hang-up on the next write, as a close whose error says disconnected
  host.on('error', () => {})
  host.write(SamsungMdc.powerQuery(1))
  await disconnected
  t.equal(closes.at(-1)?.disconnected, true, 'the host sees a disconnect, as with a pulled cable')
})

t.test('web page: HTML, and a WebSocket that receives state updates', async (t) => {
  const sim = new FirmwareSim({ protocol: 'lg', tcp: { port: 0 }, web: { port: 0 } })
  t.after(() => sim.stop())
  const info = await sim.start()
  const page = await fetch(info.webUrl!)
  t.equal(page.status, 200)
  t.match(await page.text(), /Simulated panel/)
  const ws = new WebSocket(`${info.webUrl!.replace('http', 'ws')}ws`)
  t.after(() => ws.terminate())
  const messages: { type: string; state?: { power: string; volume: number } }[] = []
  const waitFor = (pred: (m: (typeof messages)[number]) => boolean) =>
    new Promise<(typeof messages)[number]>((resolve) => {
      const found = messages.find(pred)
      if (found) return resolve(found)
      const onMsg = () => {
        const m = messages.find(pred)
        if (m) {
          ws.off('message', onMsg)
          resolve(m)
        }
      }
      ws.on('message', onMsg)
    })
  ws.on('message', (data: Buffer) => messages.push(JSON.parse(data.toString())))
  const first = await waitFor((m) => m.type === 'state')
  t.match(first.state, { power: 'off', volume: 20 })
  // a command over TCP changes the panel; the page hears about it
  const socket = net.connect(info.tcpPort!, '127.0.0.1')
  t.after(() => socket.destroy())
  await once(socket, 'connect')
  socket.write('ka 01 01\r')
  const update = await waitFor((m) => m.type === 'state' && m.state?.power === 'on')
  t.equal(update.state!.power, 'on')
  t.ok(await waitFor((m) => m.type === 'trace'), 'traces are streamed too')
})
