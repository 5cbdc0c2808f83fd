/**
 * Agent command line (run as `pnpm agent <cmd>` from the repo root).
 *
 *   start --cloud URL [--serial PATH|tcp://HOST:PORT] [--data DIR] [--player-port N]
 *         [--model TEXT] [--serial-number TEXT] [--log-level debug|info|warn|error]
 *         [--cache-max-mb N] [--ca FILE] [--allow-insecure-mqtt] [--release-key FILE]
 *
 *   release-key [--out DIR] / sign-release --key FILE TARBALL   (releases/commands.ts)
 *   health [--player-port N] [--wait SECONDS] [--page-silent-after SECONDS]   (player/healthCommand.ts)
 *   pack [--arch x64|arm64] [--out DIR]   (pack/: the installable agent; from the repository only)
 *
 * Logs are JSON lines on stdout; the pairing code is also printed as a plain line
 * (`Pairing code: ABC234 …`) for a person at the console. Bad arguments: a message on
 * stderr and exit code 2, never a stack trace. SIGINT/SIGTERM: clean shutdown, exit 0.
 */
import { X509Certificate } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { Agent, DEFAULT_PLAYER_PORT } from './Agent.js'
import { DEFAULT_CACHE_MAX_BYTES } from './playback/MediaCache.js'
import { JsonLogger, type LogLevel } from './runtime/Logger.js'
import { systemClock } from './runtime/time.js'
import { UnavailableSerialRunner, type SerialJobRunner } from './jobs/SerialJobRunner.js'
import { DisplayDriver } from './serial/DisplayDriver.js'
import { SerialJobRunner as DriverJobRunner } from './serial/SerialJobRunner.js'
import { logPanelPort } from './serial/portLog.js'
import { AGENT_VERSION, PACKED, PROGRAM } from './version.js'
import { releasePublicKey } from '@svc/shared/releases'
import type { UpdateSetup } from './jobs/UpdateInstaller.js'
import { INSTALLED_ENV, PROGRAM_ENV, RESTART_EXIT_CODE, STATE_ENV } from './releases/state.js'

const USAGE = `usage:
  ${PROGRAM} start --cloud URL [--serial PATH|tcp://HOST:PORT] [--data DIR] [--player-port N]
              [--model TEXT] [--serial-number TEXT] [--log-level debug|info|warn|error]
              [--cache-max-mb N] [--ca FILE] [--allow-insecure-mqtt] [--release-key FILE]
  ${PROGRAM} health [--player-port N] [--wait SECONDS] [--page-silent-after SECONDS]
  ${PROGRAM} release-key [--out DIR]
  ${PROGRAM} sign-release --key FILE TARBALL
  ${PROGRAM} --version
${PACKED ? '' : `  ${PROGRAM} pack [--arch x64|arm64] [--out DIR] [--version V] [--release-key FILE]   (the tarball and .deb)\n`}defaults: --data ./agent-data, --player-port ${DEFAULT_PLAYER_PORT} (0 picks a free port),
          --cache-max-mb ${DEFAULT_CACHE_MAX_BYTES / 1024 ** 2} (the on-disk media cache bound)
--ca FILE: a CA certificate (PEM) trusted beside the system's roots, for the cloud's
          HTTPS and the broker's TLS
--allow-insecure-mqtt: with an https cloud, use a plaintext broker address (mqtt://, ws://)
          when no TLS one is offered (labs only)
--release-key FILE: the public key updates must be signed with, instead of the one installed
          with the program (share/release-key.pub; labs)
release-key: a new key pair, DIR/release-key.pem (private, 0600) and DIR/release-key.pub;
sign-release: writes TARBALL.sig, the signature the cloud and the agents check
`

class UsageError extends Error {}

interface StartArgs {
  cloudUrl: string
  dataDir: string
  playerPort: number
  cacheMaxBytes: number
  serial: { kind: 'path'; path: string } | { kind: 'tcp'; host: string; port: number } | null
  model: string
  serialNumber: string
  logLevel: LogLevel
  /** PEM text of --ca. */
  caPem: string | null
  allowInsecureMqtt: boolean
  /** PEM text of --release-key. */
  releaseKeyPem: string | null
  releaseKeyFile: string | null
}

function parseStartArgs(argv: string[]): StartArgs {
  let values
  try {
    ;({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        cloud: { type: 'string' },
        serial: { type: 'string' },
        data: { type: 'string' },
        'player-port': { type: 'string' },
        model: { type: 'string' },
        'serial-number': { type: 'string' },
        'log-level': { type: 'string' },
        'cache-max-mb': { type: 'string' },
        ca: { type: 'string' },
        'allow-insecure-mqtt': { type: 'boolean' },
        'release-key': { type: 'string' },
      },
    }))
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
  if (!values.cloud) throw new UsageError('--cloud is required (the cloud API base URL, e.g. https://signage.example.com)')
  let cloud: URL
  try {
    cloud = new URL(values.cloud)
  } catch {
    throw new UsageError(`--cloud must be an http(s) URL, got "${values.cloud}"`)
  }
  if (cloud.protocol !== 'http:' && cloud.protocol !== 'https:') throw new UsageError(`--cloud must be an http(s) URL, got "${values.cloud}"`)
  const portText = values['player-port']
  let playerPort = DEFAULT_PLAYER_PORT
  if (portText !== undefined) {
    playerPort = Number(portText)
    if (portText.trim() === '' || !Number.isInteger(playerPort) || playerPort < 0 || playerPort > 65535)
      throw new UsageError(`--player-port must be a whole number from 0 to 65535, got "${portText}"`)
  }
  const mbText = values['cache-max-mb']
  let cacheMaxBytes = DEFAULT_CACHE_MAX_BYTES
  if (mbText !== undefined) {
    const mb = Number(mbText)
    if (mbText.trim() === '' || !Number.isInteger(mb) || mb < 1)
      throw new UsageError(`--cache-max-mb must be a whole number of megabytes, at least 1, got "${mbText}"`)
    cacheMaxBytes = mb * 1024 ** 2
  }
  const level = values['log-level'] ?? 'info'
  if (!['debug', 'info', 'warn', 'error'].includes(level)) throw new UsageError(`--log-level must be debug, info, warn or error, got "${level}"`)
  return {
    cloudUrl: cloud.href.replace(/\/+$/, ''),
    dataDir: path.resolve(values.data ?? './agent-data'),
    playerPort,
    cacheMaxBytes,
    serial: serialArg(values.serial),
    model: values.model ?? `svc-agent (${os.platform()} ${os.arch()})`,
    serialNumber: values['serial-number'] ?? os.hostname(),
    logLevel: level as LogLevel,
    caPem: values.ca === undefined ? null : caFile(values.ca),
    allowInsecureMqtt: values['allow-insecure-mqtt'] === true,
    releaseKeyPem: values['release-key'] === undefined ? null : releaseKeyFile(values['release-key']),
    releaseKeyFile: values['release-key'] === undefined ? null : path.resolve(values['release-key']),
  }
}

/** The PEM text of --release-key FILE, checked to be an Ed25519 public key. */
function releaseKeyFile(file: string): string {
  let text: string
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (err) {
    const e = err as NodeJS.ErrnoException
    throw new UsageError(`--release-key: cannot read ${file}: ${e.code ?? e.message}`)
  }
  try {
    if (!text.includes('-----BEGIN PUBLIC KEY-----')) throw new Error('not a public key (PEM "-----BEGIN PUBLIC KEY-----", release-key.pub)')
    releasePublicKey(text)
  } catch (err) {
    throw new UsageError(`--release-key: ${file}: ${(err as Error).message}`)
  }
  return text
}

/**
 * Updates: supervised when the launcher's supervisor started this process (its state file in
 * the environment); the release key is --release-key, else the running program's
 * share/release-key.pub.
 */
function updateSetup(args: StartArgs, restart: () => void): UpdateSetup {
  const stateFile = process.env[STATE_ENV] || null
  const program = process.env[PROGRAM_ENV] || null
  let releaseKeyPem = args.releaseKeyPem
  let releaseKeySource = args.releaseKeyFile ?? (program ? path.join(program, 'share', 'release-key.pub') : 'share/release-key.pub of the packed program')
  if (releaseKeyPem === null && program) {
    try {
      releaseKeyPem = fs.readFileSync(releaseKeySource, 'utf8')
    } catch {
      releaseKeySource = `${releaseKeySource} is missing`
    }
  }
  return { stateFile, installedVersion: process.env[INSTALLED_ENV] || AGENT_VERSION, releaseKeyPem, releaseKeySource, restart }
}

/** The PEM text of --ca FILE, checked to hold a certificate. */
function caFile(file: string): string {
  let text: string
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (err) {
    const e = err as NodeJS.ErrnoException
    throw new UsageError(`--ca: cannot read ${file}: ${e.code ?? e.message}`)
  }
  try {
    new X509Certificate(text)
  } catch {
    throw new UsageError(`--ca: ${file} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`)
  }
  return text
}

function serialArg(v: string | undefined): StartArgs['serial'] {
  if (v === undefined) return null
  if (v.startsWith('tcp://')) {
    const m = /^tcp:\/\/([^:/]+|\[[0-9a-fA-F:]+\]):(\d{1,5})$/.exec(v)
    const port = m ? Number(m[2]) : NaN
    if (!m || port < 1 || port > 65535) throw new UsageError(`--serial tcp://HOST:PORT needs a host and a port from 1 to 65535, got "${v}"`)
    return { kind: 'tcp', host: m[1]!.replace(/^\[|\]$/g, ''), port }
  }
  if (v.trim() === '') throw new UsageError('--serial needs a device path (e.g. /dev/ttyUSB0) or tcp://HOST:PORT')
  return { kind: 'path', path: v }
}

/** The panel driver for --serial (a device path, a pty, or tcp://host:port), or null. */
function panelDriver(args: StartArgs): DisplayDriver | null {
  if (!args.serial) return null
  const path = args.serial.kind === 'path' ? args.serial.path : `tcp://${args.serial.host}:${args.serial.port}`
  // Jobs name their protocol (from the screen's panel profile); unnamed ones are read raw.
  return new DisplayDriver({ path })
}

/** Serial jobs run on the driver, which opens and closes with the job dispatcher. */
function serialRunner(driver: DisplayDriver | null): SerialJobRunner {
  if (!driver) return new UnavailableSerialRunner(systemClock)
  return new DriverJobRunner(driver)
}

async function start(argv: string[]): Promise<number> {
  const args = parseStartArgs(argv)
  const driver = panelDriver(args)
  // An installed update: stop as for a signal, then exit 75 (the supervisor starts the new version).
  let shutdown: (why: Record<string, unknown>, code: number) => void = () => undefined
  const agent = new Agent({
    update: updateSetup(args, () => shutdown({ reason: 'update installed' }, RESTART_EXIT_CODE)),
    cloudUrl: args.cloudUrl,
    dataDir: args.dataDir,
    playerPort: args.playerPort,
    cacheMaxBytes: args.cacheMaxBytes,
    device: { model: args.model, serialNumber: args.serialNumber },
    ...(args.caPem ? { caPem: args.caPem } : {}),
    allowInsecureMqtt: args.allowInsecureMqtt,
    serialRunner: serialRunner(driver),
    ...(driver ? { panelDriver: driver } : {}),
    log: new JsonLogger({ write: (l) => process.stdout.write(l), level: args.logLevel }),
    // What the cloud's `logs` jobs fetch: the lines stdout gets.
    logRing: { level: args.logLevel },
    announce: (text) => process.stdout.write(`\n  ${text}\n\n`),
  })
  // Every line from here goes to stdout and to the agent's recent lines.
  const log = agent.log
  if (driver) {
    // The port opens now, paired or not, so the installer sees the wire from the start.
    logPanelPort(driver, log.child({ part: 'serial' }))
    void driver.start()
  }
  let stopping = false
  const done = new Promise<number>((resolve) => {
    shutdown = (why, code): void => {
      if (stopping) return
      stopping = true
      log.info(why, 'shutting down')
      const force = setTimeout(() => {
        log.error('shutdown took too long; exiting')
        resolve(1)
      }, 10_000)
      force.unref()
      agent
        .stop()
        .then(() => driver?.stop())
        .then(
          () => {
            clearTimeout(force)
            log.info('stopped')
            resolve(code)
          },
          (err: unknown) => {
            log.error({ err: err as Error }, 'shutdown failed')
            resolve(1)
          },
        )
    }
    const onSignal = (signal: NodeJS.Signals): void => shutdown({ signal }, 0)
    // `on`, not `once`: Ctrl-C under pnpm arrives twice (terminal, then pnpm); the guard ignores the echo.
    process.on('SIGINT', onSignal)
    process.on('SIGTERM', onSignal)
  })
  try {
    await agent.start()
  } catch (err) {
    const e = err as NodeJS.ErrnoException
    if (e.code === 'EADDRINUSE') log.error(`player page port ${args.playerPort} is in use; choose another with --player-port`)
    else log.error({ err: e }, 'agent could not start')
    await agent.stop().catch(() => undefined)
    await driver?.stop().catch(() => undefined)
    return 1
  }
  return done
}

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv
  if (cmd === undefined || cmd === '--help' || cmd === '-h' || cmd === 'help') {
    ;(cmd === undefined ? process.stderr : process.stdout).write(USAGE)
    return cmd === undefined ? 2 : 0
  }
  if (cmd === '--version' || cmd === 'version') {
    process.stdout.write(`${AGENT_VERSION}\n`)
    return 0
  }
  if (cmd === 'health') return (await import('./player/healthCommand.js')).healthCommand(rest)
  if (cmd === 'release-key') return (await import('./releases/commands.js')).releaseKeyCommand(rest)
  if (cmd === 'sign-release') return (await import('./releases/commands.js')).signReleaseCommand(rest)
  if (cmd === 'pack') return (await import('./pack/command.js')).packCommand(rest)
  if (cmd !== 'start') throw new UsageError(`unknown command "${cmd}"`)
  return start(rest)
}

main(process.argv.slice(2)).then(
  // Exits at once, once stdout is flushed, rather than when the event loop runs dry: a process
  // ending that way first gives SIGINT its default action back, so the Ctrl-C that pnpm (or the
  // launcher) forwards a moment after the terminal's could still kill it by signal, and the
  // wrapper would report a failure after a clean stop. Nor can a stray handle hang the service manager.
  (code) => process.stdout.write('', () => process.exit(code)),
  (err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`${PROGRAM}: ${err.message}\n${USAGE}`)
      process.exitCode = 2
    } else {
      process.stderr.write(`${PROGRAM}: ${err instanceof Error ? err.message : String(err)}\n`)
      process.exitCode = 1
    }
  },
)
