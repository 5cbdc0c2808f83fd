import t from 'tap'
import { spawn } from 'node:child_process'

import net from 'node:net'
import { once } from 'node:events'
import { dirname, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { SerialPort } from 'serialport'
import { HANG_GUARD_MS, socat, toolTest } from '@svc/shared/testing'
import { bundledEntry } from '@svc/shared/testing/bundle'
import { FirmwareSim } from '../src/index.js'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
// The simulator's CLI from its bundle (built once per run, cached by content), not its sources through tsx.
const cli = await bundledEntry('firmware-sim/src/cli.ts')

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d))
    child.stderr.on('data', (d: Buffer) => (stderr += d))
    // Hang guard: a command that should have ended keeps running (a simulator that started after all).
    const guard = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`sim ${args.join(' ')} did not exit within ${HANG_GUARD_MS / 60_000} minutes; stderr: ${stderr}`))
    }, HANG_GUARD_MS)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(guard)
      resolveRun({ code, stdout, stderr })
    })
  })
}

const template = {
  data: {
    id: 'sertpl_demo',
    name: 'Samsung QM55',
    model: 'QM55R',
    items: [
      { id: 'sti_on', name: 'Power on', value: 'AA 11 01 01 01 14', encoding: 'hex', eol: 'none', hexPreview: 'AA 11 01 01 01 14' },
      { id: 'sti_vol', name: 'Volume 30', value: '0xAA 0x12 0x01 0x01 0x1E 0x32', encoding: 'hex', eol: 'none' },
      { id: 'sti_mute', name: 'Mute', value: 'AA13010101 16', encoding: 'hex' },
    ],
  },
}

t.test('run-template sends every command and reports bytes, reply and state change', async (t) => {
  const dir = t.testdir({ 'tpl.json': JSON.stringify(template) })
  const r = await run(['run-template', '--protocol', 'samsung-mdc', '--template', `${dir}/tpl.json`])
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, /\[1\/3\] sti_on "Power on": OK/)
  t.match(r.stdout, /sent: {2}AA 11 01 01 01 14/)
  t.match(r.stdout, /reply: AA FF 01 03 41 11 01 56 {2}\(ack power on\)/)
  t.match(r.stdout, /panel: power off -> on/)
  t.match(r.stdout, /panel: volume 20 -> 30/)
  t.match(r.stdout, /panel: muted false -> true/)
  t.match(r.stdout, /all 3 commands answered/)
})

t.test('run-template --item --json, bare SerialTemplate object', async (t) => {
  const dir = t.testdir({ 'tpl.json': JSON.stringify(template.data) })
  const r = await run(['run-template', '--protocol', 'samsung-mdc', '--template', `${dir}/tpl.json`, '--item', 'sti_vol', '--json'])
  t.equal(r.code, 0, r.stderr)
  const lines = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
  t.equal(lines.length, 2)
  t.match(lines[0], {
    id: 'sti_vol',
    outcome: 'ok',
    sentHex: 'AA 12 01 01 1E 32',
    replyHex: 'AA FF 01 03 41 12 1E 74',
    changes: [{ field: 'volume', from: 20, to: 30 }],
  })
  t.match(lines[1], { summary: true, ok: true, template: 'Samsung QM55' })
})

t.test('run-template exits 1 on NAK, no reply, or the wrong protocol', async (t) => {
  const dir = t.testdir({ 'tpl.json': JSON.stringify(template) })
  const nak = await run(['run-template', '--protocol', 'samsung-mdc', '--template', `${dir}/tpl.json`, '--fault', 'nak'])
  t.equal(nak.code, 1)
  t.match(nak.stdout, /sti_on "Power on": NAK/)
  t.match(nak.stdout, /panel: no change/)
  t.match(nak.stdout, /3 of 3 commands failed/)
  const wrong = await run(['run-template', '--protocol', 'lg', '--template', `${dir}/tpl.json`, '--item', 'sti_on', '--timeout', '100'])
  t.equal(wrong.code, 1)
  t.match(wrong.stdout, /TIMEOUT/)
  t.match(wrong.stdout, /no reply within 100 ms/)
})

t.test('run-template: LG ascii template with eol cr', async (t) => {
  const dir = t.testdir({
    'lg.json': JSON.stringify({ name: 'LG', items: [{ id: 'sti_1', name: 'On', value: 'ka 01 01', encoding: 'ascii', eol: 'cr' }] }),
  })
  const r = await run(['run-template', '--protocol', 'lg', '--template', `${dir}/lg.json`])
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, /sent: {2}6B 61 20 30 31 20 30 31 0D/)
  t.match(r.stdout, /reply: 61 20 30 31 20 4F 4B 30 31 78/)
})

t.test('bad arguments: message on stderr, exit 2, no stack trace', async (t) => {
  const dir = t.testdir({ 'tpl.json': JSON.stringify(template), 'broken.json': '{"items": [' })
  const cases: [string[], RegExp][] = [
    [['run-template', '--template', `${dir}/tpl.json`], /--protocol is required/],
    [['run-template', '--protocol', 'sony', '--template', `${dir}/tpl.json`], /--protocol must be one of/],
    [['run-template', '--protocol', 'lg'], /--template FILE.json is required/],
    [['run-template', '--protocol', 'lg', '--template', `${dir}/missing.json`], /cannot read --template .*ENOENT/],
    [['run-template', '--protocol', 'lg', '--template', `${dir}/broken.json`], /not valid JSON/],
    [['run-template', '--protocol', 'samsung-mdc', '--template', `${dir}/tpl.json`, '--item', 'nope'], /no item with id or name "nope"/],
    [['start', '--protocol', 'lg', '--tcp', 'abc'], /--tcp must be a whole number/],
    [['start', '--protocol', 'lg', '--fault', 'melt'], /unknown fault "melt"/],
    [['start', '--protocol', 'lg', '--frobnicate'], /Unknown option '--frobnicate'/],
    [['start', '--protocol', 'cec', '--id', '0'], /--id for cec is the TV's HDMI input the player is on, a whole number from 1 to 15, got "0"/],
    [['start', '--protocol', 'cec', '--id', '16'], /--id for cec is the TV's HDMI input .* got "16"/],
    [['explode'], /unknown command "explode"/],
  ]
  await Promise.all(
    cases.map(async ([args, message]) => {
      const r = await run(args)
      t.equal(r.code, 2, args.join(' '))
      t.match(r.stderr, message)
      t.notMatch(r.stderr, /\n\s+at /, 'no stack trace')
    }),
  )
})

t.test('start prints what it opened, serves TCP, traces, and stops on SIGTERM', async (t) => {
  const dir = t.testdir()
  const child = spawn(process.execPath, [cli, 'start', '--protocol', 'lg', '--tcp', '0', '--web', '0', '--id', '2', '--trace', `${dir}/trace.log`], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  t.after(() => child.kill('SIGKILL'))
  const lines = createInterface({ input: child.stdout })
  const [first] = (await once(lines, 'line')) as [string]
  const info = JSON.parse(first)
  t.match(info, { protocol: 'lg', id: 2, ptyPath: null, webUrl: /^http:\/\/127\.0\.0\.1:\d+\/$/ })
  t.ok(info.tcpPort > 0)

  const socket = net.connect(info.tcpPort, '127.0.0.1')
  t.after(() => socket.destroy())
  await once(socket, 'connect')
  socket.write('ka 02 01\r')
  const [reply] = (await once(socket, 'data')) as [Buffer]
  t.equal(reply.toString('latin1'), 'a 02 OK01x')

  // runtime fault switching on stdin
  child.stdin.write('fault nak\n')
  await once(child.stderr, 'data')
  socket.write('ka 02 00\r')
  const [nak] = (await once(socket, 'data')) as [Buffer]
  t.equal(nak.toString('latin1'), 'a 02 NG01x')

  child.kill('SIGTERM')
  const [code] = (await once(child, 'exit')) as [number | null]
  t.equal(code, 0, 'clean exit on SIGTERM')
  const { readFileSync } = await import('node:fs')
  const trace = readFileSync(`${dir}/trace.log`, 'utf8')
  t.match(trace, /Z rx \[tcp 127\.0\.0\.1:\d+\] 6B 61 20 30 32 20 30 31 0D {2}\|ka 02 01\.\|/)
  t.match(trace, /Z tx \[tcp [^\]]+\] 61 20 30 32 20 4F 4B 30 31 78/)
  t.match(trace, /state power off -> on/)
})

// What the CEC simulator tells an installer: what it simulates and the matching panel settings,
// what a TV without CEC looks like from the agent (and when that fault is switched on at run
// time), and why its own port did not open: missing, or held by another program.
t.test('start --protocol cec: stderr says what is simulated, the panel settings to give, and what no-cec means', async (t) => {
  const child = spawn(process.execPath, [cli, 'start', '--protocol', 'cec', '--tcp', '0', '--id', '2', '--fault', 'no-cec'], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  t.after(() => child.kill('SIGKILL'))
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  const [first] = (await once(createInterface({ input: child.stdout }), 'line')) as [string]
  t.match(JSON.parse(first), { protocol: 'cec', id: 2, faults: ['no-cec'] })
  const seen = (what: string, re: RegExp) =>
    new Promise<void>((resolve, reject) => {
      const guard = setTimeout(() => reject(new Error(`no ${what} on stderr within ${HANG_GUARD_MS / 60_000} minutes; got: ${stderr}`)), HANG_GUARD_MS)
      const check = () => {
        if (!re.test(stderr)) return
        clearTimeout(guard)
        child.stderr.off('data', check)
        resolve()
      }
      child.stderr.on('data', check)
      check()
    })
  await seen('the CEC notes', /problem "no-cec"/)
  t.match(
    stderr,
    /^cec: a Pulse-Eight USB-CEC adapter with a TV behind it; the player is on the TV's HDMI 2: give the screen the panel \{"protocol":"cec","setId":2\}/m,
  )
  t.match(stderr, /^cec: the TV answers no CEC \(fault no-cec\): .*power unknown with problem "no-cec", never "off"/m)
  child.stdin.write('fault ignore-standby\n')
  await seen('the ignore-standby note', /fault ignore-standby/)
  t.match(stderr, /^cec: the TV acknowledges Standby and stays on \(fault ignore-standby\): .*panel-not-obeying/m)
  child.kill('SIGTERM')
  const [code] = (await once(child, 'exit')) as [number | null]
  t.equal(code, 0, 'clean exit on SIGTERM')
})

t.test('start --serial on a port that does not exist: exit 1 saying so, and what to use without hardware', async (t) => {
  const path = `/dev/svc-missing-${process.pid}`
  const r = await run(['start', '--protocol', 'cec', '--serial', path])
  t.equal(r.code, 1)
  t.match(
    r.stderr,
    new RegExp(`^firmware-sim: cannot start: serial port ${path} does not exist \\(.*\\); without hardware, --pty makes a pseudo-terminal pair instead$`, 'm'),
  )
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace')
})

toolTest(t, socat, 'start --serial on a port another program holds: exit 1, in use, one program per port', async (t) => {
  const sim = new FirmwareSim({ protocol: 'cec', pty: true })
  const path = (await sim.start()).ptyPath!
  t.after(() => sim.stop())
  const holder = new SerialPort({ path, baudRate: 9600, autoOpen: false })
  await new Promise<void>((resolve, reject) => holder.open((err) => (err ? reject(err) : resolve())))
  t.after(() => new Promise<void>((resolve) => (holder.isOpen ? holder.close(() => resolve()) : resolve())))
  const r = await run(['start', '--protocol', 'cec', '--serial', path])
  t.equal(r.code, 1)
  t.match(
    r.stderr,
    new RegExp(`^firmware-sim: cannot start: serial port ${path} is in use by another program \\(.*Cannot lock port\\); one program per port`, 'm'),
  )
})
