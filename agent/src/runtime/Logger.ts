// Structured logs: one JSON object per line, `{t, level, msg, ...fields}`, written to
// stdout by the CLI. Errors in fields become `{message, code}` so a line never carries a
// stack trace and always parses. The `Logger` type is the shared one (pino's call order:
// fields first, then the message); JsonLogger is the agent's implementation of it.
import { systemClock, type Clock, type LogFields, type Logger } from '@svc/shared'

export { silentLogger, type LogFields, type Logger } from '@svc/shared'

export type LogLevel = 'debug' | 'info' | 'warn' | 'error'
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 }

export interface LoggerOptions {
  /** Receives each complete line, newline included. */
  write(line: string): void
  clock?: Clock
  level?: LogLevel
  /** Fields added to every line (e.g. the component). */
  bindings?: LogFields
}

export class JsonLogger implements Logger {
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
  child(fields: LogFields): JsonLogger {
    return new JsonLogger({ write: this.#write, clock: this.#clock, level: this.#level, bindings: { ...this.#bindings, ...fields } })
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

  #log(level: LogLevel, a: string | object, message?: string): void {
    if (ORDER[level] < ORDER[this.#level]) return
    const msg = typeof a === 'string' ? a : (message ?? '')
    const fields: object = typeof a === 'string' ? {} : a instanceof Error ? { err: a } : a
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
