import type { EventStore } from '../event-store/event-store.js';
import type { SearchResult, TimeWindow } from '../event-store/query-plan.js';
import type { QueryJob } from './job.js';
import { isRelative } from './time-range.js';
import type { SearchParams } from './types/search.js';

/**
 * `k` disjoint windows covering `w` in the given order (the whole window when `k` ≤ 1),
 * their boundaries on multiples of `align` (bucket edges), counted back from the end.
 */
export function sliceWindow(
  w: TimeWindow,
  order: 'newest-first' | 'oldest-first',
  k: number,
  align: number,
): TimeWindow[] {
  if (k <= 1) return [w];
  const step = Math.max(align, Math.ceil((w.toMs - w.fromMs) / k / align) * align);
  const out: TimeWindow[] = [];
  let hi = w.toMs;
  while (hi > w.fromMs) {
    const lo = Math.max(w.fromMs, Math.floor((hi - step) / align) * align);
    out.push({ fromMs: lo === hi ? w.fromMs : lo, toMs: hi });
    hi = lo;
  }
  return order === 'newest-first' ? out : out.reverse();
}

/**
 * The windows a job computes `w` in: disjoint, in its type's order, as many as the events
 * the store estimates in `w` ask for (`sliceEvents` each, at most `maxSlices`), or the
 * whole window when slicing does not pay.
 */
export function slicesOf(
  store: EventStore,
  job: QueryJob,
  w: TimeWindow,
  opts: { sliceEvents: number; maxSlices: number },
): TimeWindow[] {
  const order = job.def.slicing(job.params);
  if (!order) return [w];
  const rows = store.estimateInRange(w.fromMs, w.toMs);
  const k = Math.min(opts.maxSlices, Math.ceil(rows / opts.sliceEvents));
  return sliceWindow(w, order, k, job.def.align?.(job.params, w) ?? 1);
}

/**
 * A Search whose page lies beyond the first and whose earlier rows nobody needs: the
 * store skips them (OFFSET) instead of fetching `page × page_size` rows. A relative
 * newest-first Search keeps every row up to its page: the live hub tails it and shifts
 * events from page to page as new ones arrive. Slices skip what the earlier slices
 * counted, so the page is exact.
 */
export function pagedSearch(job: QueryJob) {
  if (job.type !== 'Search') return null;
  const p = job.params as SearchParams;
  if (p.page <= 1) return null;
  if (isRelative(p.time_range) && p.sort.length === 1 && p.sort[0] === '-ts') return null;
  const offset = (p.page - 1) * p.page_size;
  const pageSize = p.page_size;
  return {
    slice: (acc: SearchResult | null) => {
      const skip = Math.max(0, offset - (acc?.total ?? 0));
      const have = acc?.events.length ?? 0;
      return { offset: skip, limit: Math.max(0, pageSize - have) };
    },
    merge: (acc: SearchResult | null, part: SearchResult): SearchResult => ({
      total: (acc?.total ?? 0) + part.total,
      events: acc ? [...acc.events, ...part.events].slice(0, pageSize) : part.events,
      eventsOffset: offset,
    }),
  };
}
