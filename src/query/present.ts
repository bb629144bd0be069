import { fieldError } from '../errors/errors.js';
import type { EventStore } from '../event-store/event-store.js';
import type { SearchResult } from '../event-store/query-plan.js';
import type { QueryJob } from './job.js';
import type { PresentOptions } from './types/query-type.js';
import { Search, type SearchParams } from './types/search.js';

/**
 * A job's results as the API shows them (PENDING: empty). A Search page beyond the rows
 * the computation fetched runs only that page's rows on `store`, never the count again
 * (re-paging does not recompute totals). Marks the job read.
 */
export async function presentJob(store: EventStore, job: QueryJob, opts: PresentOptions): Promise<unknown> {
  const repage =
    job.type === 'Search' &&
    (opts.page !== undefined || opts.offset !== undefined || opts.pageSize !== undefined);
  const params = job.params as SearchParams;
  const pageSize = opts.pageSize ?? params.page_size;
  const offset = opts.offset ?? ((opts.page ?? params.page) - 1) * pageSize;
  // Positions are safe integers, which also keeps them in the engine's range.
  if (repage && !Number.isSafeInteger(offset + pageSize)) {
    const field = opts.offset !== undefined ? 'offset' : 'page';
    throw fieldError(field, `${field} is too large: the position must stay below 2^53.`);
  }
  job.readAt = Date.now();
  if (job.results === null) return {};
  let results = job.results;
  if (repage) {
    const r = job.results as SearchResult;
    const held = r.eventsOffset ?? 0;
    const covered =
      offset >= held && (offset + pageSize <= held + r.events.length || held + r.events.length >= r.total);
    if (!covered && offset < r.total) {
      const plan = Search.plan(params, job.filter, job.window);
      if (plan.kind === 'search') {
        const page = await store.execute({
          ...plan,
          scope: job.scope,
          offset,
          limit: pageSize,
          count: false,
        });
        results = { total: r.total, events: page.events, eventsOffset: offset } satisfies SearchResult;
      }
    }
  }
  return job.def.present(results, job.params, { ...opts, window: job.window });
}
