// The installer sees the wire: the agent CLI as a real process logs the serial port's
// open, close (with the reason), reopen and errors at info, from start and unpaired (the
// cloud here is unreachable). A device path that does not exist says so and lists the
// machine's serial ports.
import t from 'tap'
import { FirmwareSim } from '@svc/firmware-sim'
import { eventually, runAgentCli, tempDir } from '../helpers.js'

const UNREACHABLE_CLOUD = 'http://127.0.0.1:9'

t.test('a device path that does not exist: one info line saying so, with the ports this machine has', async (t) => {
  const path = `/dev/svc-missing-${process.pid}`
  const agent = await runAgentCli(t, ['start', '--cloud', UNREACHABLE_CLOUD, '--data', tempDir(t), '--player-port', '0', '--serial', path])
  const line = await eventually(`a serial log line (stdout so far: ${agent.out.join('\n')})`, () => agent.json().find((l) => l.part === 'serial'))
  t.match(line, { level: 'info', path, msg: new RegExp(`^serial port ${path} does not exist; (ports on this machine: |this machine lists no serial ports)`) })
  t.match(String(line.reason), /no such file|ENOENT/i, 'the OS reason')
  t.type(line.available, Array)
  agent.child.kill('SIGTERM')
  t.equal((await agent.exited).code, 0)
})

t.test('over a TCP gateway: open, closed with the reason when unplugged, reopened; a refused connection is an error line', async (t) => {
  const sim = new FirmwareSim({ protocol: 'samsung-mdc', tcp: { port: 0, host: '127.0.0.1' } })
  const info = await sim.start()
  t.after(() => sim.stop())
  const path = `tcp://127.0.0.1:${info.tcpPort}`
  const agent = await runAgentCli(t, ['start', '--cloud', UNREACHABLE_CLOUD, '--data', tempDir(t), '--player-port', '0', '--serial', path])
  const serial = () => agent.json().filter((l) => l.part === 'serial')
  t.ok(await eventually('the serial port open line', () => serial().find((l) => l.msg === 'serial port open')), 'open, while not paired')
  await sim.unplug()
  const closed = await eventually('the serial port closed line', () => serial().find((l) => l.msg === 'serial port closed'))
  t.match(closed, { level: 'info', path, next: 'reopening' })
  t.type(closed?.reason, 'string')
  t.ok(await eventually('the serial port reopened line', () => serial().find((l) => l.msg === 'serial port reopened')), 'reopened after the unplug')
  for (const l of serial()) t.equal(l.path, path, `every line names the path (${String(l.msg)})`)
  agent.child.kill('SIGTERM')
  t.equal((await agent.exited).code, 0)

  // nothing listening: the refusal is logged with the OS reason
  await sim.stop()
  const refused = await runAgentCli(t, ['start', '--cloud', UNREACHABLE_CLOUD, '--data', tempDir(t), '--player-port', '0', '--serial', path])
  const err = await eventually('a serial log line of the refused connection', () => refused.json().find((l) => l.part === 'serial'))
  t.match(err, { level: 'info', msg: 'serial port error', path, reason: /ECONNREFUSED/ })
  refused.child.kill('SIGTERM')
  t.equal((await refused.exited).code, 0)
})
