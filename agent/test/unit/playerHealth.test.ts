// The player page's `/health` answer, through real HTTP and a real WebSocket: how many kiosk
// pages are connected and how long since one last spoke, on the injected clock. A capture
// page (`?capture=1`) is not a kiosk page.
import t from 'tap'
import WebSocket from 'ws'
import { PlayerServer, type PlayerHealth } from '../../src/player/PlayerServer.js'
import { FakeTime, captureLog, until } from '../helpers.js'

t.test('/health counts kiosk pages and the time since one last spoke', async (t) => {
  const time = new FakeTime('2030-01-01T00:00:00Z')
  const server = new PlayerServer({ port: 0, log: captureLog().log, clock: time })
  await server.start()
  t.after(() => server.stop())
  const base = `http://127.0.0.1:${server.port}`
  const health = async (): Promise<PlayerHealth> => {
    const res = await fetch(`${base}/health`)
    t.equal(res.headers.get('cache-control'), 'no-store')
    return (await res.json()) as PlayerHealth
  }
  t.same(await health(), { ok: true, pages: 0, pageSilentMs: 0 }, 'just started')
  time.advance(5000)
  t.same(await health(), { ok: true, pages: 0, pageSilentMs: 5000 }, 'no page yet: silent since the start')

  const connect = async (query = '') => {
    const ws = new WebSocket(`ws://127.0.0.1:${server.port}/feed${query}`)
    t.after(() => ws.terminate())
    await new Promise((r, j) => ws.once('open', r).once('error', j))
    return ws
  }
  const capture = await connect('?capture=1')
  t.same(await health(), { ok: true, pages: 0, pageSilentMs: 5000 }, 'a capture page is not a kiosk page')
  capture.close()

  const kiosk = await connect()
  t.ok(await until(5 * 60_000, async () => ((await health()).pages === 1 ? true : undefined)))
  t.same(await health(), { ok: true, pages: 1, pageSilentMs: 0 }, 'a page connected: heard now')
  time.advance(25_000)
  t.same(await health(), { ok: true, pages: 1, pageSilentMs: 25_000 }, 'connected but silent')
  kiosk.send('{"type":"alive"}')
  t.ok(await until(5 * 60_000, async () => ((await health()).pageSilentMs === 0 ? true : undefined)), 'it spoke: heard again')
  time.advance(1000)
  kiosk.close()
  t.ok(await until(5 * 60_000, async () => ((await health()).pages === 0 ? true : undefined)), 'it went away')
  t.same(await health(), { ok: true, pages: 0, pageSilentMs: 1000 })
})
