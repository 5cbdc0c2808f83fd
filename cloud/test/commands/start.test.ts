// `pnpm start` as a newcomer meets it, through real processes: the first-run line with
// the bootstrap command and the docs address, one request log line at debug, JSON when
// not on a terminal and human lines when asked, Ctrl-C (SIGINT to the whole process
// group, as a terminal sends it) ending with exit 0 and no pnpm failure line, a second
// instance on the same data folder and a busy HTTP or MQTT port each ending with one
// line and exit 1.
import t, { type Test } from 'tap'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { pnpm, toolTest } from '@svc/shared/testing'
import { lockDataDir, StartupError } from '../../src/dataLock.js'
import { HANG_GUARD_MS, cleanEnv, freePort, spawnProcess, tempDir as newTempDir, until, type Proc } from '../fixtures/processes.js'

const tempDir = (t: Test) => newTempDir(t, 'svc-start-')

/** `cmd` in its own process group (a SIGINT to the group reaches every process in it, as Ctrl-C does). */
const run = (t: Test, cmd: string, args: string[], env: Record<string, string>): Proc =>
  spawnProcess(t, cmd, args, cleanEnv({ SVC_HOST: '127.0.0.1', ...env }), { detached: true })

const cli = (t: Test, env: Record<string, string>) => run(t, process.execPath, ['scripts/cloud.mjs', 'start'], env)

/** Polls `fn` until it is true, at most `ms`. */
const waitFor = async (ms: number, fn: () => boolean): Promise<boolean> => (await until(ms, () => fn() || undefined)) ?? false

toolTest(t, pnpm, '`pnpm start`: first-run line, one debug line per request, a second instance refused, Ctrl-C exits 0 without a failure line', async (t) => {
  const dataDir = tempDir(t)
  const httpPort = await freePort()
  const env = { SVC_DATA_DIR: dataDir, SVC_HTTP_PORT: String(httpPort), SVC_MQTT_PORT: '0', SVC_LOG_LEVEL: 'debug' }
  const first = run(t, 'pnpm', ['start'], env)
  t.ok(await waitFor(HANG_GUARD_MS, () => /no workspace yet/.test(first.output()) || first.child.exitCode !== null), 'started')
  const lines = first
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
  const guide = lines.map((l) => JSON.parse(l) as { level: number; msg: string }).find((l) => /no workspace yet/.test(l.msg))
  t.ok(guide, 'JSON lines when stdout is not a terminal')
  t.equal(guide?.level, 30, 'at info')
  t.match(guide?.msg, 'npx -y pnpm@10.34.9 --silent cloud bootstrap --workspace NAME')
  t.match(guide?.msg, `http://127.0.0.1:${httpPort}/v1/docs`)

  const res = await fetch(`http://127.0.0.1:${httpPort}/v1/status`)
  t.equal(res.status, 200)
  const requestId = res.headers.get('x-svc-request-id')!
  t.ok(await waitFor(HANG_GUARD_MS, () => first.output().includes(requestId)))
  const requestLines = first
    .output()
    .split('\n')
    .filter((l) => l.includes(requestId))
    .map((l) => JSON.parse(l) as { level: number; msg: string; statusCode: number; url: string })
  t.equal(requestLines.length, 1, 'one line per request')
  t.match(requestLines[0], { level: 20, msg: 'request', statusCode: 200, url: '/v1/status' }, 'at debug, with what was asked and answered')

  // A second instance on the same data folder stops before opening anything.
  const second = cli(t, { ...env, SVC_HTTP_PORT: '0' })
  const secondExit = await second.exited
  t.same(secondExit, { code: 1, signal: null })
  const secondLines = second.output().trim().split('\n')
  t.equal(secondLines.length, 1, `one line: ${second.output()}`)
  t.match(secondLines[0], `error: another instance (process `)
  t.match(secondLines[0], `is running on the data folder ${dataDir}`)
  t.equal((await fetch(`http://127.0.0.1:${httpPort}/v1/status`)).status, 200, 'the first one is untouched')

  // Ctrl-C: SIGINT to the whole process group (pnpm, and the service it runs).
  process.kill(-first.child.pid!, 'SIGINT')
  const outcome = await Promise.race([first.exited, sleep(HANG_GUARD_MS, undefined, { ref: false }).then(() => null)])
  t.same(outcome, { code: 0, signal: null }, `exit 0 (output: ${first.output().slice(-500)})`)
  t.notMatch(first.output(), /ELIFECYCLE|Command failed/)
  t.notMatch(first.output(), /^\s+at /m, 'no stack trace')
  t.notOk(fs.existsSync(path.join(dataDir, 'svc.lock')), 'the lock is released')
})

t.test('the lock still refuses a second instance that passed the early check; a lock of a process gone is taken over', async (t) => {
  // `start` asks whether the folder is held before it loads the server; two starting at once
  // both pass that, and the lock, taken once the server's modules are loaded, decides.
  const dataDir = tempDir(t)
  const holder = spawnProcess(t, process.execPath, ['-e', 'setInterval(() => {}, 1000)'], cleanEnv())
  fs.writeFileSync(path.join(dataDir, 'svc.lock'), `${holder.child.pid}\n`)
  t.throws(
    () => lockDataDir(dataDir),
    new StartupError(
      `another instance (process ${holder.child.pid}) is running on the data folder ${dataDir}; stop it, or give this one its own folder with SVC_DATA_DIR`,
    ),
  )
  holder.child.kill('SIGKILL')
  await holder.exited
  const lock = lockDataDir(dataDir)
  t.equal(fs.readFileSync(path.join(dataDir, 'svc.lock'), 'utf8'), `${process.pid}\n`, 'taken over once its process is gone')
  lock.release()
  t.notOk(fs.existsSync(path.join(dataDir, 'svc.lock')), 'and released')
})

t.test('Ctrl-C to the process group of what `pnpm start` runs exits 0, with the echo wrappers send after it', async (t) => {
  // Three services of their own (data folder, port, process group), started side by side.
  await Promise.all(
    ([null, 'SIGINT', 'SIGTERM'] as const).map(async (echo) => {
      const label = `SIGINT${echo ? ` then ${echo}` : ''}`
      const dataDir = tempDir(t)
      const httpPort = await freePort()
      const proc = cli(t, { SVC_DATA_DIR: dataDir, SVC_HTTP_PORT: String(httpPort), SVC_MQTT_PORT: '0', SVC_LOG_LEVEL: 'warn' })
      t.ok(
        await until(HANG_GUARD_MS, async () =>
          proc.child.exitCode !== null ? false : (await fetch(`http://127.0.0.1:${httpPort}/v1/status`)).ok || undefined,
        ),
        `${label}: ready`,
      )
      // Ctrl-C: SIGINT to the whole group; then, at once, the echo a wrapper sends on (pnpm
      // forwards the SIGINT, and turns a second one it gets, from npx in front of it, into a
      // SIGTERM). Both are pending before the service has done anything about the first.
      process.kill(-proc.child.pid!, 'SIGINT')
      if (echo) process.kill(proc.child.pid!, echo)
      const outcome = await Promise.race([proc.exited, sleep(HANG_GUARD_MS, undefined, { ref: false }).then(() => null)])
      t.same(outcome, { code: 0, signal: null }, `${label}: exit 0 (output: ${proc.output().slice(-400)})`)
      t.notMatch(proc.output(), /second SIG/, `${label}: the echo is not a second request to stop`)
      t.notOk(fs.existsSync(path.join(dataDir, 'svc.lock')), `${label}: the lock is released`)
    }),
  )
})

t.test('a busy HTTP port, and a busy MQTT port: one line naming the port and the setting, exit 1; human lines when SVC_LOG_FORMAT=pretty', async (t) => {
  const blocker = net.createServer()
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r))
  t.after(() => blocker.close())
  const busy = (blocker.address() as net.AddressInfo).port

  // Two services side by side, each on a data folder of its own.
  const [httpDir, mqttDir] = [tempDir(t), tempDir(t)]
  const http = cli(t, { SVC_DATA_DIR: httpDir, SVC_HTTP_PORT: String(busy), SVC_MQTT_PORT: '0', SVC_LOG_LEVEL: 'warn' })
  const mqtt = cli(t, { SVC_DATA_DIR: mqttDir, SVC_HTTP_PORT: '0', SVC_MQTT_PORT: String(busy), SVC_LOG_FORMAT: 'pretty' })
  const [httpExit, mqttExit] = await Promise.all([http.exited, mqtt.exited])

  t.same(httpExit, { code: 1, signal: null })
  t.equal(
    http.output(),
    `error: HTTP port ${busy} is in use on 127.0.0.1 (SVC_HTTP_PORT): stop the program that holds it, or set SVC_HTTP_PORT to a free port (0 = any)\n`,
  )
  t.notOk(fs.existsSync(path.join(httpDir, 'svc.lock')), 'the lock is released')

  t.same(mqttExit, { code: 1, signal: null })
  const lines = mqtt.output().trim().split('\n')
  t.equal(
    lines.at(-1),
    `error: MQTT port ${busy} is in use on 127.0.0.1 (SVC_MQTT_PORT): stop the program that holds it, or set SVC_MQTT_PORT to a free port (0 = any)`,
  )
  t.notMatch(mqtt.output(), /^\s+at /m, 'no stack trace')
  t.ok(lines.length > 1, 'the start-up lines came first')
  for (const line of lines.slice(0, -1)) t.match(line, /^\[\d\d:\d\d:\d\d\] INFO: /, `a human line: ${line}`)
  t.notOk(fs.existsSync(path.join(mqttDir, 'svc.lock')), 'the lock is released there too')
})

t.test('SVC_LOG_FORMAT takes auto, json or pretty only', async (t) => {
  const bad = cli(t, { SVC_DATA_DIR: tempDir(t), SVC_LOG_FORMAT: 'xml' })
  t.same(await bad.exited, { code: 1, signal: null })
  t.equal(bad.output(), 'error: SVC_LOG_FORMAT must be auto, json or pretty, got "xml"\n')
})

toolTest(t, pnpm, '`pnpm agent start` and `pnpm sim start`: Ctrl-C exits 0 without a failure line', async (t) => {
  const dataDir = tempDir(t)
  const agent = run(t, 'pnpm', ['agent', 'start', '--cloud', 'http://127.0.0.1:9', '--data', dataDir, '--player-port', '0'], {})
  const sim = run(t, 'pnpm', ['sim', 'start', '--protocol', 'lg', '--tcp', '0'], {})
  t.ok(await waitFor(HANG_GUARD_MS, () => /"msg":"(pairing|cannot reach)/.test(agent.output()) || agent.child.exitCode !== null), 'agent running')
  t.ok(await waitFor(HANG_GUARD_MS, () => /"tcpPort":\d+/.test(sim.output()) || sim.child.exitCode !== null), 'simulator running')
  for (const [name, p] of [
    ['agent', agent],
    ['sim', sim],
  ] as const) {
    process.kill(-p.child.pid!, 'SIGINT')
    const outcome = await Promise.race([p.exited, sleep(HANG_GUARD_MS, undefined, { ref: false }).then(() => null)])
    t.same(outcome, { code: 0, signal: null }, `${name}: exit 0`)
    t.notMatch(p.output(), /ELIFECYCLE|Command failed/, `${name}: no failure line`)
  }
})
