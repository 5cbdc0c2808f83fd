// `agent health`: asks the local player page (`GET /health`) whether the agent answers and
// whether a kiosk page is there. For a service manager: the packed agent's watchdog timer
// restarts the agent or the kiosk browser on its exit code, and the kiosk browser's unit
// waits with it until the page answers before opening it.
//
//   health [--player-port N] [--wait SECONDS] [--page-silent-after SECONDS]
//
// One JSON line on stdout. Exit 0: healthy; 1: the agent did not answer (within --wait);
// 3: the agent answers, but no kiosk page has spoken for --page-silent-after seconds;
// 2: bad arguments.
import { parseArgs } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import type { PlayerHealth } from './PlayerServer.js'
import { PROGRAM } from '../version.js'

export const HEALTH_USAGE = `usage:
  ${PROGRAM} health [--player-port N] [--wait SECONDS] [--page-silent-after SECONDS]
  exit 0: the player page answers (and a kiosk page spoke within --page-silent-after);
  1: the agent does not answer (after trying for --wait seconds, default 0); 3: the kiosk page is silent
`

/** Each attempt's own time limit: a hung agent accepts the connection but never answers. */
const ATTEMPT_MS = 3000

interface HealthArgs {
  port: number
  waitMs: number
  silentAfterMs: number | null
}

function parse(argv: string[]): HealthArgs | string {
  let values
  try {
    ;({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: { 'player-port': { type: 'string' }, wait: { type: 'string' }, 'page-silent-after': { type: 'string' } },
    }))
  } catch (err) {
    return (err as Error).message
  }
  const whole = (name: string, text: string | undefined, min: number, max: number): number | string | undefined => {
    if (text === undefined) return undefined
    const n = Number(text)
    return text.trim() !== '' && Number.isInteger(n) && n >= min && n <= max ? n : `--${name} must be a whole number from ${min} to ${max}, got "${text}"`
  }
  const port = whole('player-port', values['player-port'], 1, 65535) ?? 7070
  const wait = whole('wait', values.wait, 0, 3600) ?? 0
  const silent = whole('page-silent-after', values['page-silent-after'], 1, 86400)
  for (const v of [port, wait, silent]) if (typeof v === 'string') return v
  return { port: port as number, waitMs: (wait as number) * 1000, silentAfterMs: silent === undefined ? null : (silent as number) * 1000 }
}

async function probe(port: number): Promise<PlayerHealth> {
  const res = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(ATTEMPT_MS) })
  if (res.status !== 200) throw new Error(`HTTP ${res.status}`)
  const body = (await res.json()) as PlayerHealth
  if (body.ok !== true) throw new Error('not the agent')
  return body
}

export async function healthCommand(argv: string[]): Promise<number> {
  const args = parse(argv)
  if (typeof args === 'string') {
    process.stderr.write(`${PROGRAM}: ${args}\n${HEALTH_USAGE}`)
    return 2
  }
  const end = Date.now() + args.waitMs
  let health: PlayerHealth | null = null
  let error = ''
  for (;;) {
    try {
      health = await probe(args.port)
      break
    } catch (err) {
      const e = err as Error & { cause?: { code?: string } }
      error = e.cause?.code ?? (e.name === 'TimeoutError' ? `no answer within ${ATTEMPT_MS} ms` : e.message)
    }
    if (Date.now() >= end) break
    await sleep(Math.min(500, Math.max(0, end - Date.now())))
  }
  const url = `http://127.0.0.1:${args.port}/`
  if (!health) {
    process.stdout.write(`${JSON.stringify({ agent: 'down', url, error })}\n`)
    return 1
  }
  const silent = args.silentAfterMs !== null && health.pageSilentMs > args.silentAfterMs
  process.stdout.write(
    `${JSON.stringify({ agent: 'ok', url, ...(args.silentAfterMs !== null ? { page: silent ? 'silent' : 'ok' } : {}), pages: health.pages, pageSilentMs: health.pageSilentMs })}\n`,
  )
  return silent ? 3 : 0
}
