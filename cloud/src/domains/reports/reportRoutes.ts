// Reports:
//   GET /v1/reports/availability   availability per screen, location or group over a window (JSON or CSV)
import { Readable } from 'node:stream'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { Data, StringEnum, errorResponses } from '../../platform/contract.js'
import { principalOf } from '../../platform/http/Principal.js'
import type { Provisions } from '../../platform/provisions.js'
import { DateTimeField } from '../../platform/timeRange.js'
import { AVAILABILITY_GROUP_BY, AVAILABILITY_MAX_DAYS, AvailabilityReport, type AvailabilityRowT } from './AvailabilityService.js'
import { csvLine } from './csv.js'

const CSV_COLUMNS = [
  'id',
  'name',
  'screens',
  'windowSeconds',
  'onlineSeconds',
  'offlineSeconds',
  'availability',
  'outages',
  'longestOutageSeconds',
  'scheduledSeconds',
  'displaySeconds',
  'displayAvailability',
] as const satisfies readonly (keyof AvailabilityRowT)[]

/** A row as a CSV line, its first column named after what the rows are. */
export function availabilityCsvLine(r: AvailabilityRowT): string {
  return csvLine(CSV_COLUMNS.map((c) => r[c]))
}

export function availabilityCsvHeader(groupBy: string): string {
  return csvLine([groupBy === 'node' ? 'nodeId' : groupBy === 'group' ? 'groupId' : 'screenId', ...CSV_COLUMNS.slice(1)])
}

const reportRoutes =
  (d: Pick<Provisions, 'availability'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { availability } = d

    app.get(
      '/reports/availability',
      {
        config: { permission: 'screen.view' },
        schema: {
          tags: ['reports'],
          operationId: 'getAvailabilityReport',
          summary: `Availability of the screens the credential reaches over [from, to) (at most ${AVAILABILITY_MAX_DAYS} days), per screen, location or group: time online, outages, and over the operating hours the share of time really showing content`,
          querystring: Type.Object(
            {
              from: DateTimeField('Start of the window, an ISO 8601 date-time (required).'),
              to: DateTimeField('End of the window, an ISO 8601 date-time (required); time after now counts as nothing.'),
              groupBy: Type.Optional(StringEnum(AVAILABILITY_GROUP_BY, { description: 'One row per screen (default), per home location, or per group.' })),
              nodeId: Type.Optional(Type.String({ maxLength: 100, description: 'Only screens at this location or under it.' })),
              groupId: Type.Optional(Type.String({ maxLength: 100, description: "Only this group's members." })),
              format: Type.Optional(StringEnum(['json', 'csv'] as const, { description: '`csv`: the rows, then the total, as CSV (streamed).' })),
            },
            { additionalProperties: false },
          ),
          response: {
            200: {
              description: 'The report; with `format=csv` one header line, one line per row and a last line for the total (RFC 4180, CRLF).',
              content: {
                'application/json': { schema: Data(AvailabilityReport) },
                'text/csv': { schema: Type.String({ format: 'binary' }) },
              },
            },
            ...errorResponses,
          },
        },
      },
      async (req, reply) => {
        const plan = await availability.plan(principalOf(req), req.query)
        if (req.query.format === 'csv') {
          const lines = async function* () {
            yield availabilityCsvHeader(plan.groupBy)
            const it = availability.rows(plan)
            for (;;) {
              const n = await it.next()
              if (n.done) {
                yield availabilityCsvLine(n.value)
                return
              }
              yield n.value.map(availabilityCsvLine).join('')
            }
          }
          return reply
            .type('text/csv; charset=utf-8')
            .header('content-disposition', 'attachment; filename="availability.csv"')
            .send(Readable.from(lines()) as never)
        }
        return { data: await availability.report(principalOf(req), req.query) }
      },
    )
  }
export default reportRoutes
