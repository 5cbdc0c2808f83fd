// The installer sees the wire: the agent CLI as a real process logs the serial port's
// open, close (with the reason), reopen and errors at info, from start and unpaired (the
// cloud here is unreachable). A device path that does not exist says so and lists the
// machine's serial ports. The CEC set-up: a port another program holds (a simulated
// Pulse-Eight adapter on a socat pty, held by this test) says so, and the agent takes it once
// it is free; a /dev/cecN that does not exist lists the CEC devices there are (the real
// cec-ctl answers); without cec-ctl, its package is named.
import t from 'tap'
import { SerialPort } from 'serialport'
import { FirmwareSim } from '@svc/firmware-sim'
import { onPath, socat, toolTest, type SystemTool } from '@svc/shared/testing'
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

toolTest(t, socat, 'a CEC adapter another program holds: one line saying so; freed, the agent takes it', async (t) => {
  const sim = new FirmwareSim({ protocol: 'cec', pty: true })
  const path = (await sim.start()).ptyPath!
  t.after(() => sim.stop())
  // Another program on the adapter's port (cec-client, a second agent): it holds serialport's lock.
  const holder = new SerialPort({ path, baudRate: 9600, autoOpen: false })
  await new Promise<void>((resolve, reject) => holder.open((err) => (err ? reject(err) : resolve())))
  const release = () => new Promise<void>((resolve) => (holder.isOpen ? holder.close(() => resolve()) : resolve()))
  t.after(release)
  const agent = await runAgentCli(t, ['start', '--cloud', UNREACHABLE_CLOUD, '--data', tempDir(t), '--player-port', '0', '--serial', path])
  const serial = () => agent.json().filter((l) => l.part === 'serial')
  const busy = await eventually(`a serial log line of the held port (stdout so far: ${agent.out.join('\n')})`, () => serial()[0])
  t.match(busy, {
    level: 'info',
    path,
    next: 'retrying',
    reason: /cannot lock port/i,
    msg: `serial port ${path} is in use by another program; one program per port: stop it (another svc-agent, cec-client, inputattach --pulse8-cec, ModemManager) and the agent takes the port at its next try`,
  })
  await release()
  t.ok(await eventually('the serial port open line once the port is free', () => serial().find((l) => l.msg === 'serial port open')), 'taken once free')
  agent.child.kill('SIGTERM')
  t.equal((await agent.exited).code, 0)
})

const cecCtl: SystemTool = { name: 'cec-ctl', install: 'apt-get install -y v4l-utils', found: (env) => onPath('cec-ctl', env) }

toolTest(t, cecCtl, 'a /dev/cecN that does not exist: the CEC devices this machine has, or what to use instead', async (t) => {
  const path = '/dev/cec63'
  const agent = await runAgentCli(t, ['start', '--cloud', UNREACHABLE_CLOUD, '--data', tempDir(t), '--player-port', '0', '--serial', path])
  const line = await eventually(`a serial log line (stdout so far: ${agent.out.join('\n')})`, () => agent.json().find((l) => l.part === 'serial'))
  t.match(line, {
    level: 'info',
    path,
    reason: /Failed to open \/dev\/cec63/,
    msg: /^CEC device \/dev\/cec63 does not exist; (CEC devices on this machine: \/dev\/cec\d|this machine has no CEC device .*use a Pulse-Eight USB-CEC adapter)/,
  })
  t.type(line.available, Array)
  agent.child.kill('SIGTERM')
  t.equal((await agent.exited).code, 0)
})

t.test('a /dev/cecN without cec-ctl installed: its package is named', async (t) => {
  const path = '/dev/cec0'
  const agent = await runAgentCli(t, ['start', '--cloud', UNREACHABLE_CLOUD, '--data', tempDir(t), '--player-port', '0', '--serial', path], {
    ...process.env,
    PATH: tempDir(t),
  })
  const line = await eventually(`a serial log line (stdout so far: ${agent.out.join('\n')})`, () => agent.json().find((l) => l.part === 'serial'))
  t.match(line, {
    level: 'info',
    path,
    reason: 'cec-ctl is not installed (apt-get install -y v4l-utils)',
    msg: 'cec-ctl is not installed: the agent drives /dev/cec0 through it (apt-get install -y v4l-utils)',
  })
  agent.child.kill('SIGTERM')
  t.equal((await agent.exited).code, 0)
})
