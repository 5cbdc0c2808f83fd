/**
 * firmware-sim command line (run as `pnpm sim <cmd>` from the repo root).
 *
 *   start --protocol P [--tcp PORT] [--pty [LINK]] [--serial PATH] [--id N] [--web PORT]
 *         [--host ADDR] [--fault F]... [--trace FILE] [--lg-quirk Q]... [--raw-reply TEXT]
 *   run-template --protocol P --template FILE.json [--item ID] [--id N] [--fault F]...
 *         [--timeout MS] [--json]
 *
 * Bad arguments: a message on stderr and exit code 2, never a stack trace.
 */
import { createWriteStream, readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { parseArgs } from 'node:util'
import { FirmwareSim } from './FirmwareSim.js'
import { parseFault, type Faults } from './faults.js'
import { SIM_PROTOCOLS, type SimProtocol } from './personalities/Personality.js'
import { formatTrace } from './trace.js'
import { formatResult, parseTemplateJson, runTemplate, UnknownItemError } from './runTemplate.js'
import type { LgQuirks } from './personalities/LgPersonality.js'

const USAGE = `usage:
  sim start --protocol ${SIM_PROTOCOLS.join('|')} [--tcp PORT] [--pty [LINK]] [--serial PATH]
            [--id N] [--web PORT] [--host ADDR] [--fault F]... [--trace FILE]
            [--lg-quirk ng-except-power|power-only-when-on]... [--raw-reply TEXT] [--raw-silence MS]
  sim run-template --protocol P --template FILE.json [--item ID] [--id N] [--fault F]...
            [--timeout MS] [--json]
faults: no-reply | nak | delay:MS | split[:CHUNK[:GAP_MS]] | garbage[:HEX] | bad-checksum
        | ignore-power | ignore-standby | no-cec (cec: a TV without CEC)
cec: --id N is the TV's HDMI input the player is on (1-15, default 1)
`

class UsageError extends Error {}

const COMMON = {
  protocol: { type: 'string' },
  id: { type: 'string' },
  fault: { type: 'string', multiple: true },
  'lg-quirk': { type: 'string', multiple: true },
  'raw-reply': { type: 'string' },
  'raw-silence': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const

function intArg(name: string, v: string | undefined, min: number, max: number): number | undefined {
  if (v === undefined) return undefined
  const n = Number(v)
  if (v.trim() === '' || !Number.isInteger(n) || n < min || n > max) {
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, got "${v}"`)
  }
  return n
}

function protocolArg(v: string | undefined): SimProtocol {
  if (v === undefined) throw new UsageError('--protocol is required')
  if (!(SIM_PROTOCOLS as readonly string[]).includes(v)) {
    throw new UsageError(`--protocol must be one of ${SIM_PROTOCOLS.join(', ')}, got "${v}"`)
  }
  return v as SimProtocol
}

/** CEC: --id is the TV's HDMI input the player is on (the physical address N.0.0.0); default 1. */
function cecInputArg(v: string | undefined): number {
  if (v === undefined) return 1
  const n = Number(v)
  if (v.trim() === '' || !Number.isInteger(n) || n < 1 || n > 15)
    throw new UsageError(`--id for cec is the TV's HDMI input the player is on, a whole number from 1 to 15, got "${v}"`)
  return n
}

/**
 * What an installer reads on stderr when the CEC simulator starts (and when its faults
 * change): what is simulated, the panel settings that match it, and what each CEC fault
 * looks like from the agent.
 */
function cecNotes(id: number, faults: string[]): string {
  const lines = [
    `cec: a Pulse-Eight USB-CEC adapter with a TV behind it; the player is on the TV's HDMI ${id}: give the screen the panel {"protocol":"cec","setId":${id}} and the agent --serial this port`,
  ]
  if (faults.includes('no-cec'))
    lines.push(
      'cec: the TV answers no CEC (fault no-cec): the adapter reports every message to it unacknowledged; the agent reports power unknown with problem "no-cec", never "off" (on site: the TV\'s CEC setting is off, or the cable or an HDMI switch drops CEC)',
    )
  if (faults.includes('ignore-standby'))
    lines.push("cec: the TV acknowledges Standby and stays on (fault ignore-standby): the hours' read-back reports it not obeying (panel-not-obeying)")
  return `${lines.join('\n')}\n`
}

/** Why the simulator's own port did not open, as an installer reads it. */
function startFailure(err: Error & { code?: string }, serialPath: string | undefined): string {
  const reason = err.message
  if (serialPath !== undefined) {
    if (err.code === 'ENOENT' || /no such file or directory|ENOENT/i.test(reason))
      return `serial port ${serialPath} does not exist (${reason}); without hardware, --pty makes a pseudo-terminal pair instead`
    if (err.code === 'EBUSY' || /cannot lock port|resource busy|EBUSY/i.test(reason))
      return `serial port ${serialPath} is in use by another program (${reason}); one program per port: stop the other one (the agent, cec-client, a second simulator)`
  }
  return reason
}

function faultsArg(specs: string[] | undefined): Faults {
  let faults: Faults = {}
  for (const s of specs ?? []) {
    try {
      faults = { ...faults, ...parseFault(s) }
    } catch (err) {
      throw new UsageError((err as Error).message)
    }
  }
  return faults
}

function lgQuirks(specs: string[] | undefined): LgQuirks {
  const q: LgQuirks = {}
  for (const s of specs ?? []) {
    if (s === 'ng-except-power') q.ngExceptPower = true
    else if (s === 'power-only-when-on') q.powerOnlyWhenOn = true
    else throw new UsageError(`--lg-quirk must be ng-except-power or power-only-when-on, got "${s}"`)
  }
  return q
}

/** "\r", "\n", "\t" and "\xNN" in --raw-reply, so installers can type line endings. */
function unescape(s: string): string {
  return s.replace(/\\(r|n|t|\\|x([0-9a-fA-F]{2}))/g, (_m, c: string, hex?: string) =>
    hex ? String.fromCharCode(parseInt(hex, 16)) : c === 'r' ? '\r' : c === 'n' ? '\n' : c === 't' ? '\t' : '\\',
  )
}

function personalityOptions(values: { 'lg-quirk'?: string[]; 'raw-reply'?: string; 'raw-silence'?: string }) {
  const silence = intArg('raw-silence', values['raw-silence'], 1, 60000)
  return {
    lg: lgQuirks(values['lg-quirk']),
    raw: {
      ...(values['raw-reply'] !== undefined ? { reply: Buffer.from(unescape(values['raw-reply']), 'latin1') } : {}),
      ...(silence !== undefined ? { silenceMs: silence } : {}),
    },
  }
}

/** `--pty` takes an optional value; parseArgs does not, so give a bare --pty an empty one. */
function normalizePty(argv: string[]): string[] {
  const out: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    const next = argv[i + 1]
    if (a === '--pty' && (next === undefined || next.startsWith('--'))) out.push('--pty=')
    else out.push(a)
  }
  return out
}

async function start(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: normalizePty(argv),
    options: {
      ...COMMON,
      tcp: { type: 'string' },
      pty: { type: 'string' },
      serial: { type: 'string' },
      web: { type: 'string' },
      host: { type: 'string' },
      trace: { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  })
  if (values.help) {
    process.stdout.write(USAGE)
    return 0
  }
  const protocol = protocolArg(values.protocol)
  const id = protocol === 'cec' ? cecInputArg(values.id) : (intArg('id', values.id, 0, 255) ?? 1)
  let tcpPort = intArg('tcp', values.tcp, 0, 65535)
  const webPort = intArg('web', values.web, 0, 65535)
  const faults = faultsArg(values.fault)
  const popts = personalityOptions(values)
  if (tcpPort === undefined && values.pty === undefined && values.serial === undefined) tcpPort = 0
  const host = values.host

  const sim = new FirmwareSim({
    protocol,
    state: { id },
    faults,
    personalityOptions: popts,
    ...(tcpPort !== undefined ? { tcp: { port: tcpPort, ...(host ? { host } : {}) } } : {}),
    ...(values.pty !== undefined ? { pty: values.pty ? { link: values.pty } : true } : {}),
    ...(values.serial !== undefined ? { serial: { path: values.serial } } : {}),
    ...(webPort !== undefined ? { web: { port: webPort, ...(host ? { host } : {}) } } : {}),
  })
  const traceOut = values.trace ? createWriteStream(values.trace, { flags: 'a' }) : process.stderr
  sim.panel.on('trace', (e) => traceOut.write(`${formatTrace(e)}\n`))
  sim.panel.on('state', (c) => traceOut.write(`${new Date().toISOString()} state ${c.field} ${String(c.from)} -> ${String(c.to)}\n`))
  sim.panel.on('error', (err) => process.stderr.write(`firmware-sim: ${err.message}\n`))

  // The signal handlers come before the ready line: a Ctrl-C sent the moment the line is
  // read must find them. `on`, not `once`: Ctrl-C under pnpm arrives twice (terminal, then
  // pnpm); the guard ignores the echo.
  let stopping = false
  let started = false
  let signalled = false
  let finish: (code: number) => void = () => undefined
  const shutdown = async (code: number) => {
    if (stopping) return
    stopping = true
    await sim.stop()
    if (traceOut !== process.stderr) await new Promise<void>((r) => (traceOut as NodeJS.WritableStream).end(r))
    finish(code)
  }
  const onSignal = () => {
    if (started) void shutdown(0)
    else signalled = true
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)

  let info
  try {
    info = await sim.start()
  } catch (err) {
    process.stderr.write(`firmware-sim: cannot start: ${startFailure(err as Error & { code?: string }, values.serial)}\n`)
    return 1
  }
  process.stdout.write(
    `${JSON.stringify({
      protocol: info.protocol,
      id: info.id,
      tcpPort: info.tcpPort,
      ptyPath: info.ptyPath,
      serialPath: info.serialPath,
      webUrl: info.webUrl,
      faults: sim.panel.describeFaults(),
    })}\n`,
  )
  if (protocol === 'cec') process.stderr.write(cecNotes(id, sim.panel.describeFaults()))

  return new Promise<number>((resolve) => {
    finish = resolve
    started = true
    if (signalled) void shutdown(0)
    // runtime control on stdin: "fault nak", "clear", "unplug", "state", "quit"
    const rl = createInterface({ input: process.stdin })
    rl.on('line', (line) => {
      const [cmd, arg] = line.trim().split(/\s+/, 2)
      try {
        if (cmd === 'fault' && arg) sim.panel.setFaults(parseFault(arg))
        else if (cmd === 'clear') sim.panel.clearFaults()
        else if (cmd === 'unplug') void sim.unplug()
        else if (cmd === 'quit') void shutdown(0)
        else if (cmd === 'state' || cmd === '') {
          /* fall through to the status line */
        } else throw new Error(`unknown control "${line.trim()}"; use fault F | clear | unplug | state | quit`)
        process.stderr.write(`${JSON.stringify({ state: sim.panel.state, faults: sim.panel.describeFaults() })}\n`)
        if (protocol === 'cec' && (cmd === 'fault' || cmd === 'clear')) process.stderr.write(cecNotes(id, sim.panel.describeFaults()))
      } catch (err) {
        process.stderr.write(`firmware-sim: ${(err as Error).message}\n`)
      }
    })
    rl.on('close', () => {
      /* stdin closed: keep serving until a signal */
    })
  })
}

async function runTemplateCmd(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      ...COMMON,
      template: { type: 'string' },
      item: { type: 'string' },
      timeout: { type: 'string' },
      json: { type: 'boolean' },
    },
    strict: true,
    allowPositionals: false,
  })
  if (values.help) {
    process.stdout.write(USAGE)
    return 0
  }
  const protocol = protocolArg(values.protocol)
  if (!values.template) throw new UsageError('--template FILE.json is required')
  const id = intArg('id', values.id, 0, 255) ?? 1
  const timeoutMs = intArg('timeout', values.timeout, 1, 60000) ?? 1000
  const faults = faultsArg(values.fault)
  let text: string
  try {
    text = readFileSync(values.template, 'utf8')
  } catch (err) {
    throw new UsageError(`cannot read --template ${values.template}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  let template
  try {
    template = parseTemplateJson(text)
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
  let result
  try {
    result = await runTemplate({
      protocol,
      template,
      id,
      faults,
      timeoutMs,
      personalityOptions: personalityOptions(values),
      ...(values.item !== undefined ? { itemId: values.item } : {}),
    })
  } catch (err) {
    if (err instanceof UnknownItemError) throw new UsageError(err.message)
    throw err
  }
  const out = process.stdout
  if (values.json) {
    for (const r of result.results) out.write(`${JSON.stringify(r)}\n`)
    out.write(`${JSON.stringify({ summary: true, template: result.template, protocol, ok: result.ok, greeting: result.greeting })}\n`)
  } else {
    out.write(`template "${result.template}" on a simulated ${protocol} panel (id ${id})\n`)
    if (result.greeting) out.write(`greeting: ${result.greeting}\n`)
    result.results.forEach((r, i) => out.write(`${formatResult(r, i + 1, result.results.length)}\n`))
    const bad = result.results.filter((r) => r.outcome !== 'ok').length
    out.write(bad ? `${bad} of ${result.results.length} commands failed\n` : `all ${result.results.length} commands answered\n`)
  }
  return result.ok ? 0 : 1
}

export async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv
  try {
    switch (cmd) {
      case 'start':
        return await start(rest)
      case 'run-template':
        return await runTemplateCmd(rest)
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(USAGE)
        return cmd === undefined ? 2 : 0
      default:
        throw new UsageError(`unknown command "${cmd}"`)
    }
  } catch (err) {
    const code = (err as { code?: unknown }).code
    if (err instanceof UsageError || (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'))) {
      process.stderr.write(`firmware-sim: ${(err as Error).message}\n${USAGE}`)
      return 2
    }
    process.stderr.write(`firmware-sim: ${(err as Error).message}\n`)
    return 1
  }
}

// exit explicitly once stdout is flushed: the stdin reader must not keep a finished command alive
main(process.argv.slice(2)).then(
  (code) => process.stdout.write('', () => process.exit(code)),
  (err: unknown) => {
    process.stderr.write(`firmware-sim: ${(err as Error).message}\n`)
    process.exit(1)
  },
)
