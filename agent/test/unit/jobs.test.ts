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
