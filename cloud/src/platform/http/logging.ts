// The service's log: human-readable lines on a terminal (pino-pretty), JSON lines for
// files, pipes and log collectors (or when SVC_LOG_FORMAT=json). One line per request,
// at debug: a running service is quiet at info unless something happens.
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'
import pretty from 'pino-pretty'
import type { Config } from '../../config.js'

/** Fastify's per-request log lines: none on arrival, one at debug when answered, errors at error. */
export class RequestLogController extends LogController {
  constructor() {
    super({ requestIdLogLabel: 'requestId' })
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) {
      reply.log.error(
        { err: error, method: request.method, url: request.url, statusCode: reply.statusCode, responseTime: reply.elapsedTime },
        'request errored',
      )
      return
    }
    reply.log.debug(
      { method: request.method, url: request.url, statusCode: reply.statusCode, responseTime: Math.round(reply.elapsedTime * 10) / 10 },
      'request',
    )
  }
}

/** 'pretty' or 'json' for a config's `logFormat` ('auto' = pretty when stdout is a terminal). */
export function resolveLogFormat(format: Config['logFormat'], isTty = Boolean(process.stdout.isTTY)): 'pretty' | 'json' {
  if (format === 'auto') return isTty ? 'pretty' : 'json'
  return format
}

/** Fastify's `logger` option for a config. */
export function loggerOptions(config: Pick<Config, 'logLevel' | 'logFormat'>) {
  if (resolveLogFormat(config.logFormat) === 'json' || config.logLevel === 'silent') return { level: config.logLevel }
  return {
    level: config.logLevel,
    stream: pretty({ colorize: Boolean(process.stdout.isTTY), translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname', sync: true }),
  }
}
