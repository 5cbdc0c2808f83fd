// Structured logs: one JSON object per line, `{t, level, msg, ...fields}`, written to
// stdout by the CLI. Errors in fields become `{message, code}` so a line never carries a
// stack trace and always parses.
import type { Clock } from './time.js'
import { systemClock } from './time.js'

export type LogLevel = 'debug' | 'info' | 'warn' | 'error'
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 }

export type LogFields = Record<string, unknown>

export interface LoggerOptions {
  /** Receives each complete line, newline included. */
  write(line: string): void
  clock?: Clock
  level?: LogLevel
  /** Fields added to every line (e.g. the component). */
  bindings?: LogFields
}

export class Logger {
  readonly #write: (line: string) => void
  readonly #clock: Clock
  readonly #level: LogLevel
  readonly #bindings: LogFields

  constructor(options: LoggerOptions) {
    this.#write = options.write
    this.#clock = options.clock ?? systemClock
    this.#level = options.level ?? 'info'
    this.#bindings = options.bindings ?? {}
  }

  /** A logger that adds `fields` to every line. */
  child(fields: LogFields): Logger {
    return new Logger({ write: this.#write, clock: this.#clock, level: this.#level, bindings: { ...this.#bindings, ...fields } })
  }

  debug(msg: string, fields?: LogFields): void {
    this.#log('debug', msg, fields)
  }
  info(msg: string, fields?: LogFields): void {
    this.#log('info', msg, fields)
  }
  warn(msg: string, fields?: LogFields): void {
    this.#log('warn', msg, fields)
  }
  error(msg: string, fields?: LogFields): void {
    this.#log('error', msg, fields)
  }

  #log(level: LogLevel, msg: string, fields: LogFields = {}): void {
    if (ORDER[level] < ORDER[this.#level]) return
    const line: LogFields = { t: this.#clock.now().toISOString(), level, msg, ...this.#bindings }
    for (const [k, v] of Object.entries(fields)) line[k] = v instanceof Error ? describeError(v) : v
    let text: string
    try {
      text = JSON.stringify(line)
    } catch {
      text = JSON.stringify({ t: line.t, level, msg, note: 'fields could not be serialised' })
    }
    this.#write(`${text}\n`)
  }
}

export function describeError(err: Error): { message: string; code?: string | number } {
  const code = (err as { code?: unknown }).code
  return typeof code === 'string' || typeof code === 'number' ? { message: err.message, code } : { message: err.message }
}

/** A logger that drops everything (tests that do not look at logs). */
export const silentLogger = new Logger({ write: () => undefined, level: 'error' })
