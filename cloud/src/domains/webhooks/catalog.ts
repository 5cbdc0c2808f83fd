// The thirteen subscribable events with their console labels (GET /v1/webhooks/events).
// Payloads are documented in docs/events.md.
import { EVENT_NAMES, type EventName } from '../events/index.js'

export const EVENT_CATALOG: { event: EventName; label: string; what: string }[] = [
  { event: 'screen.offline', label: 'Screen went offline', what: 'A screen stayed away past the grace period; data: screenId, screenName, nodeId, at, since.' },
  { event: 'screen.online', label: 'Screen came back online', what: 'A screen announced offline is back; data: screenId, screenName, nodeId, at, since.' },
  {
    event: 'screen.drifting',
    label: 'Screen drifting',
    what: 'A screen stopped doing what it was told (content, panel power or input); data: screenId, screenName, nodeId, state, since, items.',
  },
  {
    event: 'screen.panel_mismatch',
    label: 'Panel not obeying',
    what: "A screen's panel did not follow its operating hours after the player's retries; data: screenId, screenName, nodeId, intended, power, at.",
  },
  {
    event: 'screen.in_sync',
    label: 'Screen back in sync',
    what: 'A drifting screen does what it was told again; data: screenId, screenName, nodeId, state, since, items.',
  },
  {
    event: 'screen.reported',
    label: 'Screen reported a change',
    what: "A screen's report changed what it plays, its panel's power or input, or its agent's version; data: screenId, screenName, nodeId, playing, panel, agentVersion, at.",
  },
  {
    event: 'content.recalled',
    label: 'Content recalled',
    what: 'A file, design, playlist or schedule was pulled from every screen; data: kind, id, name, reason, recalledBy.',
  },
  { event: 'content.restored', label: 'Content restored', what: 'Recalled content was put back; data: kind, id, name.' },
  {
    event: 'approval.requested',
    label: 'Approval requested',
    what: 'A change to content was held for approval; data: approvalId, contentKind, contentId, contentName, nodeId, requestedById, requestedByName.',
  },
  {
    event: 'approval.decided',
    label: 'Approval decided',
    what: 'An approval request reached its final state (approved: the change is live; rejected or withdrawn: discarded); data: approvalId, contentKind, contentId, contentName, state, decidedById, decidedByName, note.',
  },
  {
    event: 'emergency.started',
    label: 'Emergency started',
    what: 'An emergency takeover began; data: the emergency (id, contentKind, contentId, scopeKind, screenCount, startedAt…).',
  },
  {
    event: 'emergency.cleared',
    label: 'Emergency cleared',
    what: 'An emergency takeover ended; data: the emergency (id, status, clearedAt, screensReleased…).',
  },
  {
    event: 'emergency.reach',
    label: 'Emergency reach',
    what: 'Every targeted screen applied an emergency, or 60 s passed; data: emergencyId, targeted, applied, displayed, unreachable, at.',
  },
]

export function isEventName(name: string): name is EventName {
  return (EVENT_NAMES as readonly string[]).includes(name)
}
