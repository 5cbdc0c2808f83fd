// The metrics listener: GET /metrics (Prometheus text) on its own port and address
// (SVC_METRICS_PORT, SVC_METRICS_HOST), apart from the API so it is never exposed with it.
// Nothing else is served: another path answers 404, another method 405.
import http from 'node:http'
import type { Metrics } from './Metrics.js'

export interface MetricsListener {
  port: number
  close(): Promise<void>
}

export async function listenMetrics(metrics: Metrics, port: number, host: string, log: { error(obj: object, msg: string): void }): Promise<MetricsListener> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0]
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found: metrics are at /metrics\n')
      return
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('method not allowed\n')
      return
    }
    metrics.scrape().then(
      (text) => {
        res.writeHead(200, { 'content-type': metrics.contentType, 'cache-control': 'no-store' })
        res.end(req.method === 'HEAD' ? undefined : text)
      },
      (err: unknown) => {
        log.error({ err }, 'metrics scrape failed')
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics could not be read; see the cloud log\n')
      },
    )
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  return {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
