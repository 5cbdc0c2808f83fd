// A stop does not wait on watchers: a real server with an open event stream (a console tab)
// drains by ending the stream at once with a retry hint (`retry:` and `stopping`), and the
// drain finishes without cutting connections at its timeout. Asserted on the order of what
// happens (the stream's end, then the drain's; no cut), never on a duration.
import t from 'tap'
import { startCloud } from '../devicelink/link.js'
import { bearer, openStream } from './sse.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

t.test('draining with an open event stream ends the stream first, with a retry hint, and never reaches the cut', async (t) => {
  const c = await startCloud(t)
  const s = await openStream(t, c.running.httpPort, bearer(c.apiKey))
  t.equal(s.status, 200)
  await s.next((m) => m.event === 'ready')

  const order: string[] = []
  const server = c.running.app.server
  const cut = server.closeAllConnections.bind(server)
  server.closeAllConnections = () => {
    order.push('connections cut at the drain timeout')
    cut()
  }
  void s.closed().then(() => order.push('stream ended'))
  // The timeout is a hang guard: reaching it is the failure this test is about.
  await c.running.drain(HANG_GUARD_MS)
  order.push('drained')
  await s.closed()
  t.same(order, ['stream ended', 'drained'], 'the stream ended before the drain finished, and nothing was cut')
  const stopping = s.messages.find((m) => m.event === 'stopping')
  t.same(stopping?.data, { retryMs: 1000 }, 'the client is told to come back, and when')
  t.match(s.body, /retry: 1000\nevent: stopping\n/, 'with the retry field an EventSource obeys')
})
