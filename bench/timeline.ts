// Timeline, preview and drift at fleet size (not a test): the product against a bare
// Fastify route, each in its own process, requests from a third.
//   pnpm exec tsx bench/timeline.ts [--screens=10000] [--rounds=50] [--page=500]
//
// Product: the cloud started as `pnpm start` starts it (its CLI, file SQLite database, real
// content library), S screens paired through the API as devices pair, one real PNG uploaded,
// a playlist, and a schedule of four dayparts on different weekdays (about 30 changes a
// week) assigned to every screen with bulk assignments. Measured, each as wall time seen by
// the client on loopback, beside the bare route's in the same run:
//   (a) GET /v1/screens/<id>/timeline over 7 days, one request at a time, R screens;
//   (b) POST /v1/timeline/preview of a change to that schedule (its lunch rule moved), every
//       page of --page=500 screens until the last: the whole fleet's before and after;
//   (c) GET /v1/screens?limit=100, one at a time (a kept page: the path drift must not slow).
// Baseline: bench/lib/bare-fastify.ts, GET / one request at a time (the HTTP round trip).
import { join } from 'node:path'
import {
  call,
  cli,
  cloudEnv,
  expect,
  f1,
  freePort,
  killAll,
  loadAvg,
  now,
  pairMany,
  pct,
  startCloud,
  stop,
  tempDir,
  uploadImage,
  startBareFastify,
} from './lib/harness.js'

const arg = (name: string, def: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? def)
const S = arg('screens', 10_000)
const R = arg('rounds', 50)
const PAGE = arg('page', 500)

const median = (xs: number[]) =>
  pct(
    [...xs].sort((a, b) => a - b),
    50,
  )
const p90 = (xs: number[]) =>
  pct(
    [...xs].sort((a, b) => a - b),
    90,
  )

async function timed(n: number, f: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = []
  for (let i = 0; i < n; i++) {
    const t0 = now()
    await f(i)
    out.push(now() - t0)
  }
  return out
}

async function main(): Promise<void> {
  const dir = tempDir('svc-bench-timeline-')
  try {
    const { proc: bare, port: bport } = await startBareFastify()
    const bareUrl = `http://127.0.0.1:${bport}/`
    await timed(200, () => call(bareUrl)) // warm-up

    const env = cloudEnv(join(dir, 'data'), await freePort(), await freePort(), { SVC_RATE_LIMIT: '100000000', SVC_LOG_LEVEL: 'warn' })
    const { apiKey } = JSON.parse(await cli(env, ['bootstrap', '--workspace', 'Bench'])) as { apiKey: string }
    const cloud = await startCloud(env, join(dir, 'cloud.log'))
    const auth = { authorization: `Bearer ${apiKey}` }
    const api = (method: string, path: string, body?: unknown) => call(cloud.base + path, { method, headers: auth, ...(body !== undefined ? { body } : {}) })

    const t0 = now()
    const screens = await pairMany(cloud.base, apiKey, S, 16, (n) => console.log(`paired ${n}`))
    console.log(`${S} screens paired in ${f1((now() - t0) / 1000)} s`)
    const media = await uploadImage(cloud.base, apiKey)
    const playlist = expect(await api('POST', '/v1/playlists', { name: 'Lunch', items: [{ kind: 'media', id: media }] }), 201, 'playlist').body.data.id
    const rule = (id: string, days: number[], start: string, end: string, priority = 10) => ({
      id,
      priority,
      days,
      start,
      end,
      content: { kind: 'playlist', id: playlist },
    })
    const rules = [
      rule('breakfast', [1, 2, 3, 4, 5], '07:00', '10:30'),
      rule('lunch', [1, 2, 3, 4, 5, 6], '11:30', '14:00'),
      rule('afternoon', [1, 2, 3, 4, 5], '15:00', '17:00', 5),
      rule('weekend', [0, 6], '09:00', '20:00', 1),
    ]
    const schedule = expect(
      await api('POST', '/v1/schedules', { name: 'Week', timezone: 'Europe/Berlin', rules, fallback: { kind: 'media', id: media } }),
      201,
      'schedule',
    ).body.data.id
    for (let i = 0; i < S; i += 1000) {
      const ids = screens.slice(i, i + 1000).map((s) => s.screenId)
      expect(await api('POST', '/v1/screens/bulk-assign', { screenIds: ids, contentKind: 'schedule', contentId: schedule }), 200, 'bulk-assign')
    }
    const from = new Date(Date.now() + 3_600_000).toISOString()
    const to7 = new Date(Date.parse(from) + 7 * 86_400_000).toISOString()

    // (a) one screen's week
    const ids = screens.map((s) => s.screenId)
    const first = expect(await api('GET', `/v1/screens/${ids[0]}/timeline?from=${from}&to=${to7}`), 200, 'timeline').body.data
    await timed(10, (i) => api('GET', `/v1/screens/${ids[i]}/timeline?from=${from}&to=${to7}`))
    const tl = await timed(R, (i) => api('GET', `/v1/screens/${ids[(i * 7919) % S]}/timeline?from=${from}&to=${to7}`))
    const bareTimes = await timed(R, () => call(bareUrl))

    // (b) the fleet's preview of a schedule change, page by page
    const change = { rules: rules.map((r) => (r.id === 'lunch' ? { ...r, start: '12:00', end: '15:00' } : r)) }
    const pages: number[] = []
    let changed = 0
    let seen = 0
    const started = now()
    for (let cursor: string | null = null; ; ) {
      const t1 = now()
      const body: Record<string, unknown> = {
        request: { method: 'PATCH', path: `/v1/schedules/${schedule}`, body: change },
        limit: PAGE,
        ...(cursor ? { cursor } : {}),
      }
      const page: { data: { changed: boolean }[]; nextCursor: string | null } = expect(await api('POST', '/v1/timeline/preview', body), 200, 'preview').body
      pages.push(now() - t1)
      seen += page.data.length
      changed += page.data.filter((s: { changed: boolean }) => s.changed).length
      cursor = page.nextCursor
      if (!cursor) break
    }
    const previewMs = now() - started

    // (c) the list's kept page (drift is a field of every item)
    await timed(20, () => api('GET', '/v1/screens?limit=100'))
    const list = await timed(R, () => api('GET', '/v1/screens?limit=100'))
    const bareList = await timed(R, () => call(bareUrl))
    await stop(cloud.proc)
    await stop(bare)

    console.log('')
    console.log(`timeline, preview and drift; SQLite file database, ${S} screens (load average at the end: ${await loadAvg()})`)
    console.log('| measured | median | p90 | bare Fastify GET / median (same run) | ratio of medians |')
    console.log('| --- | --- | --- | --- | --- |')
    console.log(
      `| GET timeline, 7 days (${first.segments.length} segments), ${R} screens one at a time | ${f1(median(tl))} ms | ${f1(p90(tl))} ms | ${f1(median(bareTimes))} ms | ${f1(median(tl) / median(bareTimes))} |`,
    )
    console.log(
      `| POST preview of a schedule change: ${seen} screens (${changed} changed), ${pages.length} pages of ${PAGE} | ${f1(median(pages))} ms a page | ${f1(p90(pages))} ms a page | — | whole fleet ${f1(previewMs)} ms |`,
    )
    console.log(
      `| GET /v1/screens?limit=100 (kept page, with drift) | ${f1(median(list))} ms | ${f1(p90(list))} ms | ${f1(median(bareList))} ms | ${f1(median(list) / median(bareList))} |`,
    )
  } finally {
    killAll()
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e)
    killAll()
    process.exit(1)
  },
)
