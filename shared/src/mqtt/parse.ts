// Edge validation for MQTT payloads: bytes in, typed value or a list of
// issues out. Never throws, whatever arrives on the wire.
import { Kind, type TSchema, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors'
import {
  DesiredStateSchema,
  JobResultSchema,
  LogsJobSchema,
  UpdateJobSchema,
  PlayLogBatchSchema,
  PlayRecordSchema,
  RebootJobSchema,
  ReportedSchema,
  ScreenshotJobSchema,
  SerialJobSchema,
  StatusMessageSchema,
  JOB_KINDS,
  type DesiredState,
  type Job,
  type JobResult,
  type PlayLogBatchMessage,
  type PlayRecordMessage,
  type Reported,
  type StatusMessage,
} from './messages.js'
import type { ScreenTopicKind } from './topics.js'

export interface MessageIssue {
  /** JSON pointer into the payload, e.g. `/casts/0/expiresAt`; empty for the whole payload. */
  path: string
  message: string
}

export type ParseResult<T> = { ok: true; value: T } | { ok: false; errors: MessageIssue[] }

/** Largest payload accepted before JSON parsing (desired state with a big playlist fits easily). */
export const MAX_PAYLOAD_BYTES = 1_048_576
/**
 * Largest MQTT packet (its remaining length) a connected device may send: a full payload
 * plus room for the topic and packet id. The broker closes a connection announcing more.
 */
export const MAX_DEVICE_PACKET_BYTES = MAX_PAYLOAD_BYTES + 1024
/** Largest packet before the broker accepted the CONNECT: ids, credentials and the will fit. */
export const MAX_CONNECT_PACKET_BYTES = 4096
const MAX_ISSUES = 20

/** JSON bytes for publishing a message. */
export function encodeMessage(message: unknown): Buffer {
  return Buffer.from(JSON.stringify(message), 'utf8')
}

function readJson(payload: unknown): ParseResult<unknown> {
  let text: string
  if (typeof payload === 'string') text = payload
  else if (payload instanceof Uint8Array) {
    if (payload.byteLength > MAX_PAYLOAD_BYTES) return fail('', `payload is larger than ${MAX_PAYLOAD_BYTES} bytes`)
    text = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8')
  } else return fail('', 'payload must be a Buffer, Uint8Array or string')
  if (text.length > MAX_PAYLOAD_BYTES) return fail('', `payload is larger than ${MAX_PAYLOAD_BYTES} bytes`)
  try {
    return { ok: true, value: JSON.parse(text) as unknown }
  } catch (err) {
    return fail('', `payload is not JSON: ${err instanceof Error ? err.message : String(err)}`)
  }
}

function fail(path: string, message: string): { ok: false; errors: MessageIssue[] } {
  return { ok: false, errors: [{ path, message }] }
}

function describeType(schema: TSchema): string {
  if ('const' in schema) return JSON.stringify(schema.const)
  if (typeof schema.type === 'string') return schema.type
  return 'value'
}

function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  return typeof value
}

function schemaAccepts(schema: TSchema, jsType: string): boolean {
  if ('const' in schema) return jsonTypeOf(schema.const) === jsType
  return schema.type === jsType || (schema.type === 'integer' && jsType === 'number')
}

/** Turns TypeBox errors into issues; for unions, reports the branch whose type fits the value. */
function issuesOf(error: ValueError): MessageIssue[] {
  if (error.type === ValueErrorType.Union) {
    const variants: TSchema[] = Array.isArray(error.schema.anyOf) ? error.schema.anyOf : []
    const jsType = jsonTypeOf(error.value)
    const fits = variants.filter((v) => !('const' in v) && schemaAccepts(v, jsType))
    if (fits.length === 1) {
      const branch = error.errors[variants.indexOf(fits[0]!)]
      const inner = branch ? [...branch] : []
      if (inner.length) return inner.flatMap(issuesOf)
    }
    return [{ path: error.path, message: `Expected ${variants.map(describeType).join(' or ')}` }]
  }
  // Patterns are unreadable in a message; the schema's description says what is meant.
  if (error.type === ValueErrorType.StringPattern && typeof error.schema.description === 'string')
    return [{ path: error.path, message: `Expected ${error.schema.description}` }]
  return [{ path: error.path, message: error.message }]
}

// Checks compiled once per schema: `Value.Check` walks the schema on every call (a cast's
// 10,000 reports spent more in that walk than in the database write they led to).
const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>()
function compiledCheck(schema: TSchema): TypeCheck<TSchema> {
  let c = compiled.get(schema)
  if (!c) {
    c = TypeCompiler.Compile(schema)
    compiled.set(schema, c)
  }
  return c
}

function check<S extends TSchema>(schema: S, value: unknown): ParseResult<Static<S>> {
  if (compiledCheck(schema).Check(value)) return { ok: true, value: value as Static<S> }
  const errors: MessageIssue[] = []
  for (const e of Value.Errors(schema, value)) {
    for (const issue of issuesOf(e)) {
      // One issue per path: "missing" already says all there is to say.
      if (!errors.some((x) => x.path === issue.path)) errors.push(issue)
    }
    if (errors.length >= MAX_ISSUES) break
  }
  return { ok: false, errors: errors.slice(0, MAX_ISSUES) }
}

function validateValue<S extends TSchema>(schema: S, value: unknown, semantic?: (v: Static<S>) => MessageIssue[]): ParseResult<Static<S>> {
  const r = check(schema, value)
  if (!r.ok || !semantic) return r
  const extra = semantic(r.value)
  return extra.length ? { ok: false, errors: extra } : r
}

// The schema with every object closed (`additionalProperties: false`), compiled: a value
// it accepts has no field to drop, so the clean below can be skipped. null for schemas it
// cannot close without changing their meaning (an intersection's members share fields).
const closedChecks = new WeakMap<TSchema, TypeCheck<TSchema> | null>()
function closed(schema: TSchema): TSchema | null {
  if (Array.isArray(schema.allOf)) return null
  const out: Record<string | symbol, unknown> = { ...schema }
  if (schema[Kind] === 'Object' && schema.additionalProperties === undefined) out.additionalProperties = false
  for (const key of ['items', 'not', 'additionalProperties'] as const) {
    const sub = schema[key]
    if (sub && typeof sub === 'object' && !Array.isArray(sub)) {
      const c = closed(sub as TSchema)
      if (!c) return null
      out[key] = c
    }
  }
  for (const key of ['anyOf', 'oneOf', 'items'] as const) {
    if (!Array.isArray(schema[key])) continue
    const subs = (schema[key] as TSchema[]).map(closed)
    if (subs.some((x) => !x)) return null
    out[key] = subs
  }
  for (const key of ['properties', 'patternProperties'] as const) {
    const props = schema[key] as Record<string, TSchema> | undefined
    if (!props) continue
    const next: Record<string, TSchema> = {}
    for (const [name, sub] of Object.entries(props)) {
      const c = closed(sub)
      if (!c) return null
      next[name] = c
    }
    out[key] = next
  }
  return out as unknown as TSchema
}
function closedCheck(schema: TSchema): TypeCheck<TSchema> | null {
  let c = closedChecks.get(schema)
  if (c === undefined) {
    const s = closed(schema)
    c = s ? TypeCompiler.Compile(s) : null
    closedChecks.set(schema, c)
  }
  return c
}

/**
 * Validates, then keeps only the fields the schema defines. `owned`: the value was just
 * parsed here and may be returned as it is; otherwise the answer is a copy (the input is
 * not changed). For what a device sends that the cloud stores and serves back.
 */
function validateStrict<S extends TSchema>(schema: S, value: unknown, semantic?: (v: Static<S>) => MessageIssue[], owned = false): ParseResult<Static<S>> {
  const r = validateValue(schema, value, semantic)
  if (!r.ok) return r
  // Nothing beyond the contract's fields (what agents send): no clean needed.
  if (closedCheck(schema)?.Check(r.value)) return owned ? r : { ok: true, value: Value.Clone(r.value) }
  return { ok: true, value: Value.Clean(schema, Value.Clone(r.value)) as Static<S> }
}

function parseWith<S extends TSchema>(schema: S, payload: unknown, semantic?: (v: Static<S>) => MessageIssue[]): ParseResult<Static<S>> {
  const json = readJson(payload)
  return json.ok ? validateValue(schema, json.value, semantic) : json
}

function desiredSemantics(v: DesiredState): MessageIssue[] {
  const issues: MessageIssue[] = []
  if (!Number.isSafeInteger(v.version)) issues.push({ path: '/version', message: 'version must be a safe integer' })
  if (v.assignment?.contentKind === 'schedule' && v.schedule === null && v.assignment.content?.schedule === undefined)
    issues.push({ path: '/schedule', message: 'a schedule assignment needs the resolved schedule' })
  return issues
}

function reportedSemantics(v: Reported): MessageIssue[] {
  const p = v.playing
  if ((p.contentKind === null) !== (p.contentId === null)) return [{ path: '/playing', message: 'contentKind and contentId are null together' }]
  // Without content: nothing plays, or a message-only emergency fills the screen.
  const bare = p.source === 'none' || (p.source === 'emergency' && p.emergencyId !== undefined)
  if (p.contentKind === null ? !bare : p.source === 'none')
    return [{ path: '/playing', message: 'contentKind and contentId are null when source is "none" (or a message-only emergency plays), and only then' }]
  return []
}

function jobResultSemantics(v: JobResult): MessageIssue[] {
  if (v.outcome === 'failed' && !v.reason) return [{ path: '/reason', message: 'a failed outcome needs a reason' }]
  return []
}

function validateJobValue(value: unknown): ParseResult<Job> {
  const kind = typeof value === 'object' && value !== null ? (value as { kind?: unknown }).kind : undefined
  switch (kind) {
    case 'serial':
      return check(SerialJobSchema, value)
    case 'reboot':
      return check(RebootJobSchema, value)
    case 'screenshot':
      return check(ScreenshotJobSchema, value)
    case 'logs':
      return check(LogsJobSchema, value)
    case 'update':
      return check(UpdateJobSchema, value)
    default:
      return typeof value === 'object' && value !== null && !Array.isArray(value)
        ? fail('/kind', `Expected one of ${JOB_KINDS.map((k) => JSON.stringify(k)).join(', ')}`)
        : fail('', 'Expected object')
  }
}

function playTimeIssues(r: PlayRecordMessage, at: string): MessageIssue[] {
  const start = Date.parse(r.startedAt)
  const end = Date.parse(r.endedAt)
  if (!Number.isFinite(start) || !Number.isFinite(end)) return [{ path: `${at}/startedAt`, message: 'startedAt and endedAt must be real dates' }]
  if (end < start) return [{ path: `${at}/endedAt`, message: 'endedAt is before startedAt' }]
  return []
}

function playLogSemantics(v: PlayLogBatchMessage): MessageIssue[] {
  const issues: MessageIssue[] = []
  v.records.forEach((r, i) => issues.push(...playTimeIssues(r, `/records/${i}`)))
  return issues.slice(0, MAX_ISSUES)
}

/** Checks one play record (the agent filters what it sends with this). */
export function validatePlayRecord(v: unknown): ParseResult<PlayRecordMessage> {
  return validateStrict(PlayRecordSchema, v, (r) => playTimeIssues(r, ''))
}

/**
 * Validates a `play-log` payload: at most PLAY_LOG_LIMITS.maxRecords records, every field
 * bounded, real dates, endedAt not before startedAt; the value keeps only contract fields.
 */
export function parsePlayLogBatch(payload: Buffer | Uint8Array | string): ParseResult<PlayLogBatchMessage> {
  const json = readJson(payload)
  return json.ok ? validateStrict(PlayLogBatchSchema, json.value, playLogSemantics, true) : json
}

/** Validates a `desired` payload. */
export function parseDesiredState(payload: Buffer | Uint8Array | string): ParseResult<DesiredState> {
  return parseWith(DesiredStateSchema, payload, desiredSemantics)
}

/** Validates a `jobs` payload (discriminated by `kind`). */
export function parseJob(payload: Buffer | Uint8Array | string): ParseResult<Job> {
  const json = readJson(payload)
  return json.ok ? validateJobValue(json.value) : json
}

/** Validates a `status` payload; the value holds only `status` and `at`. */
export function parseStatusMessage(payload: Buffer | Uint8Array | string): ParseResult<StatusMessage> {
  const json = readJson(payload)
  return json.ok ? validateStrict(StatusMessageSchema, json.value, undefined, true) : json
}

/**
 * Validates a `reported` payload (strings and numbers bounded, see REPORTED_LIMITS); the
 * value holds only the fields the contract defines, whatever else the device sent.
 */
export function parseReported(payload: Buffer | Uint8Array | string): ParseResult<Reported> {
  const json = readJson(payload)
  return json.ok ? validateStrict(ReportedSchema, json.value, reportedSemantics, true) : json
}

/** Validates a `job-results` payload. */
export function parseJobResult(payload: Buffer | Uint8Array | string): ParseResult<JobResult> {
  return parseWith(JobResultSchema, payload, jobResultSemantics)
}

/** Same checks on an already-decoded value (e.g. before publishing, in tests). */
export const validateMessage = {
  desired: (v: unknown): ParseResult<DesiredState> => validateValue(DesiredStateSchema, v, desiredSemantics),
  jobs: (v: unknown): ParseResult<Job> => validateJobValue(v),
  status: (v: unknown): ParseResult<StatusMessage> => validateStrict(StatusMessageSchema, v),
  reported: (v: unknown): ParseResult<Reported> => validateStrict(ReportedSchema, v, reportedSemantics),
  'job-results': (v: unknown): ParseResult<JobResult> => validateValue(JobResultSchema, v, jobResultSemantics),
  'play-log': (v: unknown): ParseResult<PlayLogBatchMessage> => validateStrict(PlayLogBatchSchema, v, playLogSemantics),
} as const satisfies Record<ScreenTopicKind, (v: unknown) => ParseResult<unknown>>

export interface MessageByTopic {
  desired: DesiredState
  jobs: Job
  status: StatusMessage
  reported: Reported
  'job-results': JobResult
  'play-log': PlayLogBatchMessage
}

/** Parses a payload by the topic kind it arrived on. */
export function parseForTopic<K extends ScreenTopicKind>(kind: K, payload: Buffer | Uint8Array | string): ParseResult<MessageByTopic[K]> {
  const json = readJson(payload)
  if (!json.ok) return json
  return validateMessage[kind](json.value) as ParseResult<MessageByTopic[K]>
}
