// A real client of GET /v1/events/stream: an HTTP request on a socket, its answer read as
// server-sent events. `next` waits for a message, `closed` for the server ending the
// response; both with a hang guard of minutes whose expiry says what was awaited.
import { request, type IncomingMessage } from 'node:http'
import type { Test } from 'tap'
import { HANG_GUARD_MS } from '@svc/shared/testing'

export interface Message {
  id: string | null
  event: string
  data: any
}

export interface SseStream {
  status: number
  headers: IncomingMessage['headers']
  messages: Message[]
  /** The whole body so far (an error answer's JSON). */
  readonly body: string
  /** The next message (after those already taken) matching `pred`. */
  next(pred?: (m: Message) => boolean): Promise<Message>
  /** Resolves when the server has ended the response. */
  closed(): Promise<void>
  /** The error body, read to its end (for answers other than 200). */
  json(): Promise<any>
  close(): void
}

const GUARD_MS = HANG_GUARD_MS

/** Moves the complete server-sent events of `buf` into `into`; returns the incomplete rest. */
export function takeMessages(buf: string, into: Message[]): string {
  let i = buf.indexOf('\n\n')
  while (i >= 0) {
    const block = buf.slice(0, i)
    buf = buf.slice(i + 2)
    const m: Message = { id: null, event: 'message', data: null }
    for (const line of block.split('\n')) {
      if (line.startsWith('id: ')) m.id = line.slice(4)
      else if (line.startsWith('event: ')) m.event = line.slice(7)
      else if (line.startsWith('data: ')) m.data = JSON.parse(line.slice(6))
    }
    if (block.split('\n').some((l) => l.startsWith('event: ') || l.startsWith('data: '))) into.push(m)
    i = buf.indexOf('\n\n')
  }
  return buf
}

export function openStream(t: Test, port: number, headers: Record<string, string>): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/v1/events/stream', headers }, (res) => {
      const messages: Message[] = []
      let taken = 0
      let buf = ''
      let body = ''
      let ended = false
      const waiters: (() => void)[] = []
      const wake = () => {
        for (const w of waiters.splice(0)) w()
      }
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        body += chunk
        buf = takeMessages(buf + chunk, messages)
        wake()
      })
      const onEnd = () => {
        ended = true
        wake()
      }
      res.on('end', onEnd)
      res.on('close', onEnd)
      const wait = async (what: string, done: () => boolean): Promise<void> => {
        const until = Date.now() + GUARD_MS
        while (!done()) {
          if (Date.now() > until) throw new Error(`hang guard: ${what} did not happen; messages so far: ${JSON.stringify(messages.map((x) => x.event))}`)
          await new Promise<void>((r) => {
            waiters.push(r)
            setTimeout(r, 1000).unref()
          })
        }
      }
      const s: SseStream = {
        status: res.statusCode!,
        headers: res.headers,
        messages,
        get body() {
          return body
        },
        async next(pred = () => true) {
          let found: Message | undefined
          await wait('the awaited message', () => {
            while (!found && taken < messages.length) {
              const m = messages[taken++]!
              if (pred(m)) found = m
            }
            if (!found && ended) throw new Error(`the stream ended without the awaited message; had ${JSON.stringify(messages.map((x) => x.event))}`)
            return found !== undefined
          })
          return found!
        },
        closed: () => wait('the end of the response', () => ended),
        async json() {
          await wait('the end of the answer', () => ended)
          return JSON.parse(body || '{}')
        },
        close: () => req.destroy(),
      }
      t.teardown(() => req.destroy())
      resolve(s)
    })
    req.on('error', reject)
    req.end()
  })
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
