/**
 * Timestamped hex trace of both directions, as events and as text lines
 * (stderr or a file).
 */
import type { Writable } from 'node:stream'
import { hexPreview } from '@svc/shared/serial/index'

export interface TraceEntry {
  /** Clock time in ms since the epoch. */
  at: number
  /** `rx` host → panel, `tx` panel → host. */
  direction: 'rx' | 'tx'
  /** Which connection: "tcp 127.0.0.1:51234", "serial /dev/pts/3", "memory". */
  link: string
  bytes: Buffer
}

export function formatTrace(e: TraceEntry): string {
  const text = e.bytes.toString('latin1').replace(/[^\x20-\x7e]/g, '.')
  return `${new Date(e.at).toISOString()} ${e.direction} [${e.link}] ${hexPreview(e.bytes)}  |${text}|`
}

export interface TraceSource {
  on(event: 'trace', listener: (e: TraceEntry) => void): unknown
  off(event: 'trace', listener: (e: TraceEntry) => void): unknown
}

/** Writes every trace entry of `source` to `out`; returns a function that stops. */
export function pipeTrace(source: TraceSource, out: Writable): () => void {
  const onTrace = (e: TraceEntry) => {
    out.write(`${formatTrace(e)}\n`)
  }
  source.on('trace', onTrace)
  return () => source.off('trace', onTrace)
}
