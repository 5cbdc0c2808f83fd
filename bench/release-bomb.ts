// A legitimate caller's latency while agent release uploads are zip bombs (not a test):
//   pnpm exec tsx bench/release-bomb.ts [--bombs=4] [--gib=2] [--requests=400]
//
// The product is started as `pnpm start` starts it (its CLI, file SQLite database). `bombs`
// uploads run one after another, each a gzip of a tar whose single entry announces `gib`
// GiB of zeros (members of 1 MiB of zeros, about 2 MB gzipped for 2 GiB), while a caller
// sends `requests` GET /v1/agent-releases one at a time with the owner key. The report is
// the caller's p50 / p99 / max in ms with and without the bombs, each bomb's answer and how
// long it took, and the cloud's RSS afterwards. The child process is killed at the end.
import { join } from 'node:path'
import zlib from 'node:zlib'
import { tarHeader as header } from '../cloud/test/fixtures/agentRelease.js'
import { call, cli, cloudEnv, f1, freePort, killAll, now, pct, rssOf, startCloud, stop, tempDir } from './lib/harness.js'

const arg = (name: string, def: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? def)
const BOMBS = arg('bombs', 4)
const GIB = arg('gib', 2)
const REQUESTS = arg('requests', 400)
const MiB = 1024 * 1024

function bomb(): Buffer {
  const zeros = zlib.gzipSync(Buffer.alloc(MiB), { level: 9 })
  return Buffer.concat([zlib.gzipSync(header('svc-agent/big', GIB * 1024 * MiB)), ...Array.from({ length: GIB * 1024 }, () => zeros)])
}

function form(bytes: Buffer): { raw: Buffer; contentType: string } {
  const b = 'svcbench'
  const raw = Buffer.concat([
    Buffer.from(`--${b}\r\nContent-Disposition: form-data; name="file"; filename="bomb.tar.gz"\r\nContent-Type: application/gzip\r\n\r\n`),
    bytes,
    Buffer.from(`\r\n--${b}\r\nContent-Disposition: form-data; name="signature"\r\n\r\n{}\r\n--${b}--\r\n`),
  ])
  return { raw, contentType: `multipart/form-data; boundary=${b}` }
}

async function latencies(base: string, apiKey: string, n: number, until?: () => boolean): Promise<number[]> {
  const out: number[] = []
  for (let i = 0; i < n || (until && !until()); i++) {
    const t0 = now()
    const a = await call(`${base}/v1/agent-releases`, { headers: { authorization: `Bearer ${apiKey}` } })
    if (a.status !== 200) throw new Error(`GET /v1/agent-releases: HTTP ${a.status}`)
    out.push(now() - t0)
    if (until?.()) break
  }
  return out.sort((a, b) => a - b)
}

const report = (what: string, xs: number[]) =>
  console.log(
    `${what.padEnd(28)} n=${String(xs.length).padStart(5)}  p50 ${f1(pct(xs, 50))} ms  p99 ${f1(pct(xs, 99))} ms  max ${f1(xs[xs.length - 1] ?? 0)} ms`,
  )

try {
  const dir = tempDir('svc-bench-bomb-')
  const env = cloudEnv(dir, await freePort(), await freePort(), { SVC_RATE_LIMIT: '1000000' })
  const { apiKey } = JSON.parse(await cli(env, ['bootstrap', '--workspace', 'Bench'])) as { apiKey: string }
  const cloud = await startCloud(env, join(dir, 'cloud.log'))
  const body = form(bomb())
  console.log(`bomb: ${(body.raw.length / MiB).toFixed(1)} MiB uploaded, ${GIB} GiB announced`)
  report('quiet', await latencies(cloud.base, apiKey, REQUESTS))
  let done = false
  const uploads = (async () => {
    for (let i = 0; i < BOMBS; i++) {
      const t0 = now()
      const a = await call(`${cloud.base}/v1/agent-releases`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': body.contentType },
        raw: body.raw,
      })
      console.log(`bomb ${i + 1}: HTTP ${a.status} in ${f1(now() - t0)} ms: ${String(a.body?.message ?? a.text).slice(0, 120)}`)
    }
    done = true
  })()
  const under = await latencies(cloud.base, apiKey, 0, () => done)
  await uploads
  report('while bombs are uploaded', under)
  console.log(`cloud RSS after: ${(rssOf(cloud.proc.pid!) / MiB).toFixed(0)} MiB`)
  await stop(cloud.proc)
} finally {
  killAll()
}
