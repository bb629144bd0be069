import { useCallback, useRef, useState } from 'react';
import {
  ApiError,
  errorText,
  type GenericQuery,
  isAbort,
  type LogEvent,
  type QueryStatus,
  runQuery,
  type SearchResults,
  searchPage,
  stopQuery,
  type TableResults,
  type TimelineResults,
  type TimeRange,
} from '../../api';
import type { ColdReach, IndexReach } from './cold-status';
import { hasPipes } from './query';
import { joinSplits, type TimelineData } from './timeline-scale';

/** Rows fetched per request while scrolling. */
export const PAGE_SIZE = 200;

/**
 * The histogram's split by severity, as two Timelines: a Timeline names its 5 most common
 * values and folds the rest into `other`, which would hide a rare `critical` among eight
 * severities. From warning up there are five; below warning three, plus events without one.
 */
const SEVERITY_SPLITS = [
  [{ field: 'severity', op: 'gte', value: 'warning' }],
  [
    {
      any: [
        { field: 'severity', op: 'lt', value: 'warning' },
        { field: 'severity', op: 'not_exists' },
      ],
    },
  ],
];

interface QueryIds {
  search: string | null;
  timeline: string | null;
  /** The Timelines split by severity. */
  splits: string[];
  /** Nothing of these runs any more (nothing to stop when the page goes). */
  done: boolean;
}

const isSplit = (t: TimelineData | null) => Boolean(t?.buckets.some((b) => b.series));

export type Phase = 'idle' | 'starting' | QueryStatus | 'failed';

export interface SearchState {
  phase: Phase;
  qid: string | null;
  /** null until the server has counted anything. */
  total: number | null;
  progress: number;
  error: string | null;
  /** Loaded pages of PAGE_SIZE events by page index. */
  pages: ReadonlyMap<number, LogEvent[]>;
  /**
   * The Timeline's buckets; once the Timelines split by severity have finished, theirs
   * joined (the same interval and counts, each bucket with its severities).
   */
  timeline: TimelineData | null;
  /** A query with pipes runs as a Table instead of a Search and a Timeline: its rows. */
  table: TableResults | null;
  /** The cold files the search (or table) reads; null when its range meets none. */
  cold: ColdReach | null;
  /** How the search (or table) met the word index; null on an event store without one. */
  index: IndexReach | null;
}

const IDLE: SearchState = {
  phase: 'idle',
  qid: null,
  total: null,
  progress: 0,
  error: null,
  pages: new Map(),
  timeline: null,
  table: null,
  cold: null,
  index: null,
};

const running = (p: Phase) => p === 'starting' || p === 'PENDING' || p === 'IN_PROGRESS';

/**
 * A Search over a pinned time range plus a Timeline of the same query and range, run
 * side by side. Pages beyond the first are fetched on demand once the search is done.
 */
export function useSearch() {
  const [state, setState] = useState<SearchState>(IDLE);
  const ctlRef = useRef<AbortController | null>(null);
  const qidsRef = useRef<QueryIds>({ search: null, timeline: null, splits: [], done: true });
  const loaderRef = useRef<PageLoader | null>(null);
  const stateRef = useRef(state);
  stateRef.current = state;

  /**
   * Stops the server side of whatever still runs (fire and forget). The caller runs it
   * when it goes away, from the same effect that started the first search: in StrictMode
   * (development) effects run, are cleaned up and run again, and the second run must
   * start the search the cleanup cancelled.
   */
  const abandon = useCallback(() => {
    ctlRef.current?.abort();
    const q = qidsRef.current;
    if (!q.done) {
      for (const qid of [q.search, q.timeline, ...q.splits]) if (qid) stopQuery(qid).catch(() => {});
    }
    qidsRef.current = { search: null, timeline: null, splits: [], done: true };
  }, []);

  const start = useCallback(
    (query: string, timeRange: TimeRange, sort: readonly string[] = ['-ts']) => {
      abandon();
      const ctl = new AbortController();
      ctlRef.current = ctl;
      loaderRef.current = null;
      const ids: QueryIds = { search: null, timeline: null, splits: [], done: false };
      qidsRef.current = ids;
      setState({ ...IDLE, phase: 'starting' });

      if (hasPipes(query)) {
        const onTable = (q: GenericQuery<TableResults>) => {
          if (ctl.signal.aborted) return;
          ids.search = q.query_id;
          const r = q.results;
          setState((s) => ({
            ...s,
            qid: q.query_id,
            phase: q.status,
            progress: q.progress,
            total: r.total_rows ?? s.total,
            table: r.rows && r.columns ? (r as TableResults) : s.table,
            cold: q.cold,
            index: q.index,
            error: q.status === 'ERROR' ? (q.error ?? 'The query failed.') : null,
          }));
        };
        runQuery<TableResults>(
          { type: 'Table', params: { query, time_range: timeRange } },
          { signal: ctl.signal, onUpdate: onTable },
        )
          .catch((err) => {
            if (isAbort(err) || ctl.signal.aborted) return;
            setState((s) => ({ ...s, phase: 'failed', error: errorText(err) }));
          })
          .finally(() => {
            ids.done = true;
          });
        return;
      }

      const onSearch = (q: GenericQuery<SearchResults>) => {
        if (ctl.signal.aborted) return;
        ids.search = q.query_id;
        setState((s) => ({
          ...s,
          qid: q.query_id,
          phase: q.status,
          progress: q.progress,
          total: q.results.total ?? s.total,
          pages: q.results.events ? new Map([[0, q.results.events]]) : s.pages,
          cold: q.cold,
          index: q.index,
          error: q.status === 'ERROR' ? (q.error ?? 'The search failed.') : null,
        }));
      };
      const search = runQuery<SearchResults>(
        { type: 'Search', params: { query, time_range: timeRange, sort: [...sort], page_size: PAGE_SIZE } },
        { signal: ctl.signal, onUpdate: onSearch },
      ).catch((err) => {
        if (isAbort(err) || ctl.signal.aborted) return;
        setState((s) => ({ ...s, phase: 'failed', error: errorText(err) }));
      });

      const onTimeline = (q: GenericQuery<TimelineResults>) => {
        if (ctl.signal.aborted) return;
        ids.timeline = q.query_id;
        const r = q.results;
        if (r.buckets && r.interval) {
          const timeline = { interval: r.interval, buckets: r.buckets };
          setState((s) => (isSplit(s.timeline) ? s : { ...s, timeline }));
        }
      };
      const timeline = runQuery<TimelineResults>(
        { type: 'Timeline', params: { query, time_range: timeRange, interval: 'auto' } },
        { signal: ctl.signal, onUpdate: onTimeline },
      ).catch((err) => {
        // The search reports bad input; a timeline that fails alone just goes blank.
        if (!isAbort(err) && !ctl.signal.aborted) setState((s) => ({ ...s, timeline: null }));
      });

      // The same buckets by severity, for the histogram's stacks: a split Timeline runs as
      // one statement, so each answer comes whole. Once both have, they replace the plain
      // counts, which show until then (and if either fails).
      const parts: (TimelineData | null)[] = SEVERITY_SPLITS.map(() => null);
      const splits = SEVERITY_SPLITS.map((filter, i) =>
        runQuery<TimelineData>(
          {
            type: 'Timeline',
            params: { query, filter, time_range: timeRange, interval: 'auto', split_by: 'severity' },
          },
          {
            signal: ctl.signal,
            onUpdate: (q) => {
              if (ctl.signal.aborted) return;
              ids.splits[i] = q.query_id;
              const r = q.results;
              if (q.status !== 'SUCCESS' || !r.buckets || !r.interval) return;
              parts[i] = { interval: r.interval, buckets: r.buckets };
              const joined = joinSplits(parts);
              if (joined) setState((s) => ({ ...s, timeline: joined }));
            },
          },
        ).catch(() => {}),
      );

      Promise.allSettled([search, timeline, ...splits]).then(() => {
        ids.done = true;
      });
    },
    [abandon],
  );

  const stop = useCallback(async () => {
    const ids = qidsRef.current;
    ctlRef.current?.abort();
    // A fresh signal for the pages fetched after stopping; the polls above are over.
    ctlRef.current = new AbortController();
    ids.done = true;
    for (const qid of ids.splits) stopQuery(qid).catch(() => {});
    const [s, t] = await Promise.allSettled([
      ids.search ? stopQuery<SearchResults>(ids.search) : Promise.reject(new Error('no search')),
      ids.timeline ? stopQuery<TimelineResults>(ids.timeline) : Promise.reject(new Error('no timeline')),
    ]);
    setState((prev) => {
      let next: SearchState = { ...prev, phase: 'STOPPED' };
      if (s.status === 'fulfilled' && prev.table) {
        const r = s.value.results as Partial<TableResults>;
        if (r.rows && r.columns)
          next = { ...next, table: r as TableResults, total: r.total_rows ?? prev.total };
      } else if (s.status === 'fulfilled') {
        const r = s.value.results;
        next = {
          ...next,
          total: r.total ?? prev.total,
          pages: r.events ? new Map([[0, r.events]]) : prev.pages,
        };
      }
      if (
        t.status === 'fulfilled' &&
        t.value.results.buckets &&
        t.value.results.interval &&
        !isSplit(prev.timeline)
      ) {
        next = {
          ...next,
          timeline: { interval: t.value.results.interval, buckets: t.value.results.buckets },
        };
      }
      return next;
    });
  }, []);

  /** Makes sure rows [first, last] are loaded or on their way. */
  const ensureRows = useCallback((first: number, last: number) => {
    const s = stateRef.current;
    const signal = ctlRef.current?.signal;
    if (!s.qid || !signal || (s.phase !== 'SUCCESS' && s.phase !== 'STOPPED')) return;
    let loader = loaderRef.current;
    if (!loader || loader.qid !== s.qid || loader.signal !== signal) {
      const qid = s.qid;
      loader = new PageLoader(
        qid,
        s.total ?? 0,
        signal,
        (page, events) =>
          setState((prev) =>
            prev.qid === qid ? { ...prev, pages: new Map(prev.pages).set(page, events) } : prev,
          ),
        (err) => {
          const msg =
            err instanceof ApiError && err.status === 404
              ? 'This search has expired on the server. Search again.'
              : errorText(err);
          setState((prev) => (prev.qid === qid ? { ...prev, error: msg } : prev));
        },
      );
      for (const page of s.pages.keys()) loader.loaded.add(page);
      loaderRef.current = loader;
    }
    loader.want(first, last);
  }, []);

  return { state, start, stop, abandon, ensureRows, running: running(state.phase) };
}

/** Requests beyond the first page at once; the rest wait their turn. */
const MAX_PARALLEL = 2;

/**
 * Fetches the pages of a finished Search that the view needs, a few at a time. Each call
 * of `want` replaces the wish list, so pages scrolled past before their turn are never
 * requested (a deep page costs the server a sorted scan).
 */
class PageLoader {
  readonly loaded = new Set<number>();
  private readonly inflight = new Set<number>();
  /** Not retried: a search that expired or a server that refuses stays that way. */
  private readonly failed = new Set<number>();
  private wanted: number[] = [];

  constructor(
    readonly qid: string,
    private readonly total: number,
    readonly signal: AbortSignal,
    private readonly onPage: (page: number, events: LogEvent[]) => void,
    private readonly onError: (err: unknown) => void,
  ) {}

  want(first: number, last: number): void {
    const pages: number[] = [];
    for (let p = Math.floor(first / PAGE_SIZE); p <= Math.floor(last / PAGE_SIZE); p++) {
      if (p * PAGE_SIZE < this.total) pages.push(p);
    }
    this.wanted = pages;
    this.pump();
  }

  private pump(): void {
    while (this.inflight.size < MAX_PARALLEL && !this.signal.aborted) {
      const page = this.wanted.find(
        (p) => !this.loaded.has(p) && !this.inflight.has(p) && !this.failed.has(p),
      );
      if (page === undefined) return;
      this.inflight.add(page);
      searchPage(this.qid, page * PAGE_SIZE, PAGE_SIZE, this.signal)
        .then((q) => {
          this.loaded.add(page);
          if (!this.signal.aborted) this.onPage(page, q.results.events ?? []);
        })
        .catch((err) => {
          this.failed.add(page);
          if (!isAbort(err) && !this.signal.aborted) this.onError(err);
        })
        .finally(() => {
          this.inflight.delete(page);
          this.pump();
        });
    }
  }
}
