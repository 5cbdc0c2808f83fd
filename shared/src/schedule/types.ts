// Schedule data model: one TypeBox schema per shape gives both the runtime
// check (embedded in MQTT messages) and the TypeScript type. Field-level
// human messages for API callers come from validateSchedule (validate.ts).
import { Type, type Static } from '@sinclair/typebox'

export const CONTENT_REF_KINDS = ['media', 'playlist', 'app', 'creative', 'layout', 'signage'] as const
export type ContentRefKind = (typeof CONTENT_REF_KINDS)[number]

/** Local clock time `HH:MM`, 00:00–23:59 (`end` may also be `24:00`). */
export const CLOCK_PATTERN = '^([01][0-9]|2[0-3]):[0-5][0-9]$|^24:00$'
/** Local calendar date `YYYY-MM-DD`. */
export const DATE_PATTERN = '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$'

export const ContentRefSchema = Type.Object({
  kind: Type.Union(CONTENT_REF_KINDS.map((k) => Type.Literal(k))),
  id: Type.String({ minLength: 1 }),
})
export type ContentRef = Static<typeof ContentRefSchema>

/** 0 = Sunday … 6 = Saturday, in the schedule's local time. */
export type DayOfWeek = 0 | 1 | 2 | 3 | 4 | 5 | 6
export const DayOfWeekSchema = Type.Unsafe<DayOfWeek>(Type.Integer({ minimum: 0, maximum: 6 }))

export const ScheduleRuleSchema = Type.Object({
  id: Type.String({ minLength: 1 }),
  content: ContentRefSchema,
  /** Higher wins. */
  priority: Type.Number(),
  /** Local days the window may START on; omitted = every day. */
  days: Type.Optional(Type.Array(DayOfWeekSchema, { minItems: 1, maxItems: 7 })),
  /** Local start `HH:MM`; omitted = 00:00. */
  start: Type.Optional(Type.String({ pattern: CLOCK_PATTERN })),
  /** Local end `HH:MM`; omitted = midnight. `end <= start` runs past midnight. */
  end: Type.Optional(Type.String({ pattern: CLOCK_PATTERN })),
  /** First local date a window may start on (inclusive). */
  dateFrom: Type.Optional(Type.String({ pattern: DATE_PATTERN })),
  /** Last local date a window may start on (inclusive). */
  dateTo: Type.Optional(Type.String({ pattern: DATE_PATTERN })),
  /** false switches the rule off; omitted = on. */
  enabled: Type.Optional(Type.Boolean()),
})
export type ScheduleRule = Static<typeof ScheduleRuleSchema>

export const ScheduleSchema = Type.Object({
  /** IANA zone; when set it overrides the screen's zone. */
  timezone: Type.Optional(Type.String({ minLength: 1 })),
  rules: Type.Array(ScheduleRuleSchema),
  /** Plays when no rule is active; null = nothing. */
  fallback: Type.Union([ContentRefSchema, Type.Null()]),
})
export type Schedule = Static<typeof ScheduleSchema>

export interface ScheduleEvaluation {
  /** What plays (a rule's content or the fallback), or null for nothing. */
  content: ContentRef | null
  /** The winning rule's id; null when the fallback (or nothing) plays. */
  ruleId: string | null
  /**
   * The next instant the answer changes, found by scanning window boundaries
   * up to 8 days ahead. When nothing changes inside that horizon but a rule's
   * date range could still change the answer later, the horizon's end is
   * returned as a re-check point. Null when the answer can never change.
   */
  nextChangeAt: Date | null
}

export interface ScheduleIssue {
  /** Field path such as `rules[2].start`; empty for the whole schedule. */
  field: string
  /** Human message that names the field, suitable for a 422 answer. */
  message: string
}
