// The kiosk page's sign of life, in a real browser: the page says `{type:"alive"}` over its
// feed from its main thread (every 10 s; shortened here by scaling the page's own timers),
// so the agent's `/health` hears it while the page runs. A capture page says nothing.
import t from 'tap'
import { PlayerServer } from '../../src/player/PlayerServer.js'
import { FakeTime, captureLog, until } from '../helpers.js'
import { launch, missingChromium } from './chromium.js'

const skip = missingChromium(t)

t.test('the page keeps telling the agent it is alive', { skip: skip ?? false }, async (t) => {
  const { page } = await launch(t)
  // The page's 10 s interval runs every 100 ms: the page's own code, on a faster clock.
  await page.evaluateOnNewDocument('{ const si = window.setInterval; window.setInterval = (fn, ms, ...a) => si(fn, ms / 100, ...a) }')
  const time = new FakeTime('2030-01-01T00:00:00Z')
  const server = new PlayerServer({ port: 0, log: captureLog().log, clock: time })
  await server.start()
  t.after(() => server.stop())

  await page.goto(`http://127.0.0.1:${server.port}/?capture=1`)
  time.advance(60_000)
  await new Promise((r) => setTimeout(r, 500))
  t.same(server.health, { ok: true, pages: 0, pageSilentMs: 60_000 }, 'a capture page is silent')

  await page.goto(`http://127.0.0.1:${server.port}/`)
  t.ok(await until(5 * 60_000, () => (server.health.pages === 1 ? true : undefined)), 'the kiosk page connects')
  for (const round of [1, 2, 3]) {
    time.advance(30_000)
    t.ok(await until(5 * 60_000, () => (server.health.pageSilentMs === 0 ? true : undefined)), `round ${round}: 30 s later it has spoken again`)
  }
})
