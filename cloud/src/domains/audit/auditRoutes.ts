// /v1/audit-log: the workspace's audit log, newest first, filtered and paged, or as CSV
// (`format=csv`, streamed a batch at a time); /v1/audit-log/verify walks its hash chain.
// Append-only: no route changes or removes an entry (retention removes the oldest ones).
import { Readable } from 'node:stream'
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { principalOf } from '../../platform/http/Principal.js'
import { Nullable, StringEnum, Timestamp, errorResponses } from '../../platform/contract.js'
import { decodeCursor, encodeCursor } from '../../platform/paging.js'
import { DateTimeField, parseTimeRange } from '../../platform/timeRange.js'
import { validation } from '../../platform/errors.js'
import { LimitParam } from '../../platform/contract.js'
import type { Provisions } from '../provisions.js'
import { AUDIT_ACTOR_KINDS, AUDIT_OUTCOMES, AUDIT_VIAS, type AuditEntry, type AuditFilter } from './types.js'

export const AUDIT_PAGE_MAX = 500
const AUDIT_PAGE_DEFAULT = 50

const Entry = Type.Object({
  id: Type.String({ description: 'Prefix `aud_`.' }),
  seq: Type.Integer({ description: "The entry's place in its workspace's chain (1, 2, 3…)." }),
  at: Timestamp,
  actor: Type.Object({
    kind: StringEnum(AUDIT_ACTOR_KINDS),
    id: Nullable(Type.String()),
    name: Nullable(Type.String()),
  }),
  via: StringEnum(AUDIT_VIAS),
  action: Type.String({ description: '`<resource>.<verb>`, such as `playlist.update` or `cast.clear`.' }),
  resource: Type.Object({ kind: Type.String(), id: Nullable(Type.String()), name: Nullable(Type.String()) }),
  nodeId: Nullable(Type.String()),
  changes: Type.Array(Type.Object({ path: Type.String(), before: Type.Unknown(), after: Type.Unknown() }), {
    description: 'Field-level changes; secrets show as "•••".',
  }),
  requestId: Nullable(Type.String()),
  ip: Nullable(Type.String()),
  outcome: StringEnum(AUDIT_OUTCOMES),
  prevHash: Type.String({ description: "The previous entry's hash (64 zeros for the first)." }),
  hash: Type.String({ description: 'SHA-256 (hex) over prevHash and this entry.' }),
})

const Query = Type.Object(
  {
    from: Type.Optional(DateTimeField('Entries recorded at or after this date-time.')),
    to: Type.Optional(DateTimeField('Entries recorded before this date-time.')),
    actorId: Type.Optional(Type.String({ maxLength: 200 })),
    resourceId: Type.Optional(Type.String({ maxLength: 200 })),
    action: Type.Optional(Type.String({ maxLength: 200 })),
    limit: Type.Optional(LimitParam(AUDIT_PAGE_MAX, `Page size, 1 to ${AUDIT_PAGE_MAX} (default ${AUDIT_PAGE_DEFAULT}).`)),
    cursor: Type.Optional(Type.String({ maxLength: 400, description: "The previous answer's nextCursor." })),
    format: Type.Optional(StringEnum(['json', 'csv'] as const, { description: '`csv`: every matching entry as CSV (streamed), newest first.' })),
  },
  { additionalProperties: false },
)

const CSV_COLUMNS = [
  'id',
  'seq',
  'at',
  'actorKind',
  'actorId',
  'actorName',
  'via',
  'action',
  'resourceKind',
  'resourceId',
  'resourceName',
  'nodeId',
  'changes',
  'requestId',
  'ip',
  'outcome',
  'hash',
] as const

function csvField(v: unknown): string {
  if (v === null || v === undefined) return ''
  let s = typeof v === 'string' ? v : typeof v === 'number' ? String(v) : JSON.stringify(v)
  // A spreadsheet must not take a field for a formula.
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s
}

function csvLine(e: AuditEntry): string {
  const v: Record<(typeof CSV_COLUMNS)[number], unknown> = {
    id: e.id,
    seq: e.seq,
    at: e.at,
    actorKind: e.actor.kind,
    actorId: e.actor.id,
    actorName: e.actor.name,
    via: e.via,
    action: e.action,
    resourceKind: e.resource.kind,
    resourceId: e.resource.id,
    resourceName: e.resource.name,
    nodeId: e.nodeId,
    changes: e.changes,
    requestId: e.requestId,
    ip: e.ip,
    outcome: e.outcome,
    hash: e.hash,
  }
  return `${CSV_COLUMNS.map((c) => csvField(v[c])).join(',')}\r\n`
}

function parseSeqCursor(cursor: string | undefined): number | null {
  if (!cursor) return null
  const n = Number(decodeCursor(cursor))
  if (!Number.isInteger(n) || n < 1) throw validation('cursor is not a cursor this list handed out.')
  return n
}

const auditRoutes =
  (d: Pick<Provisions, 'audit'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { audit } = d

    app.get(
      '/audit-log',
      {
        config: { permission: 'audit.view', rootOnly: true },
        schema: {
          tags: ['audit-log'],
          operationId: 'listAuditLog',
          summary: 'The workspace audit log, newest first: every write, sign-in and refused sign-in (workspace-wide credentials only)',
          querystring: Query,
          response: {
            200: {
              description: 'A page of entries; with `format=csv` every matching entry as CSV (one header line, RFC 4180, CRLF).',
              content: {
                'application/json': {
                  schema: Type.Object({ data: Type.Array(Entry), nextCursor: Nullable(Type.String()) }),
                },
                'text/csv': { schema: Type.String({ format: 'binary' }) },
              },
            },
            ...errorResponses,
          },
        },
      },
      async (req, reply) => {
        const p = principalOf(req)
        const q = req.query
        const range = parseTimeRange(q)
        const filter: AuditFilter = {
          chain: p.workspaceId,
          actorId: q.actorId || undefined,
          resourceId: q.resourceId || undefined,
          action: q.action || undefined,
          from: range.from,
          to: range.to,
          beforeSeq: parseSeqCursor(q.cursor),
        }
        if (q.format === 'csv') {
          const header = `${CSV_COLUMNS.join(',')}\r\n`
          const lines = async function* () {
            yield header
            for await (const e of audit.all(filter)) yield csvLine(e)
          }
          return reply
            .type('text/csv; charset=utf-8')
            .header('content-disposition', 'attachment; filename="audit-log.csv"')
            .send(Readable.from(lines()) as never)
        }
        const limit = q.limit === undefined ? AUDIT_PAGE_DEFAULT : Number(q.limit)
        if (!Number.isInteger(limit) || limit < 1 || limit > AUDIT_PAGE_MAX) throw validation(`limit must be an integer from 1 to ${AUDIT_PAGE_MAX}.`)
        const rows = await audit.list(filter, limit + 1)
        const more = rows.length > limit
        const data = more ? rows.slice(0, limit) : rows
        return { data, nextCursor: more ? encodeCursor(String(data[data.length - 1]!.seq)) : null }
      },
    )

    app.get(
      '/audit-log/verify',
      {
        config: { permission: 'audit.view', rootOnly: true },
        schema: {
          tags: ['audit-log'],
          operationId: 'verifyAuditLog',
          summary: "Walks the workspace's audit chain from its oldest kept entry and reports the first broken link",
          response: {
            200: Type.Object({
              ok: Type.Boolean(),
              checked: Type.Integer({ description: 'Entries whose hash and link were checked.' }),
              firstBroken: Nullable(
                Type.Object({
                  id: Nullable(Type.String({ description: 'The entry where the chain breaks (null: entries missing after the last one).' })),
                  seq: Type.Integer(),
                  reason: StringEnum(['hash', 'link', 'missing', 'head'] as const, {
                    description:
                      '`hash`: the entry was changed; `link`: it does not follow the one before; `missing`: entries before it were removed; `head`: entries after the last one were removed.',
                  }),
                }),
              ),
            }),
            ...errorResponses,
          },
        },
      },
      async (req) => audit.verify(principalOf(req).workspaceId),
    )
  }
export default auditRoutes
