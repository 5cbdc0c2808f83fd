// Reports:
//   GET /v1/reports/availability          availability per screen, location or group over a window (JSON or CSV)
//   POST /v1/report-subscriptions         mail a report weekly or monthly (CSV attached)
//   GET /v1/report-subscriptions          the subscriptions the credential sees
//   GET /v1/report-subscriptions/:id      one
//   DELETE /v1/report-subscriptions/:id   stop one
import { Readable } from 'node:stream'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { Data, Deleted, IdParams, StringEnum, errorResponses } from '../../platform/contract.js'
import { principalOf } from '../../platform/http/Principal.js'
import type { Provisions } from '../../platform/provisions.js'
import { DateTimeField } from '../../platform/timeRange.js'
import { AVAILABILITY_GROUP_BY, AVAILABILITY_MAX_DAYS, AVAILABILITY_PER, AvailabilityReport } from './AvailabilityService.js'
import { availabilityCsvHeader, availabilityCsvLine } from './csv.js'
import { CreateSubscription, MAX_SUBSCRIPTIONS, ReportSubscription } from './ReportSubscriptions.js'

const reportRoutes =
  (d: Pick<Provisions, 'availability' | 'reportSubscriptions'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { availability, reportSubscriptions } = d

    app.post(
      '/report-subscriptions',
      {
        config: { permission: 'screen.view' },
        schema: {
          tags: ['reports'],
          operationId: 'createReportSubscription',
          summary: `Mail a report (availability or proof of play, with its query) weekly or monthly to some addresses, as a CSV attachment with a short summary; at most ${MAX_SUBSCRIPTIONS} per workspace`,
          body: CreateSubscription,
          response: { 201: Data(ReportSubscription), ...errorResponses },
        },
      },
      async (req, reply) => reply.code(201).send({ data: await reportSubscriptions.create(principalOf(req), req.body) }),
    )

    app.get(
      '/report-subscriptions',
      {
        config: { permission: 'screen.view' },
        schema: {
          tags: ['reports'],
          operationId: 'listReportSubscriptions',
          summary: 'The report subscriptions the credential sees (a pinned credential: those made within its location)',
          response: { 200: Data(Type.Array(ReportSubscription)), ...errorResponses },
        },
      },
      async (req) => ({ data: await reportSubscriptions.list(principalOf(req)) }),
    )

    app.get(
      '/report-subscriptions/:id',
      {
        config: { permission: 'screen.view' },
        schema: {
          tags: ['reports'],
          operationId: 'getReportSubscription',
          summary: 'One report subscription',
          params: IdParams,
          response: { 200: Data(ReportSubscription), ...errorResponses },
        },
      },
      async (req) => ({ data: await reportSubscriptions.get(principalOf(req), req.params.id) }),
    )

    app.delete(
      '/report-subscriptions/:id',
      {
        config: { permission: 'screen.view' },
        schema: {
          tags: ['reports'],
          operationId: 'deleteReportSubscription',
          summary: 'Stop a report subscription',
          params: IdParams,
          response: { 200: Data(Deleted), ...errorResponses },
        },
      },
      async (req) => ({ data: await reportSubscriptions.remove(principalOf(req), req.params.id) }),
    )

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
              per: Type.Optional(
                StringEnum(AVAILABILITY_PER, {
                  description:
                    'With groupBy `node` (else 422): also the rows of each UTC day (or week of 7 days) from `from`, in `periods` (JSON only; the CSV is the whole window).',
                }),
              ),
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
          // The CSV is the whole window: its rows need no periods. One chunk (a batch's lines)
          // waits for the socket at a time: a slow download does not make the report read ahead.
          delete plan.periods
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
            .send(Readable.from(lines(), { highWaterMark: 1 }) as never)
        }
        return { data: await availability.report(principalOf(req), req.query) }
      },
    )
  }
export default reportRoutes
