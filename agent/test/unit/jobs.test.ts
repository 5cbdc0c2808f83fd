// Jobs: validated, de-duplicated by id (also across a restart), serial jobs through the
// SerialJobRunner (placeholder: failed, "no serial port configured"), one result each.
import t, { type Test } from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import type { JobResult, SerialJob } from '@svc/shared/mqtt/index'
import { JobDispatcher } from '../../src/jobs/JobDispatcher.js'
import { SeenJobs } from '../../src/jobs/SeenJobs.js'
import { UnavailableSerialRunner, type SerialJobRunner } from '../../src/jobs/SerialJobRunner.js'
import { FakeTime, captureLog, tempDir } from '../helpers.js'

const serialJob = (id: string) => JSON.stringify({ id, kind: 'serial', bytesHex: 'aa11fe0100', createdAt: '2026-06-01T12:00:00.000Z' })

function harness(t: Test, dir: string, serial?: SerialJobRunner) {
  const time = new FakeTime('2026-06-01T12:00:01.000Z')
  const results: JobResult[] = []
  const { log, lines } = captureLog(time.clock)
  const jobs = new JobDispatcher({
    seen: new SeenJobs({ dataDir: dir, limit: 3 }),
    serial: serial ?? new UnavailableSerialRunner(time.clock),
    publisher: { publish: async (_k: 'job-results', r: JobResult) => void results.push(r) },
    log,
    clock: time.clock,
  })
  t.after(() => jobs.stop())
  return { jobs, results, lines }
}

t.test('without a serial port, a serial job fails with the reason; a duplicate does not run again', async (t) => {
  const dir = tempDir(t)
  const { jobs, results } = harness(t, dir)
  await jobs.start()
  await jobs.handle(serialJob('sjob_1'))
  t.same(results, [
    { jobId: 'sjob_1', kind: 'serial', sentHex: '', replyHex: '', outcome: 'failed', reason: 'no serial port configured', at: '2026-06-01T12:00:01.000Z' },
  ])
  await jobs.handle(serialJob('sjob_1'))
  t.equal(results.length, 2, 'the duplicate is answered again...')
  t.same(results[1], results[0], '...with the first result, not a second run')
})

t.test('seen ids persist across a restart; the list is bounded; bad jobs are ignored', async (t) => {
  const dir = tempDir(t)
  let runs = 0
  const counting: SerialJobRunner = {
    async run(job: SerialJob) {
      runs++
      return { jobId: job.id, kind: 'serial', sentHex: job.bytesHex, replyHex: 'aa', outcome: 'ok', at: '2026-06-01T12:00:02.000Z' }
    },
  }
  const first = harness(t, dir, counting)
  await first.jobs.start()
  await Promise.all([first.jobs.handle(serialJob('sjob_a')), first.jobs.handle(serialJob('sjob_a'))])
  t.equal(runs, 1, 'a redelivery arriving at once runs once')
  await first.jobs.stop()
  t.equal(fs.statSync(path.join(dir, 'jobs-seen.json')).mode & 0o777, 0o600)

  const second = harness(t, dir, counting)
  await second.jobs.start()
  await second.jobs.handle(serialJob('sjob_a'))
  t.equal(runs, 1, 'redelivered after a restart: not run again')
  t.match(second.results[0], { jobId: 'sjob_a', outcome: 'ok' }, 'answered with the stored result')

  for (const id of ['sjob_b', 'sjob_c', 'sjob_d']) await second.jobs.handle(serialJob(id))
  t.equal(runs, 4)
  const stored = JSON.parse(fs.readFileSync(path.join(dir, 'jobs-seen.json'), 'utf8')) as Array<{ id: string }>
  t.same(
    stored.map((e) => e.id),
    ['sjob_b', 'sjob_c', 'sjob_d'],
    'the oldest id went first (limit 3)',
  )

  await second.jobs.handle('{"id": "x", "kind": "teleport"}')
  await second.jobs.handle(JSON.stringify({ id: 'sjob_e', kind: 'serial', bytesHex: 'zz', createdAt: '2026-06-01T12:00:00.000Z' }))
  t.equal(runs, 4)
  t.ok(second.lines.filter((l) => l.msg === 'ignoring an invalid job').length === 2)

  await second.jobs.handle(JSON.stringify({ id: 'job_r', kind: 'reboot', createdAt: '2026-06-01T12:00:00.000Z' }))
  t.match(second.results.at(-1), { jobId: 'job_r', kind: 'reboot', outcome: 'failed', reason: 'reboot is not supported by this agent' })
})

t.test('a runner that throws becomes a failed result', async (t) => {
  const { jobs, results } = harness(t, tempDir(t), {
    run: async () => {
      throw new Error('port vanished')
    },
  })
  await jobs.start()
  await jobs.handle(serialJob('sjob_x'))
  t.match(results[0], { jobId: 'sjob_x', outcome: 'failed', reason: 'serial driver error: port vanished' })
})

t.test('the result is published before its file write finishes; the next job waits for the write', async (t) => {
  const dir = tempDir(t)
  const order: string[] = []
  const seen = new SeenJobs({ dataDir: dir })
  const setResult = seen.setResult.bind(seen)
  let finishWrite!: () => void
  const writeHeld = new Promise<void>((r) => (finishWrite = r))
  seen.setResult = async (id, result) => {
    order.push(`write ${id}`)
    await setResult(id, result)
    if (id === 'sjob_1') await writeHeld
    order.push(`written ${id}`)
  }
  const time = new FakeTime('2026-06-01T12:00:01.000Z')
  const runner: SerialJobRunner = {
    async run(job: SerialJob) {
      order.push(`run ${job.id}`)
      return { jobId: job.id, kind: 'serial', sentHex: job.bytesHex, replyHex: 'aa', outcome: 'ok', at: '2026-06-01T12:00:02.000Z' }
    },
  }
  const published: string[] = []
  const jobs = new JobDispatcher({
    seen,
    serial: runner,
    publisher: { publish: async (_k: 'job-results', r: JobResult) => void (published.push(r.jobId), order.push(`publish ${r.jobId}`)) },
    log: captureLog(time.clock).log,
    clock: time.clock,
  })
  t.after(() => jobs.stop())
  await jobs.start()
  const first = jobs.handle(serialJob('sjob_1'))
  const second = jobs.handle(serialJob('sjob_2'))
  while (!published.includes('sjob_1')) await new Promise((r) => setImmediate(r))
  t.notOk(order.includes('written sjob_1'), 'published while the write is still going')
  t.notOk(order.includes('run sjob_2'), 'the next job has not started')
  finishWrite()
  await Promise.all([first, second])
  t.same(order, ['run sjob_1', 'write sjob_1', 'publish sjob_1', 'written sjob_1', 'run sjob_2', 'write sjob_2', 'publish sjob_2', 'written sjob_2'])
  const stored = JSON.parse(fs.readFileSync(path.join(dir, 'jobs-seen.json'), 'utf8')) as Array<{ id: string; result?: JobResult }>
  t.equal(stored.find((e) => e.id === 'sjob_1')?.result?.outcome, 'ok', 'the result is on disk')
})

t.test('the seen list makes its folder when missing, and keeps writing once it exists', async (t) => {
  const dir = path.join(tempDir(t), 'not', 'yet')
  const seen = new SeenJobs({ dataDir: dir })
  t.equal(await seen.add('job_1', '2026-01-01T00:00:00.000Z'), true)
  t.equal(fs.statSync(dir).mode & 0o777, 0o700, 'the folder is the agent user’s only')
  t.equal(await seen.add('job_2', '2026-01-01T00:00:01.000Z'), true)
  const again = new SeenJobs({ dataDir: dir })
  await again.load()
  t.same([again.get('job_1')?.id, again.get('job_2')?.id], ['job_1', 'job_2'])
  t.equal(fs.statSync(path.join(dir, 'jobs-seen.json')).mode & 0o777, 0o600)
  t.same(
    fs.readdirSync(dir).filter((f) => f.endsWith('.tmp')),
    [],
    'no temp file left',
  )
})
