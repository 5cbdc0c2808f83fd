// Schemas shared by every route: the success envelope, paged envelope and error envelope.
import { Type, type TSchema } from '@sinclair/typebox'

export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'Stable machine code; branch on this.' }),
    message: Type.Optional(Type.String()),
    requestId: Type.Optional(Type.String({ description: 'Present on 5xx.' })),
  },
  { additionalProperties: true },
)

export const Data = <T extends TSchema>(schema: T) => Type.Object({ data: schema })
export const Paged = <T extends TSchema>(item: T) =>
  Type.Object({
    data: Type.Array(item),
    nextCursor: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    total: Type.Optional(Type.Integer()),
  })

/** Friendly validation messages for the patterns below, by pattern (read by the error handler). */
export const PATTERN_MESSAGES = new Map<string, string>()

/** A regular expression matching the decimal integers 1..max (no sign, no leading zero). */
export function intRangePattern(max: number): string {
  const m = String(max)
  const alts: string[] = []
  for (let len = 1; len < m.length; len++) alts.push(`[1-9]${len > 1 ? `[0-9]{${len - 1}}` : ''}`)
  for (let i = 0; i < m.length; i++) {
    const lo = i === 0 ? 1 : 0
    const d = Number(m[i])
    if (d - 1 >= lo) {
      const rest = m.length - i - 1
      alts.push(`${m.slice(0, i)}[${lo}-${d - 1}]${rest ? `[0-9]{${rest}}` : ''}`)
    }
  }
  alts.push(m)
  return `^(?:${alts.join('|')})$`
}

/** A query `limit`: a decimal integer 1..max, sent as a string like every query value. */
export function LimitParam(max: number, description: string) {
  const pattern = intRangePattern(max)
  PATTERN_MESSAGES.set(pattern, `must be an integer from 1 to ${max}`)
  return Type.String({ pattern, maxLength: String(max).length, description, examples: ['50'] })
}

/** A string of a fixed set: `{type: string, enum}` (one schema, one clear validation message). */
export const StringEnum = <T extends string>(values: readonly T[], opts: { description?: string } = {}) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...opts })

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])
export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) })
export const Timestamp = Type.String({ format: 'date-time' })
export const Deleted = Type.Object({ id: Type.String(), deleted: Type.Literal(true) })

/** Standard error answers every authenticated operation can give, for the OpenAPI document. */
export const errorResponses = {
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
  422: ErrorBody,
  429: ErrorBody,
  500: ErrorBody,
  503: ErrorBody,
}
