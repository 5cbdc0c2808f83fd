// Retained messages by topic, for aedes' in-memory store. Its own store answers every
// SUBSCRIBE by testing each retained message against the filter, so a connect storm of N
// devices (each subscribing to its own topics while N desired states are retained) costs
// N² tests. Devices subscribe to exact topics: those are one map lookup here; a filter
// with wildcards (none in the device contract) still walks every retained message.
import { Readable } from 'node:stream'

interface RetainedPacket {
  topic: string
  payload: Buffer | Uint8Array | string
}

/** The part of aedes' persistence interface that deals with retained messages. */
interface RetainedStore {
  storeRetained(packet: RetainedPacket): Promise<void>
  createRetainedStream(pattern: string): Readable
  createRetainedStreamCombi(patterns: string[]): Readable
}

/** MQTT filter matching; `$` topics match no filter that starts with a wildcard. */
export function topicMatches(filter: string, topic: string): boolean {
  if (filter === topic) return true
  const f = filter.split('/')
  const t = topic.split('/')
  if ((f[0] === '+' || f[0] === '#') && topic.startsWith('$')) return false
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true
    if (i >= t.length) return false
    if (f[i] !== '+' && f[i] !== t[i]) return false
  }
  return f.length === t.length
}

const hasWildcard = (filter: string): boolean => filter.includes('+') || filter.includes('#')

/** Replaces the retained-message part of aedes' in-memory persistence `store` (in place). */
export function indexRetained(store: RetainedStore): void {
  const retained = new Map<string, RetainedPacket>()
  const matching = function* (patterns: string[]): Generator<RetainedPacket> {
    for (const p of patterns) {
      if (!hasWildcard(p)) {
        const packet = retained.get(p)
        if (packet) yield packet
      } else for (const [topic, packet] of retained) if (topicMatches(p, topic)) yield packet
    }
  }
  store.storeRetained = async (pkt) => {
    if (pkt.payload.length === 0) retained.delete(pkt.topic)
    else retained.set(pkt.topic, { ...pkt })
  }
  store.createRetainedStream = (pattern) => Readable.from(matching([pattern]))
  store.createRetainedStreamCombi = (patterns) => Readable.from(matching(patterns))
}
