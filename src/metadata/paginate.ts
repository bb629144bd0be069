import { type SelectQueryBuilder, sql } from 'kysely';
import type { Page, PageRequest } from '../core/list.js';

/**
 * Runs a filtered select twice: once for the total count, once for the requested page
 * in the requested order (ties broken by id so pages never overlap).
 */
export async function paginate<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  page: PageRequest,
): Promise<Page<O>> {
  const countRow = await query
    .clearSelect()
    .select(sql<string | number>`count(*)`.as('n'))
    .executeTakeFirst();
  const count = Number((countRow as { n?: string | number } | undefined)?.n ?? 0);
  let q = query;
  for (const term of page.ordering) {
    q = q.orderBy(sql.ref(term.field), term.desc ? 'desc' : 'asc');
  }
  if (!page.ordering.some((t) => t.field === 'id')) q = q.orderBy(sql.ref('id'), 'asc');
  const rows = await q.limit(page.limit).offset(page.offset).execute();
  return { count, rows };
}
