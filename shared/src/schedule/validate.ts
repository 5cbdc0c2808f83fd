// Field-by-field schedule validation with messages an API caller can act on
// (the cloud answers 422 with them). Structural and semantic checks in one
// pass, so a caller sees every problem at once.
import { CONTENT_REF_KINDS, type Schedule, type ScheduleIssue } from './types.js'
import { dayOfIsoDate, isValidTimeZone, minutesOfClock } from './timezone.js'

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function show(v: unknown): string {
  try {
    const s = JSON.stringify(v)
    return s === undefined ? String(v) : s.length > 60 ? `${s.slice(0, 57)}...` : s
  } catch {
    return String(v)
  }
}

/**
 * Every problem with `input` as a schedule; an empty list means it is valid.
 * Each message starts with the field path, e.g.
 * `rules[1].start: "25:00" is not a time; use HH:MM from 00:00 to 23:59`.
 */
export function validateSchedule(input: unknown): ScheduleIssue[] {
  const issues: ScheduleIssue[] = []
  const add = (field: string, text: string) => issues.push({ field, message: field ? `${field}: ${text}` : text })

  if (!isObject(input)) {
    add('', 'schedule must be an object with rules and fallback')
    return issues
  }
  if (input.timezone !== undefined && input.timezone !== null) {
    if (typeof input.timezone !== 'string') add('timezone', 'must be an IANA time zone name such as "Europe/London"')
    else if (!isValidTimeZone(input.timezone)) add('timezone', `unknown time zone ${show(input.timezone)}; use an IANA name such as "Europe/London"`)
  }
  if (!('fallback' in input)) add('fallback', 'is required (a content reference, or null for nothing)')
  else if (input.fallback !== null) checkContentRef(input.fallback, 'fallback', add)

  if (!Array.isArray(input.rules)) {
    add('rules', 'must be an array of rules')
    return issues
  }
  const seen = new Map<string, number>()
  input.rules.forEach((rule: unknown, i: number) => {
    const at = `rules[${i}]`
    if (!isObject(rule)) {
      add(at, 'must be an object')
      return
    }
    if (typeof rule.id !== 'string' || rule.id.length === 0) add(`${at}.id`, 'must be a non-empty string')
    else if (seen.has(rule.id)) add(`${at}.id`, `duplicates rules[${seen.get(rule.id)}].id ${show(rule.id)}`)
    else seen.set(rule.id, i)
    checkContentRef(rule.content, `${at}.content`, add)
    if (typeof rule.priority !== 'number' || !Number.isFinite(rule.priority)) add(`${at}.priority`, 'must be a number (higher wins)')
    if (rule.enabled !== undefined && typeof rule.enabled !== 'boolean') add(`${at}.enabled`, 'must be true or false')

    if (rule.days !== undefined) {
      if (!Array.isArray(rule.days)) add(`${at}.days`, 'must be an array of day numbers 0 (Sunday) to 6 (Saturday)')
      else if (rule.days.length === 0) add(`${at}.days`, 'must not be empty; omit it to mean every day')
      else
        rule.days.forEach((d: unknown, j: number) => {
          if (typeof d !== 'number' || !Number.isInteger(d) || d < 0 || d > 6)
            add(`${at}.days[${j}]`, `${show(d)} is not a day; use 0 (Sunday) to 6 (Saturday)`)
        })
    }
    for (const key of ['start', 'end'] as const) {
      const v = rule[key]
      if (v === undefined) continue
      if (typeof v !== 'string' || minutesOfClock(v, key === 'end') === null)
        add(`${at}.${key}`, `${show(v)} is not a time; use HH:MM from 00:00 to 23:59${key === 'end' ? ' (or 24:00)' : ''}`)
    }
    const days: Partial<Record<'dateFrom' | 'dateTo', number>> = {}
    for (const key of ['dateFrom', 'dateTo'] as const) {
      const v = rule[key]
      if (v === undefined) continue
      const day = typeof v === 'string' ? dayOfIsoDate(v) : null
      if (day === null) add(`${at}.${key}`, `${show(v)} is not a date; use YYYY-MM-DD`)
      else days[key] = day
    }
    if (days.dateFrom !== undefined && days.dateTo !== undefined && days.dateFrom > days.dateTo)
      add(`${at}.dateFrom`, `${show(rule.dateFrom)} is after dateTo ${show(rule.dateTo)}`)
  })
  return issues
}

/** Type guard over validateSchedule. */
export function isValidSchedule(input: unknown): input is Schedule {
  return validateSchedule(input).length === 0
}

function checkContentRef(v: unknown, at: string, add: (field: string, text: string) => void): void {
  if (!isObject(v)) {
    add(at, 'must be a content reference {kind, id}')
    return
  }
  if (typeof v.kind !== 'string' || !(CONTENT_REF_KINDS as readonly string[]).includes(v.kind))
    add(`${at}.kind`, `${show(v.kind)} is not a content kind; use one of ${CONTENT_REF_KINDS.join(', ')}`)
  if (typeof v.id !== 'string' || v.id.length === 0) add(`${at}.id`, 'must be a non-empty string')
}
