/**
 * `pnpm demo`: the first ten minutes. Starts the cloud on its own data folder, three
 * simulated screen players with three simulated panels (Samsung MDC, LG, NEC), pairs
 * them, casts a playlist to them and powers the panels on over RS232, then prints where
 * to look and how to go on by hand.
 *
 *   pnpm demo [--headless] [--data DIR] [--tcp]
 *
 *   --headless  run the steps, print the summary and a final JSON line
 *               {"ok": true|false, "steps": [...]}, stop everything; exit 0 / 1
 *   --data DIR  the demo's data folder (default $SVC_DATA_DIR, else ./data/demo);
 *               emptied at start if an earlier demo made it, refused if anything else did
 *   --tcp       link the panels over TCP even when socat is installed
 *
 * Without --headless it keeps running until Ctrl-C; SIGINT/SIGTERM stop the agents, the
 * panels (and socat) and the cloud, and exit 0.
 */
import path from 'node:path'
import { parseArgs } from 'node:util'
import { Demo, PANELS, prepareDataDir, type DemoResult } from './Demo.js'
import { Progress } from './progress.js'

const USAGE = 'usage: pnpm demo [--headless] [--data DIR] [--tcp]\n'

function parse(argv: string[]): { headless: boolean; data: string; tcp: boolean } {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: { headless: { type: 'boolean' }, data: { type: 'string' }, tcp: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
  })
  if (values.help) {
    process.stdout.write(USAGE)
    process.exit(0)
  }
  if (values.data !== undefined && values.data.trim() === '') throw new Error('--data needs a folder')
  return {
    headless: values.headless ?? false,
    data: path.resolve(values.data ?? process.env.SVC_DATA_DIR ?? './data/demo'),
    tcp: values.tcp ?? false,
  }
}

function summary(r: DemoResult, notes: string[], dataDir: string, ok: boolean, headless: boolean): string {
  const out: string[] = ['']
  out.push(ok ? '━━ The demo network is up ━━' : '━━ The demo stopped at a failed step (see ✘ above) ━━')
  out.push(
    `  Cloud       ${r.base || '(not started)'}   HTTP ${r.httpPort || '-'}, MQTT over TCP ${r.mqttPort ?? 'off'}, MQTT over WebSocket ${r.base ? `${r.base.replace(/^http/, 'ws')}/mqtt` : '-'}`,
  )
  out.push(`  Data        ${dataDir}   (cloud database, broker store, media; players under players/, each with agent.log)`)
  out.push(`  Panel link  ${r.transport === 'pty' ? 'socat pseudo-terminals (like an RS232 cable)' : 'TCP (like an RS232-over-IP gateway)'}`)
  for (const n of notes) out.push(`  Note        ${n}`)
  if (r.workspaceId) out.push(`  Workspace   ${r.workspaceId}`)
  if (r.apiKey) out.push(`  API key     ${r.apiKey}`)
  if (r.screens.length) {
    out.push('', '  Screens (player page = what the screen shows; panel page = the simulated display, live):')
    for (const s of r.screens) {
      out.push(`    ${s.name.padEnd(26)} ${s.screenId ?? '(unpaired)'}`)
      out.push(`      player  ${s.playerUrl ?? '-'}`)
      out.push(`      panel   ${s.panelWebUrl ?? '-'}   (${s.label} on ${s.panelLink ?? '-'}; power on = ${s.powerOnHex})`)
    }
  }
  if (r.base) out.push('', `  API docs    ${r.base}/v1/docs   (OpenAPI: ${r.base}/v1/openapi.json)`)
  if (r.apiKey) {
    const s0 = r.screens[0]
    const sid = s0?.screenId ?? 'scr_…'
    out.push(
      '',
      '  Go on by hand:',
      `    export SVC=${r.base} KEY=${r.apiKey}`,
      '    curl -s -H "Authorization: Bearer $KEY" $SVC/v1/screens',
      `    curl -s -H "Authorization: Bearer $KEY" $SVC/v1/screens/${sid}`,
      `    # power the ${s0?.label ?? 'first'} panel off (watch its panel page):`,
      `    curl -s -X POST -H "Authorization: Bearer $KEY" -H 'content-type: application/json' \\`,
      `      -d '{"value":"AA 11 01 01 00 13","encoding":"hex","protocol":"samsung-mdc"}' $SVC/v1/screens/${sid}/serial`,
      '    curl -s -H "Authorization: Bearer $KEY" $SVC/v1/serial-jobs/<job id from the answer>',
    )
    if (r.castId)
      out.push(
        `    # end the cast (players go back to their assignment, here nothing):`,
        `    curl -s -X POST -H "Authorization: Bearer $KEY" $SVC/v1/casts/${r.castId}/clear`,
      )
    out.push('    More: docs/api-guide.md')
  }
  if (!headless && ok) out.push('', '  Press Ctrl-C to stop everything.')
  out.push('')
  return `${out.join('\n')}\n`
}

async function main(): Promise<number> {
  let args
  try {
    args = parse(process.argv.slice(2))
  } catch (err) {
    process.stderr.write(`demo: ${(err as Error).message}\n${USAGE}`)
    return 2
  }
  const write = (t: string): void => void process.stdout.write(t)
  const progress = new Progress({ write, tty: Boolean(process.stdout.isTTY), columns: process.stdout.columns })
  const notes: string[] = []
  const note = (t: string): void => {
    notes.push(t)
    write(`  ! ${t}\n`)
  }

  write(`svc demo: cloud + ${PANELS.length} simulated players and panels (${PANELS.map((p) => p.label).join(', ')})\n`)
  try {
    const how = await prepareDataDir(args.data)
    write(`  data folder ${args.data}${how === 'reset' ? ' (emptied: left over from an earlier demo run)' : ''}\n`)
  } catch (err) {
    process.stderr.write(`demo: ${(err as Error).message}\n`)
    if (args.headless)
      write(`${JSON.stringify({ ok: false, steps: [{ step: 'prepare the data folder', ok: false, ms: 0, detail: (err as Error).message }] })}\n`)
    return 1
  }

  const demo = new Demo({ dataDir: args.data, env: process.env, progress, tcp: args.tcp, note })

  // One shutdown path for signals at any moment (during steps, too) and for --headless.
  let stopping: Promise<void> | null = null
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      const force = setTimeout(() => {
        process.stderr.write('demo: shutdown took too long; exiting\n')
        process.exit(1)
      }, 15_000)
      force.unref()
      await demo.stop()
      clearTimeout(force)
    })()
    return stopping
  }
  let signalled: (() => void) | null = null
  const signalledP = new Promise<void>((resolve) => (signalled = resolve))
  let gotSignal = false
  const onSignal = (sig: NodeJS.Signals): void => {
    // Ctrl-C under pnpm arrives twice (terminal, then pnpm): the echo is ignored.
    if (gotSignal) return
    gotSignal = true
    write(`\n${sig}: stopping the players, the panels and the cloud…\n`)
    signalled!()
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)

  const ok = await Promise.race([demo.run(), signalledP.then(() => null)])
  if (ok === null) {
    await stop()
    write('stopped.\n')
    return 0
  }
  write(summary(demo.result, notes, args.data, ok, args.headless))

  if (args.headless) {
    await stop()
    write(`${JSON.stringify({ ok, steps: progress.steps })}\n`)
    return ok ? 0 : 1
  }
  if (!ok) {
    await stop()
    return 1
  }
  await signalledP
  await stop()
  write('stopped.\n')
  return 0
}

main().then(
  (code) => {
    process.exitCode = code
    // Everything is closed by now; a stray handle must not keep the demo alive.
    setTimeout(() => process.exit(code), 500).unref()
  },
  (err: unknown) => {
    process.stderr.write(`demo: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
    process.exit(1)
  },
)
