// How a domain plugin owns an interval worker: the worker is named on `app.workers` (tests
// drive it with runOnce()), started in the plugin's own onReady and stopped in its onClose.
// Fastify runs onClose hooks last-registered first, and app.ts adds its teardown (broker,
// database) before it registers the domain plugins, so every worker has stopped before the
// broker and the database close.
import type { FastifyInstance } from 'fastify'
import type { IntervalWorker } from './Worker.js'

export type WorkerName = 'status' | 'housekeeper' | 'castExpiry' | 'webhooks' | 'alerts' | 'mediaUrlRefresh' | 'agentRollouts'

export function ownWorker<W extends IntervalWorker>(app: FastifyInstance, name: WorkerName, worker: W): W {
  app.workers[name] = worker
  app.addHook('onReady', async () => worker.start())
  app.addHook('onClose', async () => {
    await worker.stop()
  })
  return worker
}
