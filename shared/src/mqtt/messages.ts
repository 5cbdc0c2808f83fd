// MQTT payload contract v1: one TypeBox schema per message, giving the
// runtime check and the TypeScript type. Objects are open (unknown fields are
// allowed and ignored) so the cloud can add fields without breaking agents; what
// a device sends is kept only as far as the contract defines it (parse.ts drops
// the rest of `reported` and `status`).
import { Type, type Static, type TLiteral, type TUnion } from '@sinclair/typebox'
import { OperatingHoursSchema, ScheduleSchema } from '../schedule/index.js'

/** ISO 8601 UTC-or-offset date-time, as every timestamp in the contract. */
export const TIMESTAMP_PATTERN =
  '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$'
export const Timestamp = Type.String({ pattern: TIMESTAMP_PATTERN, maxLength: 64, description: 'ISO 8601 date-time' })
/** Bytes as contiguous hex pairs, either case, no separators. */
export const HEX_PATTERN = '^([0-9a-fA-F]{2})*$'
export const HexBytes = Type.String({ pattern: HEX_PATTERN, description: 'hex byte pairs such as "0a1B"' })
const NonEmptyHexBytes = Type.String({ pattern: '^([0-9a-fA-F]{2})+$', description: 'at least one hex byte pair such as "0a1B"' })
const Id = Type.String({ minLength: 1 })

/** A panel's power as the agent reads it back. */
export const PANEL_POWERS = ['on', 'off', 'unknown'] as const
export const PANEL_PROBLEMS = ['no-cec'] as const
export type PanelPower = (typeof PANEL_POWERS)[number]

function literals<T extends string>(values: readonly T[]): TUnion<TLiteral<T>[]> {
  return Type.Union(values.map((v) => Type.Literal(v)))
}

/** Content kinds a screen can be told to play (assignment, cast, emergency). */
export const CONTENT_KINDS = ['media', 'playlist', 'app', 'creative', 'layout', 'signage', 'schedule'] as const
export const ContentKindSchema = literals(CONTENT_KINDS)
export type ContentKind = Static<typeof ContentKindSchema>

/** How a picture or video fills its area: `contain` (whole, letterboxed; the default) or `cover` (fills, cropped). */
export const FitSchema = Type.Union([Type.Literal('contain'), Type.Literal('cover')])
export type Fit = Static<typeof FitSchema>

/** How a playlist moves to its next item: `none` (a cut; the default) or `fade` (the next item fades in over the old one). */
export const TransitionSchema = Type.Union([Type.Literal('none'), Type.Literal('fade')])
export type Transition = Static<typeof TransitionSchema>
/** Longest transition (ms). */
export const MAX_TRANSITION_MS = 10_000

/** One entry of a playlist, already resolved to something the player can fetch. */
export const PlayableItemSchema = Type.Object({
  contentKind: ContentKindSchema,
  contentId: Id,
  name: Type.Optional(Type.String()),
  url: Type.Optional(Type.String()),
  mimeType: Type.Optional(Type.String()),
  sha256: Type.Optional(Type.String()),
  sizeBytes: Type.Optional(Type.Integer({ minimum: 0 })),
  durationMs: Type.Optional(Type.Integer({ minimum: 0 })),
  fit: Type.Optional(FitSchema),
})
export type PlayableItem = Static<typeof PlayableItemSchema>

/**
 * What the cloud resolved a content id to, so the agent can play it without
 * another request. Every field is optional; which ones appear depends on the
 * kind (media: url/mimeType/sha256; playlist: items; app: url/config;
 * schedule: schedule).
 */
export const PlayableContentSchema = Type.Object({
  name: Type.Optional(Type.String()),
  url: Type.Optional(Type.String()),
  mimeType: Type.Optional(Type.String()),
  sha256: Type.Optional(Type.String()),
  sizeBytes: Type.Optional(Type.Integer({ minimum: 0 })),
  durationMs: Type.Optional(Type.Integer({ minimum: 0 })),
  items: Type.Optional(Type.Array(PlayableItemSchema)),
  fit: Type.Optional(FitSchema),
  /** A playlist's change from one item to the next, and how long it takes (default 500 ms). */
  transition: Type.Optional(TransitionSchema),
  transitionMs: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_TRANSITION_MS })),
  config: Type.Optional(Type.Unknown()),
  /** For contentKind `schedule` on a cast or emergency: the schedule to evaluate. */
  schedule: Type.Optional(ScheduleSchema),
})
export type PlayableContent = Static<typeof PlayableContentSchema>

export const AssignmentSchema = Type.Object({
  contentKind: ContentKindSchema,
  contentId: Id,
  content: Type.Optional(PlayableContentSchema),
})
export type Assignment = Static<typeof AssignmentSchema>

export const DesiredCastSchema = Type.Object({
  id: Id,
  contentKind: ContentKindSchema,
  contentId: Id,
  content: Type.Optional(PlayableContentSchema),
  triggeredAt: Timestamp,
  /** null = stays until cleared. */
  expiresAt: Type.Union([Timestamp, Type.Null()]),
})
export type DesiredCast = Static<typeof DesiredCastSchema>

/** A CAP alert's text, field by field, so the player lays it out (headline, instruction on its own line, severity colours). */
export const EmergencyAlertSchema = Type.Object({
  /** CAP severity: Extreme, Severe, Moderate, Minor or Unknown. */
  severity: Type.String(),
  headline: Type.String(),
  description: Type.Optional(Type.String()),
  instruction: Type.Optional(Type.String()),
  /** The sender's name (CAP senderName, else sender). */
  senderName: Type.String(),
  /** When the sender sent it (CAP sent, with its offset). */
  sent: Type.String(),
  /** A Test or Exercise alert a feed accepts: shown marked as a test. */
  test: Type.Optional(Type.Boolean()),
})
export type EmergencyAlert = Static<typeof EmergencyAlertSchema>

export const DesiredEmergencySchema = Type.Object({
  id: Id,
  contentKind: ContentKindSchema,
  contentId: Id,
  content: Type.Optional(PlayableContentSchema),
  message: Type.Optional(Type.String()),
  /** `banner`: the message in a band over the running content instead of the emergency's content; absent = full screen. */
  presentation: Type.Optional(Type.Union([Type.Literal('fullscreen'), Type.Literal('banner')])),
  /** Started by a CAP alert: its text field by field (message carries the same text as one string). */
  alert: Type.Optional(EmergencyAlertSchema),
  /**
   * An emergency without content (a CAP feed that names none): the message alone, filling the
   * screen (`fullscreen`) or as a band over the running content (`banner`). When present it
   * decides, and contentKind / contentId / presentation are only what an agent that predates
   * it reads: `schedule` with the emergency's id and no content (nothing of its own to play)
   * and `banner`, so such an agent plays what runs beneath and lays the message over it.
   */
  messageOnly: Type.Optional(Type.Union([Type.Literal('fullscreen'), Type.Literal('banner')])),
  startedAt: Timestamp,
})
export type DesiredEmergency = Static<typeof DesiredEmergencySchema>

export const PanelSettingsSchema = Type.Object({
  /** Codec name from shared's panel protocols, e.g. `samsung-mdc`. */
  protocol: Type.String({ minLength: 1 }),
  /** Panel address on the serial bus (Samsung MDC id, LG set id, …). */
  setId: Type.Integer({ minimum: 0 }),
  /** How often the agent polls power/input; 0 = never. */
  pollSeconds: Type.Integer({ minimum: 0 }),
})
export type PanelSettings = Static<typeof PanelSettingsSchema>

/** A resolved description for a content ref used by the schedule. */
export const LibraryEntrySchema = Type.Object({
  kind: Type.String({ minLength: 1 }),
  id: Id,
  content: PlayableContentSchema,
})
export type LibraryEntry = Static<typeof LibraryEntrySchema>

/** `screens/<id>/desired` — retained, full state, level-triggered. */
export const DesiredStateSchema = Type.Object({
  /** Strictly increasing per screen; the agent ignores anything not newer. */
  version: Type.Integer({ minimum: 0 }),
  screenId: Id,
  /** The screen's IANA zone; schedules without their own zone use it. */
  timezone: Type.String({ minLength: 1 }),
  assignment: Type.Union([AssignmentSchema, Type.Null()]),
  /** The resolved schedule when assignment.contentKind is `schedule`, else null. */
  schedule: Type.Union([ScheduleSchema, Type.Null()]),
  /** Resolved descriptions for the content refs the schedule names. */
  library: Type.Optional(Type.Array(LibraryEntrySchema)),
  /** Active casts, newest first (expired ones may linger; the agent drops them). */
  casts: Type.Array(DesiredCastSchema),
  emergency: Type.Union([DesiredEmergencySchema, Type.Null()]),
  panel: Type.Union([PanelSettingsSchema, Type.Null()]),
  /**
   * When the panel should be on (the screen's own hours, else its nearest location's);
   * null or absent = not switched by time. Read in `timezone`.
   */
  operatingHours: Type.Optional(Type.Union([OperatingHoursSchema, Type.Null()])),
  generatedAt: Timestamp,
})
export type DesiredState = Static<typeof DesiredStateSchema>

export const SerialJobSchema = Type.Object({
  id: Id,
  kind: Type.Literal('serial'),
  /** Exact bytes to write, already expanded from the template. */
  bytesHex: NonEmptyHexBytes,
  /** Panel codec to read the reply with; null/absent = raw (ok on any reply). */
  protocol: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  /** How long to wait for a reply; the agent's default when absent. */
  timeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 120_000 })),
  createdAt: Timestamp,
})
export type SerialJob = Static<typeof SerialJobSchema>

export const RebootJobSchema = Type.Object({
  id: Id,
  kind: Type.Literal('reboot'),
  createdAt: Timestamp,
})
export type RebootJob = Static<typeof RebootJobSchema>

export const ScreenshotJobSchema = Type.Object({
  id: Id,
  kind: Type.Literal('screenshot'),
  /** Pre-signed URL the agent PUTs the image to. */
  uploadUrl: Type.Optional(Type.String()),
  createdAt: Timestamp,
})
export type ScreenshotJob = Static<typeof ScreenshotJobSchema>

/** The largest screenshot PNG the cloud takes (bytes); the agent scales a larger display capture down to fit. */
export const SCREENSHOT_MAX_BYTES = 16 * 1024 ** 2

/**
 * Bounds of the agent's log lines and of one upload of them (the `logs` job's answer): the
 * agent keeps within them, the cloud refuses more. At its bounds an upload is about
 * 5000 × 2000 characters, so the byte bound is what cuts a long-lined one (oldest lines first).
 */
export const AGENT_LOG_LIMITS = {
  /** Lines one upload holds at most, and the most a request may ask for. */
  maxLines: 5000,
  /** Characters of one line's message; the agent cuts a longer one, ending it with `…`. */
  messageLength: 2000,
  /** Bytes of one upload's JSON body. */
  maxBytes: 1024 * 1024,
} as const
/** A log line's level: the agent's own (`debug`…`error`); a kiosk console's `log` is `info`. */
export const AGENT_LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const
export type AgentLogLevel = (typeof AGENT_LOG_LEVELS)[number]
/** Where a line comes from: the agent's own log, or the kiosk browser's console (the player page). */
export const AGENT_LOG_SOURCES = ['agent', 'kiosk'] as const
export type AgentLogSource = (typeof AGENT_LOG_SOURCES)[number]
/** One line as the agent uploads it and the cloud serves it. */
export interface AgentLogLine {
  at: string
  level: AgentLogLevel
  source: AgentLogSource
  message: string
}

export const LogsJobSchema = Type.Object({
  id: Id,
  kind: Type.Literal('logs'),
  /** Where the agent PUTs its lines (JSON `{lines, truncated}`), with its device credential. */
  uploadUrl: Type.Optional(Type.String()),
  /** At most this many lines, the newest. */
  lines: Type.Integer({ minimum: 1, maximum: AGENT_LOG_LIMITS.maxLines }),
  /** Only lines logged at or after this time; null or absent = any. */
  since: Type.Optional(Type.Union([Timestamp, Type.Null()])),
  createdAt: Timestamp,
})
export type LogsJob = Static<typeof LogsJobSchema>

/** The architectures a packed agent is built for (Node's names). */
export const AGENT_ARCHES = ['x64', 'arm64'] as const
export type AgentArch = (typeof AGENT_ARCHES)[number]
/** An agent version as the agent reports it and a release names it. */
export const AGENT_VERSION_PATTERN = '^[0-9A-Za-z][0-9A-Za-z.+_-]*$'

/**
 * `update`: install the packed agent `version` for `arch` (a release uploaded through
 * `POST /v1/agent-releases`, sent by a rollout). The agent downloads `url` with its device
 * credential (HTTP Basic screenId:deviceSecret), checks `size` and `sha256`, checks
 * `signature` (Ed25519 over the 32 bytes of the SHA-256, base64) against the release key it
 * was installed with, unpacks it beside the running version and restarts into it. The job's
 * result is sent by the new version once it has connected and reported (`ok`), or by the
 * previous one when it went back (`failed`, `rolledBack: true`), or at once when the release
 * is refused (`failed` with the reason).
 */
export const UpdateJobSchema = Type.Object({
  id: Id,
  kind: Type.Literal('update'),
  version: Type.String({ minLength: 1, maxLength: 64, pattern: AGENT_VERSION_PATTERN }),
  arch: literals(AGENT_ARCHES),
  /** Where the tarball is (the cloud's `/v1/devices/agent-releases/<id>/tarball`). */
  url: Type.String({ minLength: 1 }),
  /** The tarball's SHA-256, lowercase hex. */
  sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  /** The tarball's length in bytes. */
  size: Type.Integer({ minimum: 1 }),
  /** Ed25519 signature of the SHA-256 digest's 32 bytes, base64. */
  signature: Type.String({ minLength: 1, maxLength: 200 }),
  createdAt: Timestamp,
})
export type UpdateJob = Static<typeof UpdateJobSchema>

export const JOB_KINDS = ['serial', 'reboot', 'screenshot', 'logs', 'update'] as const
export type JobKind = (typeof JOB_KINDS)[number]
/** `screens/<id>/jobs` — not retained; delivered through the persistent session. */
export const JobSchema = Type.Union([SerialJobSchema, RebootJobSchema, ScreenshotJobSchema, LogsJobSchema, UpdateJobSchema])
export type Job = Static<typeof JobSchema>

/** `screens/<id>/status` — retained; also the agent's Last Will (`offline`). */
export const StatusMessageSchema = Type.Object({
  status: literals(['online', 'offline'] as const),
  at: Timestamp,
})
export type StatusMessage = Static<typeof StatusMessageSchema>

/**
 * Bounds of what a device reports. The cloud stores `reported` and hands it back through
 * its API, so every string has a length limit, every number a range, and (see parse.ts)
 * fields the contract does not define are dropped before it is kept.
 */
export const REPORTED_LIMITS = {
  /** Content, cast, emergency and schedule-rule ids. */
  idLength: 256,
  /** The panel's input name (`HDMI1`, `DisplayPort`, …). */
  inputLength: 64,
} as const
const ReportedId = Type.String({ minLength: 1, maxLength: REPORTED_LIMITS.idLength })
const Count = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })

export const PLAYING_SOURCES = ['emergency', 'cast', 'assignment', 'schedule', 'none'] as const
export type PlayingSource = (typeof PLAYING_SOURCES)[number]

export const PlayingSchema = Type.Object({
  source: literals(PLAYING_SOURCES),
  /** null exactly when source is `none`. */
  contentKind: Type.Union([ContentKindSchema, Type.Null()]),
  contentId: Type.Union([ReportedId, Type.Null()]),
  castId: Type.Optional(ReportedId),
  emergencyId: Type.Optional(ReportedId),
  /** The schedule rule that chose the content, when a schedule did. */
  ruleId: Type.Optional(ReportedId),
})
export type Playing = Static<typeof PlayingSchema>

export const PanelReportSchema = Type.Object({
  power: literals(PANEL_POWERS),
  input: Type.Optional(Type.String({ maxLength: REPORTED_LIMITS.inputLength })),
  volume: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
  mute: Type.Optional(Type.Boolean()),
  /** When the panel was last read. */
  at: Timestamp,
  /**
   * Why `power` is unknown, when the agent can tell: `no-cec` = a CEC display acknowledged
   * nothing (a TV without CEC, CEC switched off in its menu, or a cable without the CEC
   * line) — not the same as a display that is off.
   */
  problem: Type.Optional(literals(PANEL_PROBLEMS)),
  /** What the screen's operating hours (or a cast or emergency) want; absent without hours. */
  intended: Type.Optional(Type.Union([Type.Literal('on'), Type.Literal('off')])),
  /** Whether the last read-back after a power command matched `intended`; absent before one. */
  obeying: Type.Optional(Type.Boolean()),
})
export type PanelReport = Static<typeof PanelReportSchema>

export const StorageReportSchema = Type.Object({
  usedBytes: Count,
  totalBytes: Count,
})
export type StorageReport = Static<typeof StorageReportSchema>

/** Video frames the player page decoded and dropped (getVideoPlaybackQuality), since the page loaded. */
export const VideoReportSchema = Type.Object({
  decoded: Count,
  dropped: Count,
})
export type VideoReport = Static<typeof VideoReportSchema>

/** `screens/<id>/reported` — not retained; what the screen is doing now. */
export const ReportedSchema = Type.Object({
  /** The desired `version` the agent has applied (0 before any). */
  version: Count,
  playing: PlayingSchema,
  panel: Type.Optional(PanelReportSchema),
  storage: Type.Optional(StorageReportSchema),
  /**
   * Video frames decoded and dropped by the kiosk page since it loaded (its pages' sum, as
   * last told: they tell every 10 s and when a video ends); absent before a page told any.
   */
  video: Type.Optional(VideoReportSchema),
  /** The agent's own version (its package's), shown on the screen's views. */
  agentVersion: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: AGENT_VERSION_PATTERN })),
  /** The player's CPU architecture as Node names it (`x64`, `arm64`, …): which release of an update it needs. */
  agentArch: Type.Optional(Type.String({ minLength: 1, maxLength: 16, pattern: '^[0-9a-z]+$' })),
  at: Timestamp,
})
export type Reported = Static<typeof ReportedSchema>

export const JOB_OUTCOMES = ['ok', 'nak', 'timeout', 'failed'] as const
export type JobOutcome = (typeof JOB_OUTCOMES)[number]

/** `screens/<id>/job-results` — not retained; one per job. */
export const JobResultSchema = Type.Object({
  jobId: Id,
  kind: Type.Optional(literals(JOB_KINDS)),
  /** Bytes written to the panel; empty for non-serial jobs. */
  sentHex: HexBytes,
  /** Bytes read back (possibly partial on timeout); empty when none. */
  replyHex: HexBytes,
  outcome: literals(JOB_OUTCOMES),
  /** Required when outcome is `failed`; optional detail otherwise. */
  reason: Type.Optional(Type.String()),
  /** `update` jobs: true when the new version did not come back and the agent returned to the previous one. */
  rolledBack: Type.Optional(Type.Boolean()),
  at: Timestamp,
})
export type JobResult = Static<typeof JobResultSchema>

/**
 * Bounds of a proof-of-play batch. A batch at its bounds (every string at its maximum)
 * still fits MAX_PAYLOAD_BYTES: 200 × (6 ids × 256 + the rest) ≈ 330 KB.
 */
export const PLAY_LOG_LIMITS = {
  /** Records per batch (one batch per MQTT message). */
  maxRecords: 200,
  idLength: 256,
  /** `source`, `contentKind`, `itemKind`. */
  kindLength: 32,
  /** A layout zone's name. */
  zoneLength: 128,
  batchIdLength: 128,
  /** One play lasts at most 366 days (a looping video stays one play until the view changes). */
  maxDurationMs: 366 * 24 * 3600 * 1000,
} as const
const PlayId = Type.String({ minLength: 1, maxLength: PLAY_LOG_LIMITS.idLength })
const PlayKind = Type.String({ minLength: 1, maxLength: PLAY_LOG_LIMITS.kindLength })

/** One completed play: what was on screen (an item of what was assigned/cast), from when to when. */
export const PlayRecordSchema = Type.Object({
  /** The screen that played it; must be the screen the batch is published for. */
  screenId: PlayId,
  /** Why it played: `emergency`, `cast`, `assignment`, `schedule`. */
  source: PlayKind,
  contentKind: PlayKind,
  contentId: PlayId,
  castId: Type.Union([PlayId, Type.Null()]),
  emergencyId: Type.Union([PlayId, Type.Null()]),
  /** The piece that was on screen: a playlist's item, a layout zone's content, or the content itself. */
  itemKind: PlayKind,
  itemId: PlayId,
  zone: Type.Union([Type.String({ minLength: 1, maxLength: PLAY_LOG_LIMITS.zoneLength }), Type.Null()]),
  startedAt: Timestamp,
  endedAt: Timestamp,
  durationMs: Type.Integer({ minimum: 0, maximum: PLAY_LOG_LIMITS.maxDurationMs }),
  /**
   * The panel's power as the agent last read it back when the play started (proof of
   * display); `unknown` without a panel or a reading. Absent from older agents: `unknown`.
   */
  panelPower: Type.Optional(literals(PANEL_POWERS)),
})
export type PlayRecordMessage = Static<typeof PlayRecordSchema>

/** `screens/<id>/play-log` — not retained; a batch of completed plays, oldest first. */
export const PlayLogBatchSchema = Type.Object({
  /** Chosen by the agent; logging only (the cloud dedupes record by record). */
  batchId: Type.String({ minLength: 1, maxLength: PLAY_LOG_LIMITS.batchIdLength }),
  records: Type.Array(PlayRecordSchema, { minItems: 1, maxItems: PLAY_LOG_LIMITS.maxRecords }),
})
export type PlayLogBatchMessage = Static<typeof PlayLogBatchSchema>
