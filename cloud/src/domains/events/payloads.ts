// Typed `data` of every catalogue event (docs/events.md), so the services that publish
// them (device link, recall, emergencies, approvals) send one shape.

export type ContentKind = 'media' | 'creative' | 'playlist' | 'schedule'

export interface EventData {
  /** A screen stayed away past the grace period (ScreenPresence): `since` = when it dropped, `at` = when announced. */
  'screen.offline': { screenId: string; screenName: string; nodeId: string | null; at: string; since?: string; test?: boolean; note?: string }
  /** A screen announced offline is back: `at` = when it came back, `since` = when the outage began (absent if unknown). */
  'screen.online': { screenId: string; screenName: string; nodeId: string | null; at: string; since?: string }
  /** A screen's report changed what it plays, its panel's power or input, or its agent's version. */
  'screen.reported': {
    screenId: string
    screenName: string
    nodeId: string | null
    playing: { source: string; contentKind: string | null; contentId: string | null; castId: string | null; emergencyId: string | null }
    panel: { power: string; input: string | null } | null
    agentVersion: string | null
    at: string
  }
  /** `name` is the label of the kind, `contentName` the item's own; `recalledBy` is `apikey:<id>` or a user id. */
  'content.recalled': { kind: ContentKind; id: string; name: string; contentName: string; reason: string | null; recalledBy: string }
  'content.restored': { kind: ContentKind; id: string; name: string; contentName: string; restoredBy: string }
  'approval.requested': {
    approvalId: string
    contentKind: string
    contentId: string
    contentName: string
    nodeId: string
    requestedById: string
    requestedByName: string
  }
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
  // `emergency.started` and `emergency.cleared` carry the emergency as `POST /v1/emergencies`
  // answers it: the takeovers domain adds them to this interface (takeovers/takeoverSchemas.ts).
}
