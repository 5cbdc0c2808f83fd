// The agent as a real child process (its CLI's bundle: `agent/src/cli.ts start …`) against
// a real cloud: prints the code, pairs, goes online; SIGKILL → the broker publishes the
// retained `offline` Last Will; a restart connects straight away; SIGTERM → `offline`
// published by the agent itself and exit code 0. Bad arguments → exit 2, no stack.
import t from 'tap'
import { startCloud } from '../cloud.js'
import { eventually, runAgentCli, tempDir } from '../helpers.js'

const run = runAgentCli

t.test('bad arguments: message on stderr, exit 2, no stack', async (t) => {
  const cases = [['start'], ['start', '--cloud', 'ftp://x'], ['start', '--cloud', 'http://x', '--player-port', 'abc', '--bogus']]
  const runs = await Promise.all(cases.map(async (args) => ({ args, r: await run(t, args) })))
  for (const { args, r } of runs) {
    const { code } = await r.exited
    t.equal(code, 2, args.join(' '))
    t.match(r.err(), /^agent: /)
    t.notMatch(r.err(), /^\s+at /m, 'no stack trace')
  }
})

t.test('pairs from the command line; Last Will on a kill; reconnects with the stored credential; clean SIGTERM', async (t) => {
  const cloud = await startCloud(t)
  const dataDir = tempDir(t)
  const args = ['start', '--cloud', cloud.base, '--data', dataDir, '--player-port', '0']

  const first = await run(t, args)
  const codeLine = await eventually('a pairing code log line', () => first.json().find((l) => l.msg === 'pairing code'))
  const code = String(codeLine.pairingCode)
  // The plain line may come in a later stdout chunk than the JSON one: wait for it.
  t.ok(
    await eventually('the plain pairing code line', () => (first.out.some((l) => l.includes(`Pairing code: ${code}`)) ? true : undefined)),
    'and a plain line for a person',
  )
  const screenId = await cloud.pair(code)
  const status = `svc/v1/screens/${screenId}/status`
  await cloud.waitFor(status, (p) => p.status === 'online')
  await cloud.waitFor(`svc/v1/screens/${screenId}/reported`, (p) => p.version === 0)

  first.child.kill('SIGKILL')
  await first.exited
  const will = await cloud.waitFor(status, (p) => p.status === 'offline')
  t.match(will, { status: 'offline', at: String })
  t.equal(cloud.seen(status).at(-1)?.retain, true, 'the Last Will is retained')

  const onlineCount = cloud.seen(status).filter((m) => m.payload.status === 'online').length
  const second = await run(t, args)
  const back = await eventually('the restarted agent online', () =>
    cloud.seen(status).filter((m) => m.payload.status === 'online').length > onlineCount ? true : undefined,
  )
  t.ok(back, 'online again without pairing')
  t.notOk(
    second.json().some((l) => l.msg === 'pairing code'),
    'no new code: the stored credential was used',
  )

  const offlines = cloud.seen(status).filter((m) => m.payload.status === 'offline').length
  second.child.kill('SIGTERM')
  t.same(await second.exited, { code: 0, signal: null }, `exit 0 on SIGTERM (stderr: ${second.err()})`)
  t.ok(cloud.seen(status).filter((m) => m.payload.status === 'offline').length > offlines, 'offline published on the way out')
  t.match(cloud.seen(status).at(-1), { payload: { status: 'offline' }, retain: true })
  t.ok(second.json().some((l) => l.msg === 'stopped'))
  t.equal(second.err(), '', 'nothing on stderr')
})
