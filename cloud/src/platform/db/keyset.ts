// Kysely pieces shared by the repositories: cursor paging in id order, and the
// "credential's subtree" filter on a home-node column.
import type { SelectQueryBuilder } from 'kysely'
import type { PageRequest } from '../paging.js'

// Any table's builder: the helpers only add `id`/column conditions every table has.
// biome-ignore lint/suspicious/noExplicitAny: Kysely's builder is generic over the database, table and selection
type AnySelect = SelectQueryBuilder<any, any, any>

/** Restricts to ids after the cursor, orders by id and fetches limit+1 rows (see pageOf). */
export function paged<Q extends AnySelect>(qb: Q, req: PageRequest, order: 'asc' | 'desc'): Q {
  let q = qb as AnySelect
  if (req.after) q = q.where('id', order === 'desc' ? '<' : '>', req.after)
  q = q.orderBy('id', order)
  if (req.limit !== null) q = q.limit(req.limit + 1)
  return q as Q
}

/**
 * Keeps rows whose `column` is one of `ids`; `null` ids means no restriction (a
 * workspace-wide credential), an empty list keeps nothing.
 */
export function withinNodes<Q extends AnySelect>(qb: Q, column: string, ids: readonly string[] | null): Q {
  if (ids === null) return qb
  const q = qb as AnySelect
  if (!ids.length) return q.where((eb) => eb.val(1), '=', 0) as Q
  return q.where(column, 'in', ids) as Q
}
