// The simulator's live page: opened after traffic, it shows that traffic (replayed,
// oldest first, up to TRACE_REPLAY messages), and the page draws text only (no
// character an emoji font would be needed for).
import t from 'tap'
import net from 'node:net'
import { once } from 'node:events'
import WebSocket from 'ws'
import { FirmwareSim } from '../src/FirmwareSim.js'
import { TRACE_REPLAY } from '../src/WebView.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

type Msg = { type: string; direction?: string; hex?: string }

async function collect(url: string, until: (ms: Msg[]) => boolean, ms = HANG_GUARD_MS): Promise<Msg[]> {
  const ws = new WebSocket(url)
  const messages: Msg[] = []
  ws.on('message', (d: Buffer) => messages.push(JSON.parse(d.toString())))
  const end = Date.now() + ms
  while (!until(messages) && Date.now() < end) await new Promise((r) => setTimeout(r, 20))
  ws.terminate()
  return messages
}

t.test('a page opened after the traffic gets it replayed, oldest first, at most TRACE_REPLAY messages', async (t) => {
  const sim = new FirmwareSim({ protocol: 'lg', tcp: { port: 0 }, web: { port: 0 } })
  t.after(() => sim.stop())
  const info = await sim.start()
  const socket = net.connect(info.tcpPort!, '127.0.0.1')
  t.after(() => socket.destroy())
  await once(socket, 'connect')
  socket.write('ka 01 01\r')
  await once(socket, 'data')
  const wsUrl = `${info.webUrl!.replace('http', 'ws')}ws`

  const late = await collect(wsUrl, (ms) => ms.filter((m) => m.type === 'trace').length >= 2)
  t.equal(late[0]?.type, 'state', 'the state first')
  const traces = late.filter((m) => m.type === 'trace')
  t.same(
    traces.map((m) => [m.direction, m.hex]),
    [
      ['rx', '6B 61 20 30 31 20 30 31 0D'],
      ['tx', '61 20 30 31 20 4F 4B 30 31 78'],
    ],
    'the command and the reply sent before the page was opened',
  )

  // the buffer keeps the newest TRACE_REPLAY messages
  for (let i = 0; i < TRACE_REPLAY; i++) {
    socket.write(`kf 01 ${(i % 100).toString(16).padStart(2, '0')}\r`)
    await once(socket, 'data')
  }
  const full = await collect(wsUrl, (ms) => ms.filter((m) => m.type === 'trace').length >= TRACE_REPLAY)
  const replayed = full.filter((m) => m.type === 'trace')
  t.equal(replayed.length, TRACE_REPLAY)
  t.notOk(
    replayed.some((m) => m.hex === '6B 61 20 30 31 20 30 31 0D'),
    'the oldest fell out',
  )
  t.equal(replayed.at(-1)?.direction, 'tx', 'ends with the last reply')
})

t.test('the page needs no emoji font: only ASCII and common punctuation', async (t) => {
  const sim = new FirmwareSim({ protocol: 'samsung-mdc', web: { port: 0 } })
  t.after(() => sim.stop())
  const info = await sim.start()
  const html = await (await fetch(info.webUrl!)).text()
  const wide = [...html].filter((c) => c.codePointAt(0)! >= 0x2190)
  t.same(wide, [], 'no arrows, symbols, dingbats or emoji')
  t.notMatch(html, /🔇|🔊/)
})
