// Typed `data` of every catalogue event (docs/events.md) and builders, so the services
// that publish them (device link, recall, emergencies, approvals) send one shape.
import type { DomainEvent, EventName } from './EventBus.js'

export type ContentKind = 'media' | 'creative' | 'playlist' | 'schedule'

export interface EventData {
  /** A screen stopped reporting (debounced by the device link). */
  'screen.offline': { screenId: string; screenName: string; nodeId: string | null; since: string; test?: boolean; note?: string }
  /** A screen reported again; `offlineSince` is when it went away (null if unknown). */
  'screen.online': { screenId: string; screenName: string; nodeId: string | null; at: string; offlineSince: string | null }
  /** SPEC: `name` is the label of the kind; `recalledBy` is `apikey:<id>` or a user id. */
  'content.recalled': { kind: ContentKind; id: string; name: string; reason: string | null; recalledBy: string }
  'content.restored': { kind: ContentKind; id: string; name: string }
  'approval.requested': { approvalId: string; contentKind: string; contentId: string; contentName: string; nodeId: string; requestedById: string; requestedByName: string }
  'approval.decided': {
    approvalId: string
    contentKind: string
    contentId: string
    contentName: string
    state: 'approved' | 'rejected' | 'withdrawn'
    decidedById: string
    decidedByName: string | null
    note: string | null
  }
  'emergency.started': { emergencyId: string; contentKind: string; contentId: string; scopeKind: string; screenCount: number; startedBy: string }
  'emergency.cleared': { emergencyId: string; screensReleased: number; clearedBy: string }
}

/** SPEC's label of a content kind, used as `name` in content.recalled/restored. */
export const CONTENT_KIND_LABEL: Record<ContentKind, string> = { media: 'Media file', creative: 'Design', playlist: 'Playlist', schedule: 'Schedule' }

/** Builds a bus event with typed data: `events.publish(domainEvent('screen.offline', ws, {...}))`. */
export function domainEvent<E extends EventName>(event: E, workspaceId: string, data: EventData[E], occurredAt: Date | string = new Date()): DomainEvent<EventData[E]> {
  return { event, workspaceId, occurredAt: typeof occurredAt === 'string' ? occurredAt : occurredAt.toISOString(), data }
}
