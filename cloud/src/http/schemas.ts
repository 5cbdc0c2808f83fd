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
