// A fleet of simulated devices in a child process, shared by the benches that time a takeover
// reaching every screen (bench/cast-fanout.ts, bench/cap.ts). `forkFleet()` starts it and
// answers a channel to it; in the child, each device is an mqtt.js client (clean: false,
// QoS 1, its own credentials) connecting `BATCH` at a time, keeping the newest desired state
// it got and, when asked (`report`), reporting what it applied as the agent does (the
// version and what plays, decided by the shared playback code). `arm` starts a phase: the
// child answers `armed`, then `done` once every device holds what `match` names, with each
// device's absolute high-resolution time (performance.timeOrigin + performance.now()).
// `arm-reconnect` waits for every device to lose its connection and get it back.
import { join } from 'node:path'
import type { ChildProcess } from 'node:child_process'
import net from 'node:net'
import { MqttClient, connectAsync, type IClientOptions } from 'mqtt'
import { encodeMessage, topics, type DesiredState, type Reported } from '@svc/shared/mqtt/index'
import { decidePlayback, toPlaying } from '@svc/shared/playback/index'
import { ROOT, forkScript, now, sleep } from './harness.js'

/** Devices connecting at once. */
export const BATCH = 100

export interface Cred {
  id: string
  password: string | undefined
}

/** What every device must hold for a phase to be done. */
export type Match =
  | { kind: 'cast'; contentId: string }
  | { kind: 'version'; min: number }
  /** A cast, in a desired state newer than the one held when the restart began. */
  | { kind: 'cast-since-restart'; contentId: string }
  /** An emergency whose message carries `token`. */
  | { kind: 'emergency'; token: string }
  /** A desired state without an emergency. */
  | { kind: 'no-emergency' }

export type ToFleet =
  /** `tries`: connect attempts per device (a loaded machine resets some during the storm; default 1). */
  | { type: 'connect'; url: string | string[]; creds: Cred[]; report: boolean; tries?: number }
  | { type: 'arm'; phase: string; match: Match }
  | { type: 'arm-reconnect'; phase: string }
  | { type: 'end' }

export type FromFleet =
  | { type: 'connected'; ms: number; rss: number }
  | { type: 'armed' }
  /** times: each device's (absolute) time it held the match; sizes: each held desired state's bytes; sample: the first one. */
  | { type: 'done'; phase: string; times: number[]; sizes: number[]; sample: string }
  | { type: 'ended'; regressions: number }
  | { type: 'error'; message: string }

/** Loopback source addresses the devices are spread over (127.0.x.9), as a fleet comes from many addresses. */
const SOURCES = 200

/**
 * One device's connection. To a loopback broker it comes from its own loopback source address
 * (127.0.<10 + k mod 200>.9): the broker bounds handshakes per remote address (32 by default,
 * HandshakeGate), and a fleet of real screens comes from many addresses, not one; it also
 * keeps a large fleet clear of one address's ephemeral port range. mqtt.js passes no source
 * address to its socket, so the stream is built here (and again on each reconnect).
 */
function connectOnce(url: string, opts: IClientOptions, k: number): Promise<MqttClient> {
  const u = new URL(url)
  if (u.protocol !== 'mqtt:' || !u.hostname.startsWith('127.')) return connectAsync(url, opts)
  const stream = () => net.connect({ host: u.hostname, port: Number(u.port), localAddress: `127.0.${10 + (k % SOURCES)}.9`, noDelay: true })
  const c = new MqttClient(stream, opts)
  return new Promise((resolve, reject) => {
    const fail = (err: Error) => {
      c.end(true)
      reject(err)
    }
    c.once('connect', () => {
      c.off('error', fail)
      resolve(c)
    })
    c.once('error', fail)
  })
}

async function connectTrying(url: string, opts: IClientOptions, tries: number, k: number): Promise<MqttClient> {
  for (let n = 1; ; n++) {
    try {
      return await connectOnce(url, opts, k)
    } catch (err) {
      if (n >= tries) throw err
      await sleep(1000 * n)
    }
  }
}

/** Whether a held desired state (raw JSON, parsed) satisfies `match`; `since`: the version held when a restart began. */
function holds(match: Match, raw: string, state: DesiredState | null, since: number | undefined): boolean {
  if (!state) return false
  if (match.kind === 'version') return state.version >= match.min
  if (match.kind === 'no-emergency') return (state.emergency ?? null) === null
  if (match.kind === 'emergency') return state.emergency?.message?.includes(match.token) ?? false
  if (match.kind === 'cast-since-restart' && since !== undefined && state.version <= since) return false
  return Array.isArray(state.casts) && state.casts.some((c) => c.contentId === match.contentId) && raw.length > 0
}

/** The child's side: answers the orchestrator's messages until it disconnects. */
export function runFleet(): void {
  const send = (m: FromFleet) => process.send!(m)
  let clients: MqttClient[] = []
  /** Per device: the newest desired state seen (its version, raw JSON and parsed form). */
  let held: { version: number; raw: string; state: DesiredState | null }[] = []
  let regressions = 0
  let watch: ((k: number) => void) | null = null
  let onConnect: ((k: number) => void) | null = null
  /** Per device: the version it held when the restart began (what it gets after must be newer). */
  let baseline: number[] = []
  const doneOf = (phase: string, times: Map<number, number>): FromFleet => ({
    type: 'done',
    phase,
    times: [...times.values()],
    sizes: held.map((h) => Buffer.byteLength(h.raw)),
    sample: held[0]?.raw ?? '',
  })

  process.on('message', async (m: ToFleet) => {
    try {
      if (m.type === 'connect') {
        const t0 = performance.now()
        clients = new Array(m.creds.length)
        held = m.creds.map(() => ({ version: -1, raw: '', state: null }))
        for (let i = 0; i < m.creds.length; i += BATCH) {
          await Promise.all(
            m.creds.slice(i, i + BATCH).map(async ({ id, password }, j) => {
              const k = i + j
              const desired = topics.desired(id)
              const reported = topics.reported(id)
              const url = Array.isArray(m.url) ? m.url[k % m.url.length]! : m.url
              const opts: IClientOptions = {
                clientId: id,
                username: id,
                password,
                clean: false,
                protocolVersion: 4,
                reconnectPeriod: 1000,
                connectTimeout: 120_000,
              }
              const c = await connectTrying(url, opts, m.tries ?? 1, k)
              c.on('message', (topic, payload) => {
                if (topic !== desired) return
                const raw = payload.toString()
                let state: DesiredState | null = null
                try {
                  state = JSON.parse(raw) as DesiredState
                } catch {
                  // not JSON (the bare broker's padded payloads): held, matches nothing
                }
                const version = typeof state?.version === 'number' ? state.version : -1
                if (version < held[k]!.version) regressions++
                else held[k] = { version, raw, state }
                watch?.(k)
                // As the agent does once it applied a desired state: report the version and what
                // plays (QoS 1, not retained). What is no desired state is not reported.
                if (version < 0 || !m.report || !state || !Array.isArray(state.casts)) return
                const report: Reported = { version, playing: toPlaying(decidePlayback(state, new Date())), at: new Date().toISOString() }
                c.publish(reported, encodeMessage(report), { qos: 1 }, () => undefined)
              })
              c.on('connect', () => onConnect?.(k))
              await c.subscribeAsync(desired, { qos: 1 })
              clients[k] = c
            }),
          )
        }
        send({ type: 'connected', ms: performance.now() - t0, rss: process.memoryUsage().rss })
      } else if (m.type === 'arm') {
        const times = new Map<number, number>()
        const check = (k: number) => {
          const h = held[k]!
          if (times.has(k) || !holds(m.match, h.raw, h.state, baseline[k])) return
          times.set(k, now())
          if (times.size === clients.length) {
            watch = null
            send(doneOf(m.phase, times))
          }
        }
        watch = check
        send({ type: 'armed' })
        for (let k = 0; k < clients.length; k++) check(k) // some may hold it already
      } else if (m.type === 'arm-reconnect') {
        baseline = held.map((h) => h.version)
        const times = new Map<number, number>()
        onConnect = (k) => {
          if (times.has(k)) return
          times.set(k, now())
          if (times.size === clients.length) {
            onConnect = null
            send(doneOf(m.phase, times))
          }
        }
        send({ type: 'armed' })
      } else if (m.type === 'end') {
        await Promise.all(clients.map((c) => c.endAsync(true).catch(() => undefined)))
        clients = []
        send({ type: 'ended', regressions })
      }
    } catch (err) {
      send({ type: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) })
    }
  })
  process.on('disconnect', () => process.exit(0))
}

/** The orchestrator's side of a fleet process: `next` waits for a message of a type (and phase), `tell` sends one. */
export function fleetChannel(child: ChildProcess) {
  const next = <T extends FromFleet['type']>(type: T, timeoutMs = 600_000, phase?: string): Promise<Extract<FromFleet, { type: T }>> =>
    new Promise((resolve, reject) => {
      const t = setTimeout(() => done(new Error(`no "${type}"${phase ? ` (${phase})` : ''} from the devices within ${timeoutMs / 1000} s`)), timeoutMs)
      const onExit = (code: number | null) => done(new Error(`devices process exited (${code})`))
      const on = (m: FromFleet) => {
        if (m.type === 'error') done(new Error(`devices: ${m.message}`))
        else if (m.type === type && (phase === undefined || (m as { phase?: string }).phase === phase)) done(null, m as Extract<FromFleet, { type: T }>)
      }
      const done = (err: Error | null, v?: Extract<FromFleet, { type: T }>) => {
        clearTimeout(t)
        child.off('message', on)
        child.off('exit', onExit)
        if (err) reject(err)
        else resolve(v!)
      }
      child.on('message', on)
      child.once('exit', onExit)
    })
  return { next, tell: (m: ToFleet) => child.send(m) }
}

/** Starts a fleet process (killed with the bench's other children by killAll). */
export function forkFleet(): { proc: ChildProcess; channel: ReturnType<typeof fleetChannel> } {
  const proc = forkScript(join(ROOT, 'bench', 'lib', 'device-fleet.ts'), { BENCH_ROLE: 'devices' })
  return { proc, channel: fleetChannel(proc) }
}

if (process.env.BENCH_ROLE === 'devices') runFleet()
