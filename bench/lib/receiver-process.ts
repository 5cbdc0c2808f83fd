// The webhook test receiver (cloud/test/fixtures/receiver.ts: HTTPS on 127.0.0.1 with the
// test certificate, answers 200) in a child process of its own, so its CPU is not the
// cloud's. The child reports its running count of received requests over IPC.
import type { ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { forkScript, stop } from './harness.js'

export interface ReceiverProcess {
  url: string
  /** Requests received so far. */
  count(): number
  /** TLS connections the receiver accepted so far (keep-alive reuse shows as few). */
  connections(): number
  /** Resolves once at least n requests have arrived. */
  waitFor(n: number, timeoutMs?: number): Promise<void>
  close(): Promise<void>
}

if (process.env.BENCH_RECEIVER_CHILD === '1') {
  const { startReceiver } = await import('../../cloud/test/fixtures/receiver.js')
  const r = await startReceiver()
  let sent = 0
  let scheduled = false
  const origPush = r.received.push.bind(r.received)
  r.received.push = (...items) => {
    const n = origPush(...items)
    r.received.length = 0 // keep no bodies: only the count matters here
    sent += items.length
    if (!scheduled) {
      scheduled = true
      setImmediate(() => {
        scheduled = false
        process.send!({ count: sent, connections: r.connections })
      })
    }
    return n
  }
  process.send!({ url: r.url })
  process.on('disconnect', () => void r.close().then(() => process.exit(0)))
}

export async function startReceiverProcess(): Promise<ReceiverProcess> {
  const child: ChildProcess = forkScript(fileURLToPath(import.meta.url), { BENCH_RECEIVER_CHILD: '1' })
  let count = 0
  let connections = 0
  const waiters: { n: number; resolve: () => void }[] = []
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`receiver exited (${code})`)))
    child.on('message', (m: { url?: string; count?: number; connections?: number }) => {
      if (m.url) resolve(m.url)
      if (m.connections !== undefined) connections = m.connections
      if (m.count !== undefined) {
        count = m.count
        for (const w of [...waiters]) if (count >= w.n) waiters.splice(waiters.indexOf(w), 1), w.resolve()
      }
    })
  })
  return {
    url,
    count: () => count,
    connections: () => connections,
    waitFor(n, timeoutMs = 30_000) {
      if (count >= n) return Promise.resolve()
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`receiver: ${count} of ${n} requests after ${timeoutMs} ms`)), timeoutMs)
        waiters.push({ n, resolve: () => (clearTimeout(timer), resolve()) })
      })
    },
    close: () => stop(child),
  }
}
