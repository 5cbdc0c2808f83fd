// The agent's recent log lines in memory, for the cloud's `logs` jobs: a ring per source (the
// agent's own log, the kiosk page's console) that keeps its last N lines, each message cut
// to AGENT_LOG_LIMITS.messageLength characters, so the memory it takes is bounded (5000 ×
// 2000 characters at most for the agent's). RingLogger is the agent's Logger: it writes
// each line to the logger it wraps (stdout) and records it in the ring. Nothing is kept
// across a restart: journald has the service's stdout for that.
import { AGENT_LOG_LIMITS, AGENT_LOG_LEVELS, type AgentLogLevel, type AgentLogLine, type AgentLogSource } from '@svc/shared/mqtt/index'
import { describeError, type LogFields, type Logger, type LogLevel } from './Logger.js'
import type { Clock } from './time.js'

/** Lines of the agent's own log kept in memory. */
export const AGENT_LOG_RING_LINES = 5000
/** Console messages of the kiosk page kept in memory. */
export const KIOSK_CONSOLE_RING_LINES = 1000

const ORDER: Record<AgentLogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 }

/** `text` within the message bound (ending with `…` when cut), without NUL characters (the cloud refuses them). */
export function boundedMessage(text: string): string {
  const clean = text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text
  return clean.length <= AGENT_LOG_LIMITS.messageLength ? clean : `${clean.slice(0, AGENT_LOG_LIMITS.messageLength - 1)}…`
}

/** The last `capacity` lines of one source, oldest first. */
export class LogRing {
  readonly #buf: AgentLogLine[] = []
  #next = 0
  /** The time (ms) of the newest line the ring has let go of; -Infinity while none. */
  #droppedUpTo = Number.NEGATIVE_INFINITY

  constructor(
    readonly source: AgentLogSource,
    readonly capacity: number,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new TypeError(`a log ring holds at least one line, got ${capacity}`)
  }

  get size(): number {
    return this.#buf.length
  }

  add(at: Date, level: AgentLogLevel, message: string): void {
    const line: AgentLogLine = { at: at.toISOString(), level, source: this.source, message: boundedMessage(message) }
    if (this.#buf.length < this.capacity) {
      this.#buf.push(line)
      return
    }
    const old = this.#buf[this.#next]!
    this.#droppedUpTo = Math.max(this.#droppedUpTo, Date.parse(old.at))
    this.#buf[this.#next] = line
    this.#next = (this.#next + 1) % this.capacity
  }

  /** The lines at or after `since` (ms; null = all), oldest first, and whether the ring let go of any such line. */
  since(since: number | null): { lines: AgentLogLine[]; dropped: boolean } {
    const from = since ?? Number.NEGATIVE_INFINITY
    const ordered = this.#buf.length < this.capacity ? this.#buf : [...this.#buf.slice(this.#next), ...this.#buf.slice(0, this.#next)]
    return { lines: ordered.filter((l) => Date.parse(l.at) >= from), dropped: this.#droppedUpTo > Number.NEGATIVE_INFINITY && this.#droppedUpTo >= from }
  }
}

/**
 * What a `logs` job uploads: the lines of every ring at or after `since`, oldest first, the
 * newest `max` of them, as many as fit `maxBytes` of JSON body; truncated when a matching
 * line was left out (by these bounds, or already gone from a ring).
 */
export function collectLogs(
  rings: readonly LogRing[],
  since: number | null,
  max: number,
  maxBytes: number = AGENT_LOG_LIMITS.maxBytes,
): { lines: AgentLogLine[]; truncated: boolean } {
  let truncated = false
  const all: { line: AgentLogLine; t: number; i: number }[] = []
  for (const ring of rings) {
    const got = ring.since(since)
    truncated ||= got.dropped
    for (const line of got.lines) all.push({ line, t: Date.parse(line.at), i: all.length })
  }
  all.sort((a, b) => a.t - b.t || a.i - b.i)
  // From the newest back: as many as the count and the body's bytes allow (`{"lines":[…],"truncated":true}`).
  let bytes = '{"lines":[],"truncated":false}'.length
  let from = all.length
  while (from > 0 && all.length - from < max) {
    const size = Buffer.byteLength(JSON.stringify(all[from - 1]!.line)) + 1
    if (bytes + size > maxBytes) break
    bytes += size
    from--
  }
  if (from > 0) truncated = true
  return { lines: all.slice(from).map((x) => x.line), truncated }
}

/** `msg` with the line's fields after it as compact JSON (errors as {message, code}), as the log line says it. */
function render(msg: string, bindings: LogFields, a: string | object): string {
  if (typeof a === 'string') return Object.keys(bindings).length ? `${msg} ${safeJson(bindings)}` : msg
  const fields: LogFields = { ...bindings }
  for (const [k, v] of Object.entries(a instanceof Error ? { err: a } : a)) fields[k] = v instanceof Error ? describeError(v) : v
  return Object.keys(fields).length ? `${msg} ${safeJson(fields)}` : msg
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v)
  } catch {
    return '{"note":"fields could not be serialised"}'
  }
}

export interface RingLoggerOptions {
  clock: Clock
  /** The least level recorded (default `info`): the ring keeps what the log keeps. */
  level?: LogLevel
}

/** A Logger that writes to `inner` and records each line (at `level` or above) in `ring`. */
export class RingLogger implements Logger {
  readonly #inner: Logger
  readonly #ring: LogRing
  readonly #o: RingLoggerOptions
  readonly #bindings: LogFields

  constructor(inner: Logger, ring: LogRing, options: RingLoggerOptions, bindings: LogFields = {}) {
    this.#inner = inner
    this.#ring = ring
    this.#o = options
    this.#bindings = bindings
  }

  child(fields: LogFields): RingLogger {
    return new RingLogger(this.#inner.child(fields), this.#ring, this.#o, { ...this.#bindings, ...fields })
  }

  debug(msg: string): void
  debug(fields: object, msg?: string): void
  debug(a: string | object, msg?: string): void {
    this.#log('debug', a, msg)
  }
  info(msg: string): void
  info(fields: object, msg?: string): void
  info(a: string | object, msg?: string): void {
    this.#log('info', a, msg)
  }
  warn(msg: string): void
  warn(fields: object, msg?: string): void
  warn(a: string | object, msg?: string): void {
    this.#log('warn', a, msg)
  }
  error(msg: string): void
  error(fields: object, msg?: string): void
  error(a: string | object, msg?: string): void {
    this.#log('error', a, msg)
  }

  #log(level: AgentLogLevel, a: string | object, msg: string | undefined): void {
    if (typeof a === 'string') this.#inner[level](a)
    else this.#inner[level](a, msg)
    if (ORDER[level] < ORDER[this.#o.level ?? 'info']) return
    this.#ring.add(this.#o.clock.now(), level, render(typeof a === 'string' ? a : (msg ?? ''), this.#bindings, a))
  }
}

/** A kiosk console level as the page names it (`log` is `info`), else null. */
export function consoleLevel(v: unknown): AgentLogLevel | null {
  if (v === 'log') return 'info'
  return (AGENT_LOG_LEVELS as readonly unknown[]).includes(v) ? (v as AgentLogLevel) : null
}
