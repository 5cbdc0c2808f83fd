// The kiosk page's console, in a real browser: what the page's scripts say on the console
// (console.log/info/warn/error/debug), an uncaught error and an unhandled rejection reach the
// agent over the feed as console messages, cut to 2000 characters; at most 100 a minute,
// then one line saying how many were dropped (the page's clock is stepped by the test); a
// capture page sends none.
import t from 'tap'
import { PlayerServer, type ConsoleEvent } from '../../src/player/PlayerServer.js'
import { captureLog, until } from '../helpers.js'
import { launch, missingChromium } from './chromium.js'

const skip = missingChromium(t)

t.test("the page's console reaches the agent, bounded", { skip: skip ?? false }, async (t) => {
  const { page } = await launch(t)
  // The page's Date.now is the test's: a minute passes when the test says so.
  await page.evaluateOnNewDocument('{ window.__now = 1000000; Date.now = () => window.__now }')
  const server = new PlayerServer({ port: 0, log: captureLog().log })
  await server.start()
  t.after(() => server.stop())
  const heard: ConsoleEvent[] = []
  server.on('console', (e) => heard.push(e))
  const js = (expr: string) => page.evaluate(expr)

  await page.goto(`http://127.0.0.1:${server.port}/?capture=1`)
  await js("console.error('from a capture')")
  await page.goto(`http://127.0.0.1:${server.port}/`)
  t.ok(await until(5 * 60_000, () => (server.health.pages === 1 ? true : undefined)), 'the kiosk page connected')

  await js("console.log('hello', 42, { a: 1 }); console.warn('careful'); console.debug('detail'); console.info(new Error('as info').message)")
  await js("setTimeout(() => { throw new Error('kaboom') }, 0); Promise.reject(new Error('nobody caught me')); undefined")
  await js(`console.error('z'.repeat(5000))`)
  t.ok(await until(5 * 60_000, () => (heard.length >= 7 ? true : undefined)), `heard ${heard.length}`)
  t.notOk(
    heard.some((e) => e.message.includes('from a capture')),
    'a capture page says nothing',
  )
  t.match(heard.slice(0, 4), [
    { level: 'info', message: 'hello 42 {"a":1}' },
    { level: 'warn', message: 'careful' },
    { level: 'debug', message: 'detail' },
    { level: 'info', message: 'as info' },
  ])
  t.ok(
    heard.some((e) => e.level === 'error' && /^Uncaught Error: kaboom/.test(e.message)),
    'an uncaught error',
  )
  t.ok(
    heard.some((e) => e.level === 'error' && /^Unhandled rejection: Error: nobody caught me/.test(e.message)),
    'an unhandled rejection',
  )
  const long = heard.find((e) => e.message.startsWith('zzz'))
  t.equal(long?.message.length, 2000, 'cut to 2000 characters')
  t.ok(long?.message.endsWith('…'))

  // The rate: 100 a minute; the rest are counted and said once the minute is over.
  heard.length = 0
  await js('window.__now += 60000')
  await js("for (let i = 0; i < 150; i++) console.log('spam ' + i)")
  t.ok(await until(5 * 60_000, () => (heard.length >= 100 ? true : undefined)))
  await js('window.__now += 60000')
  await js("console.log('after the minute')")
  t.ok(await until(5 * 60_000, () => (heard.some((e) => e.message === 'after the minute') ? true : undefined)))
  t.equal(heard.filter((e) => e.message.startsWith('spam ')).length, 100, '100 of the 150 in the minute')
  t.match(heard.slice(-2), [
    { level: 'warn', message: '50 console messages dropped (over 100 a minute)' },
    { level: 'info', message: 'after the minute' },
  ])
})
