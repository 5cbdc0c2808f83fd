// Cursor paging shared by every list: sending `limit` turns paging
// on, the cursor is opaque (base64url of the last id seen), a page may be short while
// more follow, and `count=1` adds `total`.
import { Type, type Static } from '@sinclair/typebox'
import { validation } from './errors.js'
import { LimitParam } from './contract.js'

export const pageQuery = (max: number) =>
  Type.Object({
    limit: Type.Optional(LimitParam(max, `Page size, 1 to ${max}; sending it turns paging on.`)),
    cursor: Type.Optional(Type.String({ maxLength: 400, description: "The previous answer's nextCursor." })),
    count: Type.Optional(Type.String({ enum: ['0', '1'], description: '`1` adds `total`.' })),
  })
export const PageQuery = pageQuery(500)
export type PageQueryT = Static<typeof PageQuery>

export interface PageRules {
  /** Limit used when `limit` is absent; null = whole list unless `alwaysPaged`. */
  defaultLimit: number | null
  max: number
  min?: number
}

export interface PageRequest {
  /** null = the whole list. */
  limit: number | null
  /** Id after which (in list order) the page starts. */
  after: string | null
  count: boolean
}

export function encodeCursor(lastId: string): string {
  return Buffer.from(JSON.stringify({ a: lastId }), 'utf8').toString('base64url')
}

export function decodeCursor(cursor: string): string {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { a?: unknown }
    if (typeof v.a === 'string' && v.a.length > 0 && v.a.length < 200) return v.a
  } catch {
    /* fall through */
  }
  throw validation('cursor is not a cursor this list handed out.')
}

export function parsePage(q: { limit?: string; cursor?: string; count?: string }, rules: PageRules): PageRequest {
  const min = rules.min ?? 1
  let limit: number | null = rules.defaultLimit
  if (q.limit !== undefined) {
    const n = Number(q.limit)
    if (!Number.isInteger(n) || n < min || n > rules.max) throw validation(`limit must be an integer from ${min} to ${rules.max}.`)
    limit = n
  }
  const after = q.cursor ? decodeCursor(q.cursor) : null
  return { limit, after, count: q.count === '1' }
}

export interface Page<T> {
  data: T[]
  nextCursor?: string | null
  total?: number
}

/** Builds the answer from rows fetched with LIMIT limit+1 (the extra row says more follow). */
export function pageOf<R extends { id: string }, T>(rows: R[], req: PageRequest, map: (r: R) => T, total?: number): Page<T> {
  const out: Page<T> = { data: [] }
  if (req.limit === null) {
    out.data = rows.map(map)
  } else {
    const more = rows.length > req.limit
    const kept = more ? rows.slice(0, req.limit) : rows
    out.data = kept.map(map)
    out.nextCursor = more ? encodeCursor(kept[kept.length - 1]!.id) : null
  }
  if (req.count) out.total = total ?? out.data.length
  return out
}

/** SQL pieces for a page in id order: descending (newest first) or ascending. */
export function pageSql(req: PageRequest, order: 'desc' | 'asc'): { where: string; params: string[]; tail: string; limitParams: number[] } {
  return {
    where: req.after ? (order === 'desc' ? ' AND id < ?' : ' AND id > ?') : '',
    params: req.after ? [req.after] : [],
    tail: ` ORDER BY id ${order.toUpperCase()}${req.limit !== null ? ' LIMIT ?' : ''}`,
    limitParams: req.limit !== null ? [req.limit + 1] : [],
  }
}

export const descPageSql = (req: PageRequest) => pageSql(req, 'desc')
export const ascPageSql = (req: PageRequest) => pageSql(req, 'asc')

/**
 * The paging of the lists that come back whole unless asked (content, media, approvals):
 * `limit` (or a `cursor`, whose page keeps the default size of 100) turns paging on;
 * without either the whole list comes back.
 */
export function optionalPage(q: PageQueryT): PageRequest {
  return parsePage(q, { defaultLimit: q.cursor ? 100 : null, max: 500 })
}
