// One live connection per browser, not per page (GET /v1/events/stream, server-sent events).
// A browser gives an origin six HTTP/1.1 connections: a stream per page, with pages kept in
// the back/forward cache and several tabs, used them all up and the console's own requests
// waited. So:
// - the tabs of a browser elect one leader (a Web Lock, `navigator.locks`): only the leader
//   holds the stream and hands every event to the other tabs over a BroadcastChannel; when
//   the leader goes (closed, hidden, signed out) the next tab in the lock's queue takes over;
// - a page that is hidden or frozen (`pagehide`, `freeze`: the back/forward cache) closes its
//   stream and leaves the queue; shown again (`pageshow`, `resume`) it rejoins, and a new
//   leader resumes from the last event the tab saw (`Last-Event-ID`), so nothing is missed.
// The stream is read with fetch (a new EventSource cannot send Last-Event-ID) and parsed by
// eventsource-parser. Without Web Locks (a page served over plain HTTP from another host is
// not a secure context) every page is its own leader, still closing on pagehide.
// Pages subscribe to the events they show; presence changes reach the screens table without
// polling.
import { createParser } from 'eventsource-parser'
import { useEffect } from 'preact/hooks'

export interface LiveEvent {
  id: string
  event: string
  occurredAt: string
  data: Record<string, unknown>
}

type Listener = (e: LiveEvent) => void
const listeners = new Set<Listener>()
const NAMES = new Set([
  'screen.online',
  'screen.offline',
  'screen.drifting',
  'screen.in_sync',
  'screen.panel_mismatch',
  'screen.reported',
  'content.recalled',
  'content.restored',
  'approval.requested',
  'approval.decided',
  'emergency.started',
  'emergency.cleared',
  'emergency.reach',
])
const LOCK = 'svc-live-stream'
/** How long to wait before reconnecting when the server did not say (its `retry:` line does). */
const DEFAULT_RETRY_MS = 3000
/** Ids of the events delivered lately: a new leader's replay repeats what the old one sent. */
const SEEN_MAX = 500

const channel: BroadcastChannel | null = typeof BroadcastChannel === 'function' ? new BroadcastChannel(LOCK) : null
let wanted = false
let shown = true
let lastEventId: string | null = null
const seen = new Set<string>()
/** The current turn: its abort ends the lock request or the leadership and the stream. */
let turn: AbortController | null = null

function deliver(e: LiveEvent): void {
  if (seen.has(e.id)) return
  seen.add(e.id)
  if (seen.size > SEEN_MAX) seen.delete(seen.values().next().value as string)
  lastEventId = e.id
  for (const l of listeners) l(e)
}

channel?.addEventListener('message', (m: MessageEvent<LiveEvent>) => {
  if (m.data && typeof m.data.id === 'string') deliver(m.data)
})

/**
 * Waits `ms`, or less once `signal` aborts (at once if it has already: an abort event does
 * not fire again, and a tab that left must not keep the stream's lock through the wait).
 */
const pause = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const timer = setTimeout(resolve, ms)
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer)
        resolve()
      },
      { once: true },
    )
  })

/** Settles when `signal` aborts: the lock is given back then, whatever the stream's read is still doing. */
const aborted = (signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })))

/**
 * The tab's part in the live connection, on `<html data-live>`: `waiting` (in the queue for
 * the lock: another tab holds the stream and hands this one its events), `connecting`,
 * `live` (this tab holds the stream and the server said `ready`: every event from now on
 * arrives), none when the tab is hidden or the console closed its connection.
 */
function state(s: 'waiting' | 'connecting' | 'live' | null): void {
  if (typeof document === 'undefined') return
  if (s) document.documentElement.dataset.live = s
  else delete document.documentElement.dataset.live
}

/** Holds the stream until `signal` aborts, reconnecting with Last-Event-ID; ends on a refusal or `ended`. */
async function lead(signal: AbortSignal): Promise<void> {
  let retryMs = DEFAULT_RETRY_MS
  while (!signal.aborted) {
    let finished = false
    state('connecting')
    try {
      const res = await fetch('/v1/events/stream', {
        headers: lastEventId ? { 'last-event-id': lastEventId } : {},
        credentials: 'same-origin',
        cache: 'no-store',
        signal,
      })
      // Signed out or forbidden: reconnecting would be refused the same way. Too many
      // streams (429) or a server restarting behind its proxy (5xx): try again after a wait.
      if (res.status >= 400 && res.status < 500 && res.status !== 429) return
      if (!res.ok || !res.body) throw new Error(`event stream: ${res.status}`)
      const parser = createParser({
        onRetry: (ms) => {
          retryMs = ms
        },
        onEvent: (m) => {
          if (m.event === 'ended') finished = true
          if (m.event === 'ready' && !signal.aborted) state('live')
          if (!m.event || !NAMES.has(m.event)) return
          const e = JSON.parse(m.data) as LiveEvent
          deliver(e)
          channel?.postMessage(e)
        },
      })
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader()
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        parser.feed(value)
      }
    } catch {
      // Aborted (hidden, signed out) or the connection broke: the loop decides.
    }
    if (finished) return
    await pause(retryMs, signal)
  }
}

/** Joins the tabs' queue for the stream (or, without Web Locks, holds one of its own). */
function join(): void {
  if (turn || !wanted || !shown) return
  const mine = new AbortController()
  turn = mine
  const done = (): void => {
    if (turn !== mine) return
    turn = null
    state(null)
  }
  if (!navigator.locks) {
    void lead(mine.signal).finally(done)
    return
  }
  state('waiting')
  // The lock is held until this tab's stream ends for good or the tab leaves, whichever is
  // first: leaving gives it back in the same turn of the event loop (before the page is frozen
  // in the back/forward cache), so the next tab leads at once.
  navigator.locks
    .request(LOCK, { signal: mine.signal }, () => Promise.race([lead(mine.signal), aborted(mine.signal)]))
    .catch(() => {
      // The request was withdrawn before this tab led (hidden, signed out).
    })
    .finally(done)
}

function leave(): void {
  turn?.abort()
  turn = null
  state(null)
}

if (typeof window !== 'undefined') {
  window.addEventListener('pagehide', () => {
    shown = false
    leave()
  })
  window.addEventListener('pageshow', () => {
    shown = true
    join()
  })
  document.addEventListener('freeze', () => {
    shown = false
    leave()
  })
  document.addEventListener('resume', () => {
    shown = true
    join()
  })
}

function open(): void {
  wanted = true
  join()
}

export function closeLive(): void {
  wanted = false
  leave()
}

/** Calls `fn` with every live event while the component is shown. */
export function useLive(fn: Listener, deps: unknown[] = []): void {
  useEffect(() => {
    open()
    listeners.add(fn)
    return () => void listeners.delete(fn)
  }, deps)
}
