// Prometheus metrics over real sockets: the cloud started with SVC_METRICS_PORT serves
// GET /metrics on its own listener, scraped with fetch and parsed as Prometheus text; real
// MQTT devices connecting move the connection and screen gauges; requests are counted by
// route template, never by raw URL; on two instances of one cloud only the holder of the
// metrics lease reports the cloud-wide gauges, and another takes them over when it stops.
import t from 'tap'
import { servicesOf } from '../../src/app.js'
import { testConfig } from '../../src/config.js'
import { StartupError, startServer } from '../../src/server.js'
import { scrape, samples, value } from '../fixtures/prometheus.js'
import { connectDevice, droppedAtBroker, startCloud, tempDir } from './link.js'

const METRICS = { metricsPort: 0, metricsHost: '127.0.0.1' }

t.test('the metrics listener: Prometheus text with the process defaults; nothing else served; off without SVC_METRICS_PORT', async (t) => {
  const c = await startCloud(t, { config: METRICS })
  const port = c.running.metricsPort
  if (port === null) throw new Error('no metrics listener')
  t.not(port, c.running.httpPort, 'on a port of its own')
  const s = await scrape(port)
  t.equal(s.status, 200)
  t.match(s.contentType, /^text\/plain; version=0\.0\.4/, 'the Prometheus text format')
  for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes'])
    t.ok(s.families.has(name), `process default ${name}`)
  // The descriptors counted off the scrape's path (the first scrape waits for the first count).
  t.ok((value(s, 'process_open_fds') ?? 0) > 0, 'open descriptors counted')
  t.ok((value(s, 'process_open_fds_age_seconds') ?? -1) >= 0, 'with how long ago')
  t.notOk(s.families.has('nodejs_active_handles'), 'no handle walk per scrape (nodejs_active_resources says it)')
  t.ok(s.families.has('nodejs_active_resources'))
  t.equal(s.families.get('svc_http_request_duration_seconds')?.type, 'HISTOGRAM')
  t.equal(s.families.get('svc_webhook_deliveries_total')?.type, 'COUNTER')
  t.equal(value(s, 'svc_webhook_deliveries_total', { outcome: 'delivered' }), 0, 'webhook outcomes start at 0')
  t.equal(value(s, 'svc_metrics_cloud_wide'), 1, 'the only instance reports the cloud-wide gauges')
  t.equal(value(s, 'svc_outbox_pending', { scope: 'cloud' }), 0, 'the outbox is empty')
  t.equal(value(s, 'svc_outbox_lag_seconds', { scope: 'cloud' }), 0, 'and has no lag')

  // Worker runs: a run of the cast-expiry worker is counted with its end.
  const before = value(s, 'svc_worker_runs_total', { worker: 'cast expiry', outcome: 'ok' })
  t.equal(before, 0, 'no run yet (the test config schedules none)')
  t.equal(value(s, 'svc_worker_last_run_timestamp_seconds', { worker: 'cast expiry' }), undefined, 'no last run before the first')
  await servicesOf(c.running.app).castExpiry.runOnce()
  const after = await scrape(port)
  t.equal(value(after, 'svc_worker_runs_total', { worker: 'cast expiry', outcome: 'ok' }), 1, 'one run counted')
  t.ok((value(after, 'svc_worker_last_run_timestamp_seconds', { worker: 'cast expiry' }) ?? 0) > 0, 'with when it ended')

  t.equal((await scrape(port, '/')).status, 404, 'another path: 404')
  t.equal((await scrape(port, '/v1/screens')).status, 404, 'the API is not on the metrics port')
  t.equal((await scrape(port, '/metrics', 'POST')).status, 405, 'another method: 405')

  const off = await startCloud(t)
  t.equal(off.running.metricsPort, null, 'without SVC_METRICS_PORT there is no listener')

  // A port in use stops the start with one sentence naming the setting, and nothing stays open.
  await t.rejects(
    startServer(testConfig({ dataDir: tempDir(t), host: '127.0.0.1', metricsPort: port, metricsHost: '127.0.0.1' })),
    new StartupError(
      `Metrics port ${port} is in use on 127.0.0.1 (SVC_METRICS_PORT): stop the program that holds it, or set SVC_METRICS_PORT to a free port (0 = any)`,
    ),
  )
})

t.test('real devices connecting move the MQTT connections and the screens by status; requests counted by route template', async (t) => {
  const c = await startCloud(t, { config: METRICS })
  const port = c.running.metricsPort!
  const first = await scrape(port)
  t.equal(value(first, 'svc_mqtt_connections'), 0, 'no device connected')
  const published0 = value(first, 'svc_desired_states_published_total') ?? Number.NaN

  const a = await c.pair('Lobby')
  const b = await c.pair('Bar')
  const paired = await scrape(port)
  t.equal(value(paired, 'svc_screens', { status: 'offline', scope: 'cloud' }), 2, 'two paired screens, offline')
  t.equal(value(paired, 'svc_screens', { status: 'online', scope: 'cloud' }), undefined, 'none online')

  const url = `mqtt://127.0.0.1:${c.running.mqttPort}`
  const devA = await connectDevice(t, url, a)
  const devB = await connectDevice(t, url, b)
  await devA.next((s) => s.version >= 1)
  await devB.next((s) => s.version >= 1)
  await servicesOf(c.running.app).presence.idle()
  const online = await scrape(port)
  t.equal(value(online, 'svc_mqtt_connections'), 2, 'two devices connected')
  t.equal(value(online, 'svc_screens', { status: 'online', scope: 'cloud' }), 2, 'two screens online')
  t.ok((value(online, 'svc_desired_states_published_total') ?? 0) >= published0 + 2, 'their desired states were published')

  await devB.client.endAsync(true)
  t.ok(await droppedAtBroker(c, b.screenId), 'the broker saw the device go')
  t.equal(value(await scrape(port), 'svc_mqtt_connections'), 1, 'one device connected')

  // A path with an id: counted under its template, and no label carries the id.
  t.equal((await c.call('GET', `/v1/screens/${a.screenId}`)).status, 200)
  t.equal((await c.call('GET', '/v1/screens/scr_01JNOTASCREEN0000000000000')).status, 404)
  t.equal((await c.call('GET', `/v1/no-such-thing/${a.screenId}`)).status, 404)
  const http = await scrape(port)
  t.equal(value(http, 'svc_http_requests_total', { method: 'GET', route: '/v1/screens/:id', status_class: '2xx' }), 1, 'the 200, by template')
  t.equal(value(http, 'svc_http_requests_total', { method: 'GET', route: '/v1/screens/:id', status_class: '4xx' }), 1, 'the 404, by template')
  t.ok((value(http, 'svc_http_requests_total', { method: 'GET', route: 'unmatched', status_class: '4xx' }) ?? 0) >= 1, 'a path no route matches: unmatched')
  t.equal(value(http, 'svc_http_request_duration_seconds_count', { route: '/v1/screens/:id', status_class: '2xx' }), 1, 'its duration observed once')
  t.equal(value(http, 'svc_http_request_duration_seconds_bucket', { route: '/v1/screens/:id', status_class: '2xx', le: '+Inf' }), 1, 'in the +Inf bucket')
  const carriesId = http.text.split('\n').filter((line) => line.includes(a.screenId) || line.includes('NOTASCREEN'))
  t.same(carriesId, [], 'no metric line carries a raw URL')
})

t.test('two instances of one cloud: the cloud-wide gauges come from the metrics lease holder alone; another takes over when it stops', async (t) => {
  const a = await startCloud(t, { fileDb: true, config: METRICS })
  await a.pair('Lobby')
  const b = await startServer(testConfig({ dataDir: tempDir(t), dbFile: servicesOf(a.running.app).config.dbFile, host: '127.0.0.1', ...METRICS }), {
    clock: a.clock,
    content: a.content,
  })
  t.after(() => b.close())

  const fromA = await scrape(a.running.metricsPort!)
  t.equal(value(fromA, 'svc_metrics_cloud_wide'), 1, 'the first instance scraped takes the lease')
  t.equal(value(fromA, 'svc_screens', { status: 'offline', scope: 'cloud' }), 1, 'and reports the screens')
  const fromB = await scrape(b.metricsPort!)
  t.equal(value(fromB, 'svc_metrics_cloud_wide'), 0, 'the other does not hold it')
  t.same(samples(fromB, 'svc_screens'), [], 'and reports no screens')
  t.same(samples(fromB, 'svc_outbox_pending'), [], 'nor the outbox')
  t.equal(value(fromB, 'svc_mqtt_connections'), 0, 'its own gauges it reports')

  // While A is scraped it keeps the lease; stopped, it gives it back and B reports.
  t.equal(value(await scrape(a.running.metricsPort!), 'svc_metrics_cloud_wide'), 1, 'A renews it')
  await a.running.close()
  const taken = await scrape(b.metricsPort!)
  t.equal(value(taken, 'svc_metrics_cloud_wide'), 1, 'B holds it once A has stopped')
  t.equal(value(taken, 'svc_screens', { status: 'offline', scope: 'cloud' }), 1, 'and reports the screens')
})
