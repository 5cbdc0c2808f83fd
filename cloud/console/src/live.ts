// One live connection per page (GET /v1/events/stream, server-sent events): the browser
// reconnects by itself and resumes with Last-Event-ID. Pages subscribe to the events they
// show; presence changes reach the screens table without polling.
import { useEffect } from 'preact/hooks'

export interface LiveEvent {
  id: string
  event: string
  occurredAt: string
  data: Record<string, unknown>
}

type Listener = (e: LiveEvent) => void
const listeners = new Set<Listener>()
let source: EventSource | null = null
const NAMES = [
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
]

function open(): void {
  if (source) return
  source = new EventSource('/v1/events/stream')
  for (const name of NAMES)
    source.addEventListener(name, (m) => {
      const e = JSON.parse((m as MessageEvent<string>).data) as LiveEvent
      for (const l of listeners) l(e)
    })
}

export function closeLive(): void {
  source?.close()
  source = null
}

/** Calls `fn` with every live event while the component is shown. */
export function useLive(fn: Listener, deps: unknown[] = []): void {
  useEffect(() => {
    open()
    listeners.add(fn)
    return () => void listeners.delete(fn)
  }, deps)
}
