// MQTT topic contract v1: names, direction, retain flags, and the device ACL
// check. The broker (cloud) and the agent both build topics here so neither
// spells a topic string by hand.

export const TOPIC_PREFIX = 'svc/v1/'
export const SCREENS_PREFIX = `${TOPIC_PREFIX}screens/`
/** Every message in the contract is sent with QoS 1. */
export const QOS = 1 as const

export const SCREEN_TOPIC_KINDS = ['desired', 'jobs', 'status', 'reported', 'job-results', 'play-log'] as const
export type ScreenTopicKind = (typeof SCREEN_TOPIC_KINDS)[number]

export interface TopicSpec {
  direction: 'cloud-to-agent' | 'agent-to-cloud'
  retained: boolean
  qos: typeof QOS
}

/** Per-topic rules; README.md in this folder is the prose version. */
export const TOPIC_SPECS: Readonly<Record<ScreenTopicKind, TopicSpec>> = {
  desired: { direction: 'cloud-to-agent', retained: true, qos: QOS },
  jobs: { direction: 'cloud-to-agent', retained: false, qos: QOS },
  status: { direction: 'agent-to-cloud', retained: true, qos: QOS },
  // Not retained: the cloud keeps the last report in its database; the broker stores no
  // device message but its status (an older agent's retain flag on it is dropped).
  reported: { direction: 'agent-to-cloud', retained: false, qos: QOS },
  'job-results': { direction: 'agent-to-cloud', retained: false, qos: QOS },
  // Proof of play: one batch per message; the agent forgets a batch only after its PUBACK.
  'play-log': { direction: 'agent-to-cloud', retained: false, qos: QOS },
}

/**
 * A screen id usable as one topic level: non-empty, no `/`, no MQTT
 * wildcards, no NUL, not starting with `$` (reserved for broker topics).
 */
export function isValidScreenId(screenId: unknown): screenId is string {
  return typeof screenId === 'string' && screenId.length > 0 && screenId.length <= 128 && !screenId.startsWith('$') && !/[/+#\0]/.test(screenId)
}

/** `svc/v1/screens/<id>/` — everything a device may touch starts with this. */
export function screenTopicPrefix(screenId: string): string {
  if (!isValidScreenId(screenId)) throw new TypeError(`invalid screen id for an MQTT topic: ${JSON.stringify(screenId)}`)
  return `${SCREENS_PREFIX}${screenId}/`
}

/** `svc/v1/screens/<id>/<kind>`. Throws TypeError for an id that cannot be a topic level. */
export function screenTopic(screenId: string, kind: ScreenTopicKind): string {
  return `${screenTopicPrefix(screenId)}${kind}`
}

export const topics = {
  desired: (screenId: string) => screenTopic(screenId, 'desired'),
  jobs: (screenId: string) => screenTopic(screenId, 'jobs'),
  status: (screenId: string) => screenTopic(screenId, 'status'),
  reported: (screenId: string) => screenTopic(screenId, 'reported'),
  jobResults: (screenId: string) => screenTopic(screenId, 'job-results'),
  playLog: (screenId: string) => screenTopic(screenId, 'play-log'),
} as const

/** Cloud-side subscription filters (wildcards are fine for the cloud, never for devices). */
export const cloudFilters = {
  allStatus: `${SCREENS_PREFIX}+/status`,
  allReported: `${SCREENS_PREFIX}+/reported`,
  allJobResults: `${SCREENS_PREFIX}+/job-results`,
  allPlayLog: `${SCREENS_PREFIX}+/play-log`,
} as const

export interface ParsedScreenTopic {
  screenId: string
  kind: ScreenTopicKind
}

/** Splits a concrete contract topic; null for anything else (including wildcard filters). */
export function parseScreenTopic(topic: string): ParsedScreenTopic | null {
  if (typeof topic !== 'string' || !topic.startsWith(SCREENS_PREFIX)) return null
  const rest = topic.slice(SCREENS_PREFIX.length).split('/')
  if (rest.length !== 2) return null
  const [screenId, kind] = rest as [string, string]
  if (!isValidScreenId(screenId)) return null
  if (!(SCREEN_TOPIC_KINDS as readonly string[]).includes(kind)) return null
  return { screenId, kind: kind as ScreenTopicKind }
}

/**
 * Broker ACL check, usable unchanged for a publish topic and for a subscribe
 * filter: true only when `topic` starts with exactly `svc/v1/screens/<screenId>/`,
 * has something after it, and contains no `+`, `#` or NUL anywhere. Rejecting
 * wildcards outright (rather than reasoning about where they sit) means a
 * filter can never match another screen's topics.
 */
export function isOwnTopic(screenId: string, topic: string): boolean {
  if (!isValidScreenId(screenId) || typeof topic !== 'string') return false
  if (/[+#\0]/.test(topic)) return false
  const prefix = `${SCREENS_PREFIX}${screenId}/`
  return topic.length > prefix.length && topic.startsWith(prefix)
}

/** Stricter ACL: the device may publish only its agent-to-cloud topics. */
export function mayDevicePublish(screenId: string, topic: string): boolean {
  if (!isOwnTopic(screenId, topic)) return false
  const parsed = parseScreenTopic(topic)
  return parsed !== null && TOPIC_SPECS[parsed.kind].direction === 'agent-to-cloud'
}

/** Stricter ACL: the device may subscribe only to its cloud-to-agent topics. */
export function mayDeviceSubscribe(screenId: string, filter: string): boolean {
  if (!isOwnTopic(screenId, filter)) return false
  const parsed = parseScreenTopic(filter)
  return parsed !== null && TOPIC_SPECS[parsed.kind].direction === 'cloud-to-agent'
}
