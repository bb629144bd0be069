import { DEFAULT_PRESET, TAIL_WINDOW } from '@shared/time-presets';
import { type FormEvent, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { LogEvent, TimeRange } from '../api';
import { ConnectionLost } from '../components/feedback';
import { formatCount } from '../format';
import { navigate } from '../router';
import { useMe } from '../useMe';
import { EventDialog } from './EventDialog';
import { MAX_ROWS, ResultsTable } from './ResultsTable';
import { SearchActions } from './reports/SearchActions';
import { ColumnPicker } from './search/ColumnPicker';
import { loadColumns, saveColumns } from './search/columns';
import { type FieldInfo, FieldList, fetchFields } from './search/FieldList';
import { QueryBox, type QueryBoxHandle } from './search/QueryBox';
import { addTerm, errorContext, errorPosition } from './search/query';
import { NoStreams, StreamPicker, useReadableStreams } from './search/StreamPicker';
import { CustomRangeForm, TimeRangeSelect, useTimePicker } from './search/TimePicker';
import { type RangeSel, rangeFromParams, rangeToParams, windowOf, zoomOut } from './search/time-range';
import { MAX_LIVE_ROWS, useLiveTail } from './search/useLiveTail';
import { Timeline } from './Timeline';
import { PAGE_SIZE, useSearch } from './useSearch';

const isEditable = (el: EventTarget | null) =>
  el instanceof HTMLElement &&
  (el.isContentEditable ||
    el instanceof HTMLInputElement ||
    el instanceof HTMLTextAreaElement ||
    el instanceof HTMLSelectElement);

const LIVE_STATE_TEXT = {
  connecting: 'Connecting…',
  open: 'Live',
  reconnecting: 'Reconnecting…',
  closed: 'Disconnected',
} as const;

const noRows = () => {};

/** The query with the place of its syntax error marked (the message says it in words). */
function ErrorContext({ query, at }: { query: string; at: number }) {
  const c = errorContext(query, at);
  return (
    <span className="query-error-context" aria-hidden="true">
      {c.before}
      <mark className={c.at ? undefined : 'at-end'}>{c.at || ' '}</mark>
      {c.after}
    </span>
  );
}

export function SearchPage() {
  const initial = useRef(new URLSearchParams(window.location.search));
  const [text, setText] = useState(() => initial.current.get('q') ?? '');
  const [range, setRange] = useState<RangeSel>(() => rangeFromParams(initial.current));
  const [columns, setColumns] = useState(loadColumns);
  const changeColumns = useCallback((cols: string[]) => {
    setColumns(cols);
    saveColumns(cols);
  }, []);
  const [selected, setSelected] = useState<LogEvent | null>(null);
  /** The open event's context is shown (opened with `c`). */
  const [withContext, setWithContext] = useState(false);
  const open = useCallback((ev: LogEvent, opts?: { context: boolean }) => {
    setWithContext(opts?.context ?? false);
    setSelected(ev);
  }, []);
  /** The query was edited since the last search (its error is no longer marked in the box). */
  const [edited, setEdited] = useState(false);
  const queryRef = useRef<QueryBoxHandle>(null);
  const me = useMe();
  const streams = useReadableStreams();
  const { state, start, stop, abandon, ensureRows, running } = useSearch();
  /** The query and window the results (and the field list) are of. */
  const [shown, setShown] = useState<{ query: string; window: { ts_from: number; ts_to: number } } | null>(
    null,
  );
  const [live, setLive] = useState(false);
  const [paused, setPaused] = useState(false);
  /** The query being tailed while Live is on. */
  const [liveQuery, setLiveQuery] = useState('');
  const tail = useLiveTail(liveQuery, live, paused);

  /** Keeps the query and range in the address; a new range is a history entry (Back returns to the last). */
  const remember = useCallback((query: string, r: RangeSel, push = false) => {
    const params = new URLSearchParams();
    if (query) params.set('q', query);
    rangeToParams(r, params);
    const qs = params.toString();
    navigate(qs ? `/search?${qs}` : '/search', { replace: !push });
  }, []);

  const run = useCallback(
    (query: string, r: RangeSel, push = false) => {
      const pinned = windowOf(r, Date.now());
      setEdited(false);
      setShown({ query, window: pinned });
      setSelected(null);
      remember(query, r, push);
      start(query, pinned);
    },
    [start, remember],
  );

  // The first search runs on arrival, with what the address holds (empty: everything).
  // The same effect abandons what still runs when the page goes: under StrictMode the
  // effect runs, is cleaned up and runs again, and the second run searches again.
  useEffect(() => {
    const q = initial.current;
    run(q.get('q') ?? '', rangeFromParams(q));
    return abandon;
  }, [run, abandon]);

  // Back and Forward: search what the address holds then.
  const liveRef = useRef(live);
  liveRef.current = live;
  useEffect(() => {
    const onPop = () => {
      if (window.location.pathname !== '/search' || liveRef.current) return;
      const params = new URLSearchParams(window.location.search);
      const query = params.get('q') ?? '';
      const r = rangeFromParams(params);
      setText(query);
      setRange(r);
      run(query, r);
    };
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, [run]);

  // `/` focuses the query box from anywhere (except while typing elsewhere).
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey || isEditable(e.target)) return;
      if (document.querySelector('dialog[open]')) return;
      e.preventDefault();
      queryRef.current?.focus();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);

  /** Searches (or, while Live, tails) `query`. */
  const go = useCallback(
    (query: string) => {
      if (live) {
        setSelected(null);
        setEdited(false);
        setLiveQuery(query);
        remember(query, range);
      } else run(query, range);
    },
    [live, run, range, remember],
  );

  const submit = (e?: FormEvent) => {
    e?.preventDefault();
    go(text);
  };

  const onFilter = useCallback(
    (term: string) => {
      const base = live ? liveQuery : (shown?.query ?? text);
      const next = addTerm(base, term);
      setText(next);
      go(next);
    },
    [live, liveQuery, shown, text, go],
  );

  const toggleLive = () => {
    if (live) {
      setLive(false);
      setPaused(false);
      run(text, range);
    } else {
      // The historical search is not needed while tailing.
      if (running) void stop();
      setSelected(null);
      setLiveQuery(text);
      setPaused(false);
      setLive(true);
    }
  };

  const liveRange = useMemo<TimeRange>(() => ({ preset: TAIL_WINDOW }), []);

  // Completion's fields: every field of the time range, fetched once a minute at most.
  const rangeRef = useRef(range);
  rangeRef.current = range;
  const fieldCache = useRef<{ key: string; at: number; fields: Promise<FieldInfo[]> } | null>(null);
  const completionFields = useCallback(() => {
    const r = rangeRef.current;
    const key = JSON.stringify(r);
    const c = fieldCache.current;
    if (c && c.key === key && Date.now() - c.at < 60_000) return c.fields;
    const timeRange: TimeRange =
      r.kind === 'absolute' ? { ts_from: r.from, ts_to: r.to } : { preset: r.preset };
    const fields = fetchFields('', timeRange).then((r) => r.fields);
    fields.catch(() => {
      fieldCache.current = null;
    });
    fieldCache.current = { key, at: Date.now(), fields };
    return fields;
  }, []);
  const livePages = useMemo(() => {
    const pages = new Map<number, LogEvent[]>();
    for (let i = 0; i < tail.rows.length; i += PAGE_SIZE)
      pages.set(i / PAGE_SIZE, tail.rows.slice(i, i + PAGE_SIZE));
    return pages;
  }, [tail.rows]);

  const picker = useTimePicker({
    range,
    shown: shown?.window ?? null,
    live,
    onChange: (r) => {
      setRange(r);
      run(text, r, true);
    },
  });

  const zoomTo = useCallback(
    (r: RangeSel) => {
      setRange(r);
      run(shown?.query ?? text, r, true);
    },
    [run, shown, text],
  );
  const onZoomOut = useCallback(() => {
    if (shown) zoomTo(zoomOut(shown.window));
  }, [shown, zoomTo]);

  const total = state.total ?? 0;
  const statusText = live
    ? `${formatCount(tail.rows.length)} events`
    : state.phase === 'failed' || state.phase === 'ERROR'
      ? 'Search failed'
      : state.total === null
        ? running || state.phase === 'idle'
          ? 'Searching…'
          : '0 events'
        : `${formatCount(state.total)} events`;
  const error = live ? tail.error : state.error;
  /** The query the error is about, and where in it (a syntax error names its position). */
  const errorQuery = live ? liveQuery : (shown?.query ?? '');
  const errorAt = errorPosition(error, errorQuery);
  const connection = tail.connection;

  return (
    <div className="search-page">
      <h1 className="visually-hidden">Search</h1>
      <search>
        <form className="search-form" onSubmit={submit}>
          <QueryBox
            ref={queryRef}
            value={text}
            onChange={(v) => {
              setText(v);
              setEdited(true);
            }}
            onSubmit={(value) => go(value)}
            fields={completionFields}
            errorAt={edited ? null : errorAt}
            errorId={error ? 'search-error' : undefined}
          />
          <StreamPicker
            streams={streams}
            query={text}
            onChange={(v) => {
              setText(v);
              go(v);
            }}
          />
          <TimeRangeSelect picker={picker} />
          <button type="submit">Search</button>
          <button
            type="button"
            role="switch"
            aria-checked={live}
            className={live ? 'switch on' : 'switch'}
            onClick={toggleLive}
          >
            <span className="switch-track" aria-hidden="true" />
            Live
          </button>
        </form>
      </search>

      <CustomRangeForm picker={picker} />
      <NoStreams streams={streams} isAdmin={me?.is_admin ?? false} />

      {error && (
        <div role="alert" id="search-error" className="error">
          {error}
          {errorAt !== null && <ErrorContext query={errorQuery} at={errorAt} />}
        </div>
      )}

      {live && connection === 'reconnecting' && (
        <ConnectionLost what="New events show again once it is back." onRetry={tail.retry} />
      )}

      {!live && (
        <Timeline
          timeline={state.timeline}
          window={shown?.window ?? null}
          onZoom={zoomTo}
          onZoomOut={onZoomOut}
        />
      )}

      <div className="status-row">
        <div role="status" className="count">
          {statusText}
        </div>
        {live ? (
          <>
            <span
              role="status"
              className={`live-state live-${paused ? 'paused' : (connection ?? 'connecting')}`}
            >
              {paused
                ? `Paused${tail.waiting ? `: ${formatCount(tail.waiting)} new` : ''}`
                : LIVE_STATE_TEXT[connection ?? 'connecting']}
            </span>
            <button type="button" className="secondary small" onClick={() => setPaused((p) => !p)}>
              {paused ? 'Resume' : 'Pause'}
            </button>
            <span className="muted wide-only">newest first, at most {formatCount(MAX_LIVE_ROWS)}</span>
            <ColumnPicker
              columns={columns}
              onChange={changeColumns}
              query={liveQuery}
              timeRange={liveRange}
            />
          </>
        ) : (
          <>
            {total > MAX_ROWS && (
              <span className="muted">(scrolling shows the newest {formatCount(MAX_ROWS)})</span>
            )}
            {running && (
              <>
                {/* Indeterminate until the server reports progress. */}
                <progress
                  aria-label="Search progress"
                  max={1}
                  value={state.progress > 0 ? state.progress : undefined}
                />
                <button type="button" className="secondary small" onClick={stop}>
                  Stop
                </button>
              </>
            )}
            {state.phase === 'STOPPED' && <span className="muted">Stopped: the results are partial.</span>}
            <SearchActions
              qid={state.phase === 'SUCCESS' || state.phase === 'STOPPED' ? state.qid : null}
              query={shown?.query ?? text}
              window={shown?.window ?? null}
              preset={range.kind === 'preset' ? range.preset : DEFAULT_PRESET}
            />
            <ColumnPicker
              columns={columns}
              onChange={changeColumns}
              query={shown?.query ?? ''}
              timeRange={shown?.window ?? null}
            />
          </>
        )}
      </div>

      <div className="search-body">
        <FieldList
          query={live ? liveQuery : (shown?.query ?? '')}
          timeRange={live ? liveRange : (shown?.window ?? null)}
          onFilter={onFilter}
        />
        {live ? (
          <ResultsTable
            key="live"
            total={tail.rows.length}
            pages={livePages}
            phase={tail.connection === 'open' ? 'SUCCESS' : 'PENDING'}
            ensureRows={noRows}
            selectedId={selected?.ev_id ?? null}
            onOpen={open}
            emptyText="Waiting for events…"
            columns={columns}
          />
        ) : (
          <ResultsTable
            key={state.qid ?? 'none'}
            total={total}
            pages={state.pages}
            phase={state.phase}
            ensureRows={ensureRows}
            selectedId={selected?.ev_id ?? null}
            onOpen={open}
            columns={columns}
          />
        )}
      </div>

      {selected && (
        <EventDialog
          key={`${selected.ev_id}:${withContext}`}
          event={selected}
          showContext={withContext}
          onClose={() => setSelected(null)}
          onFilter={onFilter}
          scope={{
            query: live ? liveQuery : (shown?.query ?? ''),
            timeRange: live ? liveRange : (shown?.window ?? null),
          }}
        />
      )}
    </div>
  );
}
