// Proof of play (what screens actually showed, as their agents reported it):
//   GET /v1/screens/:id/play-log     one screen's plays in a time range, oldest first (or newest: order=desc), paged
//   GET /v1/play-log.csv             CSV export of a time range for a set of screens
//   GET /v1/play-log/summary         proof of display per content for a window and a location
import { DateTimeField } from '../../platform/timeRange.js'
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { principalOf } from '../../platform/http/Principal.js'
import { pageQuery, parsePage } from '../../platform/paging.js'
import { IdParams, Nullable, Paged, StringEnum, Timestamp, errorResponses } from '../../platform/contract.js'
import { PANEL_POWERS } from '@svc/shared/mqtt/index'
import { Readable } from 'node:stream'
import { CSV_MAX_ROWS, CSV_MAX_SCREENS, PlaySummary, SUMMARY_DEFAULT_LIMIT, SUMMARY_GROUP_BY, SUMMARY_MAX_DAYS } from './PlayLogService.js'
import type { Provisions } from '../../platform/provisions.js'

export const PlayRecord = Type.Object({
  id: Type.String({ description: 'Prefix `play_`; the same reported play always has the same id.' }),
  screenId: Type.String(),
  source: Type.String({ description: 'Why it played: `assignment`, `schedule`, `cast` or `emergency`.' }),
  contentKind: Type.String({ description: 'What was assigned, cast or raised (a playlist, a layout, a media file…).' }),
  contentId: Type.String(),
  contentName: Type.Optional(
    Nullable(Type.String({ description: "The content's name now (null once it left the library). In GET /v1/screens/:id/play-log." })),
  ),
  castId: Nullable(Type.String()),
  emergencyId: Nullable(Type.String()),
  itemKind: Type.String({ description: "The piece that was on screen: a playlist item, a layout zone's content, or the content itself." }),
  itemId: Type.String(),
  itemName: Type.Optional(
    Nullable(Type.String({ description: "The item's name now, when it is a library entry (a media file, a playlist…). In GET /v1/screens/:id/play-log." })),
  ),
  zone: Nullable(Type.String({ description: 'The layout zone it played in.' })),
  startedAt: Timestamp,
  endedAt: Timestamp,
  durationMs: Type.Integer({ minimum: 0 }),
  receivedAt: Timestamp,
  panelPower: StringEnum(PANEL_POWERS, {
    description:
      "Proof of display: the panel's power as the player last read it back when the play started; `unknown` without a panel, a reading, or from players that do not report it.",
  }),
})

const RangeFields = {
  from: Type.Optional(DateTimeField('Plays that started at or after this ISO 8601 date-time.')),
  to: Type.Optional(DateTimeField('Plays that started before this ISO 8601 date-time.')),
}

const playLogRoutes =
  (d: Pick<Provisions, 'playLog'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { playLog } = d

    app.get(
      '/screens/:id/play-log',
      {
        config: { permission: 'screen.view' },
        schema: {
          tags: ['play-log'],
          operationId: 'listScreenPlayLog',
          summary: 'What the screen played (as its agent reported it), oldest first (order=desc: newest first); 100 per page unless limit says otherwise',
          params: IdParams,
          querystring: Type.Object(
            {
              ...pageQuery(1000).properties,
              ...RangeFields,
              order: Type.Optional(
                StringEnum(['asc', 'desc'] as const, {
                  description: '`asc` (default): oldest first; `desc`: newest first. The cursor pages on in the same order.',
                }),
              ),
            },
            { additionalProperties: false },
          ),
          response: { 200: Paged(PlayRecord), ...errorResponses },
        },
      },
      async (req) => playLog.listForScreen(principalOf(req), req.params.id, req.query, parsePage(req.query, { defaultLimit: 100, max: 1000 })),
    )

    app.get(
      '/play-log/summary',
      {
        config: { permission: 'screen.view' },
        schema: {
          tags: ['play-log'],
          operationId: 'summarizePlayLog',
          summary: `Proof of display per content: plays, seconds, seconds with the panel on and screens, for plays started in [from, to) (at most ${SUMMARY_MAX_DAYS} days) on the screens the credential reaches, in content order, 100 per page unless limit says otherwise`,
          querystring: Type.Object(
            {
              ...pageQuery(500).properties,
              from: DateTimeField('Plays that started at or after this ISO 8601 date-time (required).'),
              to: DateTimeField('Plays that started before this ISO 8601 date-time (required).'),
              nodeId: Type.Optional(Type.String({ maxLength: 100, description: 'Only screens at this location or under it.' })),
              groupId: Type.Optional(Type.String({ maxLength: 100, description: "Only this group's members." })),
              contentKind: Type.Optional(Type.String({ maxLength: 32, description: 'Only this kind of content.' })),
              contentId: Type.Optional(Type.String({ maxLength: 256, description: 'Only this content (with contentKind).' })),
              groupBy: Type.Optional(
                StringEnum(SUMMARY_GROUP_BY, {
                  description:
                    '`content` (default, paged): one row per content. `screen`, `node` (home location), `group` or `day` (UTC): every row in one answer.',
                }),
              ),
              format: Type.Optional(StringEnum(['json', 'csv'] as const, { description: '`csv`: every row (every page) as CSV, streamed.' })),
            },
            { additionalProperties: false },
          ),
          response: {
            200: {
              description: 'The summary; with `format=csv` one header line, then one line per row (RFC 4180, CRLF).',
              content: {
                'application/json': { schema: Paged(PlaySummary) },
                'text/csv': { schema: Type.String({ format: 'binary' }) },
              },
            },
            ...errorResponses,
          },
        },
      },
      async (req, reply) => {
        const p = principalOf(req)
        const by = req.query.groupBy ?? 'content'
        if (req.query.format === 'csv') {
          const lines = playLog.summaryCsv(p, req.query, by)
          // The first line is awaited here, so a bad request is answered with its error, not a broken stream.
          const first = await lines.next()
          const all = async function* () {
            if (!first.done) yield first.value
            yield* lines
          }
          return reply
            .type('text/csv; charset=utf-8')
            .header('content-disposition', `attachment; filename="proof-of-play-by-${by}.csv"`)
            .send(Readable.from(all()) as never)
        }
        if (by !== 'content') return { data: await playLog.summaryBy(p, req.query, by), nextCursor: null }
        return playLog.summary(p, req.query, parsePage(req.query, { defaultLimit: SUMMARY_DEFAULT_LIMIT, max: 500 }))
      },
    )

    app.get(
      '/play-log.csv',
      {
        config: { permission: 'screen.view' },
        schema: {
          tags: ['play-log'],
          operationId: 'exportPlayLogCsv',
          summary: `Plays of some screens started in [from, to) as CSV, oldest first (at most ${CSV_MAX_SCREENS} screens and ${CSV_MAX_ROWS} rows)`,
          querystring: Type.Object(
            {
              from: DateTimeField('Plays that started at or after this ISO 8601 date-time (required).'),
              to: DateTimeField('Plays that started before this ISO 8601 date-time (required).'),
              screenIds: Type.String({ maxLength: 20_000, description: `Screen ids separated by commas, at most ${CSV_MAX_SCREENS}.` }),
            },
            { additionalProperties: false },
          ),
          response: {
            200: {
              description: 'One header line, then one line per play (RFC 4180, CRLF).',
              content: { 'text/csv': { schema: Type.String({ format: 'binary' }) } },
            },
            ...errorResponses,
          },
        },
      },
      async (req, reply) => {
        const body = await playLog.csv(principalOf(req), req.query)
        return reply.type('text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="play-log.csv"').send(body)
      },
    )
  }
export default playLogRoutes
