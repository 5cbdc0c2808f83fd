// Aedes' message emitter (mqemitter) with a concurrency limit queues what is published
// while that many messages are being delivered, and drains the queue by recursion: each
// message whose subscribers finish at once (the cloud's own `reported` subscription, a
// topic nobody follows such as the budget's drop topic) starts the next one on the same
// stack. A few thousand of them queued behind slower deliveries overflowed the stack
// ("Maximum call stack size exceeded"), which ended the process. Here real mqtt clients
// do that: one device floods `reported` (followed by the cloud) and `status` (over its
// budget: rerouted to a topic nobody follows) while the cloud keeps more than 100 QoS 1
// deliveries to another device in flight. The cloud must live through it and still serve.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { topics } from '@svc/shared/mqtt/index'
import { connectDevice, startCloud } from './link.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

const reported = JSON.stringify({ version: 1, playing: { source: 'none', contentKind: null, contentId: null }, at: '2026-06-01T12:00:00.000Z' })
const status = JSON.stringify({ status: 'online', at: '2026-06-01T12:00:00.000Z' })

t.test('a flood of messages that complete at once, queued behind slow deliveries, does not overflow the stack', async (t) => {
  const c = await startCloud(t)
  const { broker, presence } = servicesOf(c.running.app)
  const url = `mqtt://127.0.0.1:${c.running.mqttPort}`
  const listener = await connectDevice(t, url, await c.pair('Listener'), {}, false)
  await listener.client.subscribeAsync(topics.jobs(listener.screenId), { qos: 1 })
  const flooders = []
  for (let i = 0; i < 12; i++) flooders.push(await connectDevice(t, url, await c.pair(`Flooder ${i}`)))
  const flooder = flooders[0]!
  const crashed: unknown[] = []
  const onError = (e: unknown) => crashed.push(e)
  process.on('uncaughtException', onError)
  process.on('unhandledRejection', onError)
  t.teardown(() => void (process.off('uncaughtException', onError), process.off('unhandledRejection', onError)))

  // Keep over 100 deliveries in flight (each one is written on a later turn), topped up each turn.
  let flooding = true
  let inFlight = 0
  const busy = (async () => {
    while (flooding) {
      for (; inFlight < 130; inFlight++)
        broker
          .publish(topics.jobs(listener.screenId), Buffer.from('{}'), false)
          .catch(() => undefined)
          .finally(() => inFlight--)
      await new Promise((r) => setImmediate(r))
    }
  })()
  // Many devices at once: the messages of every socket read so far queue together.
  for (let k = 0; k < 600; k++)
    for (const f of flooders) f.client.publish(k % 2 ? topics.status(f.screenId) : topics.reported(f.screenId), k % 2 ? status : reported, { qos: 0 })
  // A broker whose emitter overflowed never acknowledges this (its queue is stuck): bounded wait.
  const acked = await Promise.race([
    new Promise<boolean>((resolve) => flooder.client.publish(topics.reported(flooder.screenId), reported, { qos: 1 }, () => resolve(true))),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), HANG_GUARD_MS).unref()),
  ])
  flooding = false
  await busy
  t.same(
    crashed.map((e) => String(e)),
    [],
    'no uncaught error',
  )
  t.ok(acked, `the flood was acknowledged (flooder connected: ${flooder.client.connected})`)
  if (!acked) return
  await presence.idle()
  // The broker still serves both devices.
  const got = new Promise<string>((resolve) => listener.client.on('message', (topic, payload) => String(payload).includes('last') && resolve(topic)))
  await broker.publish(topics.jobs(listener.screenId), Buffer.from('{"last":true}'), false)
  t.equal(await got, topics.jobs(listener.screenId))
  t.equal((await c.call('GET', `/v1/screens/${flooder.screenId}`)).body.data.reported?.version, 1, 'the flood was stored')
})
