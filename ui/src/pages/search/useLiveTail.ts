import { TAIL_WINDOW } from '@shared/time-presets';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { api, errorText, type GenericQuery, getToken, type LogEvent, type SearchResults } from '../../api';
import { type LiveState, openLive } from '../../live';
import { PAGE_SIZE } from './useSearch';

/**
 * The window of the tailed Search (as the CLI's `tail`, src/cli/tail.ts): events stamped
 * this long before now still show when they arrive late.
 */
/** Events per update (the server sends the whole page each time). */
export const TAIL_PAGE = 500;
/** Rows kept: the oldest fall off the end. */
export const MAX_LIVE_ROWS = 2000;

export interface LiveTail {
  rows: LogEvent[];
  /** The rows in pages of PAGE_SIZE, as ResultsTable reads a search's. */
  pages: ReadonlyMap<number, LogEvent[]>;
  /** Connection state: null while the Search is created. */
  connection: LiveState | null;
  /**
   * Events received while paused, not shown yet: every one counted, though only the newest
   * MAX_LIVE_ROWS of them are kept to show.
   */
  waiting: number;
  /**
   * `waiting` is at least this many: an update came whose whole page (TAIL_PAGE) was new,
   * so more may have been stored between two updates than one page shows.
   */
  waitingMore: boolean;
  error: string | null;
  /** While reconnecting: try again now. */
  retry: () => void;
}

const stamp = (e: LogEvent) => Math.round(Number(e.stored_at) * 1000);
const newestFirst = (a: LogEvent, b: LogEvent) => b.ts - a.ts || (a.ev_id < b.ev_id ? 1 : -1);

/**
 * Follows `query` live while `on`: a relative-time Search sorted by `-ts` that the server
 * tails, subscribed to over ui/src/live.ts. The first update gives the newest matches;
 * after it each event stored since the Search was created is prepended once (by ev_id).
 * Updates are gathered and rendered once per animation frame, and at most
 * MAX_LIVE_ROWS rows are kept. While `paused` events are counted, not shown: the rows
 * stay as they are (the reader's place in them with them), and resuming shows the newest.
 */
export function useLiveTail(query: string, on: boolean, paused: boolean): LiveTail {
  const [rows, setRows] = useState<LogEvent[]>([]);
  const [connection, setConnection] = useState<LiveState | null>(null);
  const [waiting, setWaiting] = useState({ count: 0, more: false });
  const [error, setError] = useState<string | null>(null);
  const pending = useRef<LogEvent[]>([]);
  /** Events received since the rows were last shown (pending keeps only the newest). */
  const arrived = useRef({ count: 0, more: false });
  const liveRef = useRef<ReturnType<typeof openLive> | null>(null);
  const frame = useRef(0);
  const pausedRef = useRef(paused);
  pausedRef.current = paused;

  const flush = useCallback(() => {
    frame.current = 0;
    if (pausedRef.current) {
      const { count, more } = arrived.current;
      setWaiting((w) => (w.count === count && w.more === more ? w : { count, more }));
      return;
    }
    const fresh = pending.current;
    pending.current = [];
    arrived.current = { count: 0, more: false };
    setWaiting((w) => (w.count === 0 ? w : { count: 0, more: false }));
    if (fresh.length === 0) return;
    fresh.sort(newestFirst);
    setRows((prev) => {
      const next = fresh.length >= MAX_LIVE_ROWS ? fresh : fresh.concat(prev);
      return next.length > MAX_LIVE_ROWS ? next.slice(0, MAX_LIVE_ROWS) : next;
    });
  }, []);

  const schedule = useCallback(() => {
    if (!frame.current) frame.current = requestAnimationFrame(flush);
  }, [flush]);

  // Resuming shows what came in meanwhile.
  useEffect(() => {
    if (!paused) schedule();
  }, [paused, schedule]);

  useEffect(() => {
    if (!on) return;
    const token = getToken();
    if (!token) return;
    const ctl = new AbortController();
    let live: ReturnType<typeof openLive> | null = null;
    let qid: string | null = null;
    const seen = new Set<string>();
    let first = true;
    let since = 0;
    pending.current = [];
    arrived.current = { count: 0, more: false };
    setRows([]);
    setWaiting({ count: 0, more: false });
    setError(null);
    setConnection(null);

    const remove = (id: string) => {
      api(`/api/query/${encodeURIComponent(id)}/remove`).catch(() => {});
    };

    const onUpdate = (data: unknown) => {
      const q = data as GenericQuery<SearchResults>;
      if (ctl.signal.aborted) return;
      if (q.status === 'ERROR') {
        setError(q.error ?? 'The live search failed.');
        return;
      }
      const events = q.results?.events ?? [];
      const fresh: LogEvent[] = [];
      for (const e of events) {
        if (seen.has(e.ev_id)) continue;
        // After the first page only what was stored since the Search began is new.
        if (!first && stamp(e) < since) continue;
        seen.add(e.ev_id);
        fresh.push(e);
      }
      // A page all new after the first: the server's page may not have held them all.
      const overflow = !first && fresh.length >= TAIL_PAGE;
      first = false;
      if (fresh.length === 0) return;
      arrived.current = {
        count: arrived.current.count + fresh.length,
        more: arrived.current.more || overflow,
      };
      const buf = pending.current.concat(fresh);
      pending.current = buf.length > MAX_LIVE_ROWS ? buf.sort(newestFirst).slice(0, MAX_LIVE_ROWS) : buf;
      // The remembered ids follow the rows kept: older ones cannot come back onto the page.
      if (seen.size > MAX_LIVE_ROWS * 4) {
        const keep = new Set(pending.current.map((e) => e.ev_id));
        for (const id of seen) if (seen.size > MAX_LIVE_ROWS * 2 && !keep.has(id)) seen.delete(id);
      }
      schedule();
    };

    /**
     * Starts the tailed Search and subscribes to it. Called again when the server says the
     * subscription is gone (the query was removed while the page was away, e.g. after a
     * long disconnection): the rows stay, and only events stored since the first start
     * are added.
     */
    let restarts = 0;
    const start = () => {
      api<GenericQuery<SearchResults> & { created_at?: string }>('/api/query', {
        body: {
          type: 'Search',
          params: { query, time_range: { preset: TAIL_WINDOW }, sort: ['-ts'], page_size: TAIL_PAGE },
        },
        // Not aborted on cleanup: a Search the server made anyway is then removed below.
      })
        .then((q) => {
          qid = q.query_id;
          if (ctl.signal.aborted) return remove(q.query_id);
          if (q.status === 'ERROR') {
            setError(q.error ?? 'The live search failed.');
            return;
          }
          // The server's clock: events it stored from here on are new.
          if (!since) since = q.created_at ? Date.parse(q.created_at) : Date.now();
          if (!live) {
            live = openLive({ token, onState: (s) => !ctl.signal.aborted && setConnection(s) });
            liveRef.current = live;
          }
          live.subscribeQuery(q.query_id, onUpdate, (detail) => {
            if (ctl.signal.aborted) return;
            // At most a few restarts: a query the server keeps refusing is an error to show.
            if (++restarts > 3) {
              setError(detail);
              return;
            }
            start();
          });
        })
        .catch((err) => {
          if (!ctl.signal.aborted) setError(errorText(err));
        });
    };
    start();

    return () => {
      ctl.abort();
      live?.close();
      if (liveRef.current === live) liveRef.current = null;
      if (frame.current) cancelAnimationFrame(frame.current);
      frame.current = 0;
      pending.current = [];
      // Nobody watches it any more.
      if (qid) remove(qid);
    };
  }, [on, query, schedule]);

  const retry = useCallback(() => liveRef.current?.retryNow(), []);
  const pages = useMemo(() => {
    const paged = new Map<number, LogEvent[]>();
    for (let i = 0; i < rows.length; i += PAGE_SIZE) paged.set(i / PAGE_SIZE, rows.slice(i, i + PAGE_SIZE));
    return paged;
  }, [rows]);
  return {
    rows,
    pages,
    connection: on ? connection : null,
    waiting: waiting.count,
    waitingMore: waiting.more,
    error: on ? error : null,
    retry,
  };
}
