import type { NormalisedEvent, StoredEvent } from '../../core/event.js';
import type { SearchResult } from '../../event-store/query-plan.js';
import { scopedFilter } from '../../event-store/read-scope.js';
import { compilePredicate, type EventLike, type Predicate } from '../../filter/evaluate.js';
import { newestFirst } from '../../filter/sort.js';
import type { QueryJob } from '../../query/job.js';
import { resolveTimeRange } from '../../query/time-range.js';
import type { SearchParams } from '../../query/types/search.js';

/**
 * A watched query between its full evaluations. A Search in time order keeps the
 * matching events committed since, newest first (at most a page's worth), and how many
 * there were; a type that folds (TopN, LastN, Summary, Timeline) keeps the matching
 * events committed since, in batches by commit time, up to FOLD_MAX events.
 */
interface Tail {
  events: StoredEvent[];
  /** Matches per commit (commit time, count), for the total. */
  added: Array<{ at: number; n: number }>;
  /** Folding types: matching events per commit. */
  batches: Array<{ at: number; events: readonly NormalisedEvent[] }>;
  /** Events in `batches`. */
  size: number;
  /** Commit time of the first batch that did not fit: no folding until an evaluation after it. */
  overflowAt: number | null;
  /**
   * Folding types: the results of evaluation `of` (the job's results object) with the
   * first `folded` batches added, so each publish folds only what is new.
   */
  acc: { of: unknown; value: unknown; folded: number } | null;
  timer: NodeJS.Timeout | null;
  lastSent: number;
}

/** Most events a folding query keeps between its full evaluations (beyond: it waits for one). */
const FOLD_MAX = 50_000;

/**
 * The tail merge of the live hub: the matching events this node committed since a watched
 * query's last full evaluation, kept per query and merged into what its subscribers are
 * sent (a Search in time order gets them on its page and total; a folding type adds them
 * to its aggregates), at most every `tailMs`.
 */
export class TailMerge {
  private readonly tails = new Map<string, Tail>();
  private readonly predicates = new WeakMap<QueryJob, { of: unknown[]; p: Predicate }>();

  constructor(
    private readonly tailMs: number,
    /** Sends a query's merged state to its subscribers (when a tail is due). */
    private readonly publish: (job: QueryJob) => void,
  ) {}

  /** Whether a committed event belongs to the job: its filter within its owner's read scope. */
  predicate(job: QueryJob): Predicate {
    const known = this.predicates.get(job);
    // Compiled again when rights changed the job's scope or filter.
    if (known && known.of[0] === job.scope && known.of[1] === job.filter) return known.p;
    const p = compilePredicate(scopedFilter(job.scope, job.filter));
    this.predicates.set(job, { of: [job.scope, job.filter], p });
    return p;
  }

  /**
   * Whether the job's last evaluation succeeded and commits can be added to it in memory:
   * a Search in time order (tailed), or a type that folds these params.
   */
  tailable(job: QueryJob): 'tail' | 'fold' | null {
    if (job.status !== 'SUCCESS' || job.results === null) return null;
    if (job.type === 'Search') {
      const sort = (job.params as SearchParams).sort;
      return sort?.length === 1 && sort[0] === '-ts' ? 'tail' : null;
    }
    return job.def.fold?.accepts(job.params) ? 'fold' : null;
  }

  /**
   * The job as last evaluated plus its tail: the newest page of both, and the total plus
   * the matches committed since the evaluation started. Exact again at each evaluation
   * (every refresh interval); in between, events leaving the window beyond the page are
   * still counted, and one committed while the evaluation ran may be counted twice.
   */
  withTail(job: QueryJob): QueryJob {
    const tail = this.tails.get(job.id);
    const how = tail ? this.tailable(job) : null;
    if (!tail || !how) return job;
    if (how === 'fold') return this.folded(job, tail);
    // What the last evaluation certainly saw is dropped from the tail.
    tail.events = tail.events.filter((e) => e.stored_at >= job.baseMs);
    tail.added = tail.added.filter((a) => a.at >= job.baseMs);
    if (!tail.added.length) return job;
    const now = Date.now();
    const window = resolveTimeRange(job.params.time_range, now);
    const params = job.params as SearchParams;
    const r = job.results as SearchResult;
    const kept = r.events.filter((e) => e.ts >= window.fromMs);
    const have = new Set(kept.map((e) => e.ev_id));
    const fresh = tail.events.filter((e) => !have.has(e.ev_id));
    // A page event out of the window means every older match is out too.
    const base = kept.length < r.events.length ? kept.length : r.total;
    const added = tail.added.reduce((n, a) => n + a.n, 0) - (tail.events.length - fresh.length);
    const events = [...fresh, ...kept].sort(newestFirst).slice(0, params.page * params.page_size);
    return {
      ...job,
      results: { total: base + added, events } satisfies SearchResult,
      baseMs: now,
      window,
      updatedAt: new Date(now).toISOString(),
    };
  }

  /**
   * The job as last evaluated with the matching events committed since folded in (the
   * type's `fold`); as evaluated when more arrived than are kept.
   */
  private folded(job: QueryJob, tail: Tail): QueryJob {
    const fold = job.def.fold;
    if (tail.overflowAt !== null && tail.overflowAt < job.baseMs) tail.overflowAt = null;
    if (!fold || tail.overflowAt !== null) return job;
    let acc = tail.acc;
    if (!acc || acc.of !== job.results) {
      // A new evaluation: what it certainly saw is dropped, the rest folded into it anew.
      tail.batches = tail.batches.filter((b) => b.at >= job.baseMs);
      tail.size = tail.batches.reduce((n, b) => n + b.events.length, 0);
      acc = { of: job.results, value: job.results, folded: 0 };
      tail.acc = acc;
    }
    // Only the batches not folded yet: each event is added once.
    if (acc.folded < tail.batches.length) {
      const events = tail.batches.slice(acc.folded).flatMap((b) => b.events) as unknown as EventLike[];
      acc.value = fold.apply(acc.value, events, job.params, job.window);
      acc.folded = tail.batches.length;
    }
    if (acc.value === job.results) return job;
    const now = Date.now();
    return {
      ...job,
      results: acc.value,
      baseMs: now,
      window: resolveTimeRange(job.params.time_range, now),
      updatedAt: new Date(now).toISOString(),
    };
  }

  /** Matching new events of a tailed or folded query: kept, and sent at most every `tailMs`. */
  add(
    job: QueryJob,
    how: 'tail' | 'fold',
    events: readonly NormalisedEvent[],
    match: Predicate,
    now: number,
  ) {
    const window = resolveTimeRange(job.params.time_range, now);
    const matched: NormalisedEvent[] = [];
    for (const e of events) {
      if (e.ts >= window.fromMs && e.ts < window.toMs && match(e as unknown as EventLike)) matched.push(e);
    }
    if (!matched.length) return;
    let tail = this.tails.get(job.id);
    if (!tail) {
      tail = {
        events: [],
        added: [],
        batches: [],
        size: 0,
        overflowAt: null,
        acc: null,
        timer: null,
        lastSent: 0,
      };
      this.tails.set(job.id, tail);
    }
    if (how === 'tail') {
      const params = job.params as SearchParams;
      const stored = matched.map((e): StoredEvent => ({ ...e, stored_at: now }));
      tail.events = [...stored, ...tail.events].sort(newestFirst).slice(0, params.page * params.page_size);
      tail.added.push({ at: now, n: matched.length });
    } else {
      if (tail.overflowAt !== null && tail.overflowAt < job.baseMs) tail.overflowAt = null;
      if (tail.overflowAt !== null) return;
      if (tail.size + matched.length > FOLD_MAX) {
        // Too many to keep: the next full evaluation (refresh interval) catches up.
        tail.overflowAt = now;
        tail.batches = [];
        tail.size = 0;
        tail.acc = null;
        return;
      }
      tail.batches.push({ at: now, events: matched });
      tail.size += matched.length;
    }
    if (tail.timer) return;
    const t = tail;
    t.timer = setTimeout(
      () => {
        t.timer = null;
        t.lastSent = Date.now();
        this.publish(job);
      },
      Math.max(0, t.lastSent + this.tailMs - now),
    );
  }

  /** Forgets a query's tail (nobody watches it any more). */
  drop(queryId: string): void {
    const tail = this.tails.get(queryId);
    if (tail?.timer) clearTimeout(tail.timer);
    this.tails.delete(queryId);
  }

  close(): void {
    for (const t of this.tails.values()) if (t.timer) clearTimeout(t.timer);
    this.tails.clear();
  }
}
