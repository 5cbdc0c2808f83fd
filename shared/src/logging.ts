// One logger type for every package: the structural subset of pino's logger the code uses,
// so the cloud passes Fastify's pino logger and the agent its JSON-line logger wherever a
// `Logger` is asked for. Call order is pino's: fields first, message second
// (`log.info({ screenId }, 'paired')`), or a message alone.

export type LogFields = Record<string, unknown>

export interface LogFn {
  (msg: string): void
  (fields: object, msg?: string): void
}

export interface Logger {
  debug: LogFn
  info: LogFn
  warn: LogFn
  error: LogFn
  /** A logger that adds `bindings` to every line. */
  child(bindings: LogFields): Logger
}

const drop: LogFn = () => undefined

/** A logger that drops everything (tests that do not look at logs). */
export const silentLogger: Logger = { debug: drop, info: drop, warn: drop, error: drop, child: () => silentLogger }
