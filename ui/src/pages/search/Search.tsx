import { DEFAULT_PRESET, TAIL_WINDOW } from '@shared/time-presets';
import { type FormEvent, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { api, errorText, type LogEvent, type TimeRange } from '../../api';
import { ConnectionLost } from '../../components/feedback';
import { formatCount } from '../../format';
import { navigate } from '../../router';
import { useMe } from '../../useMe';
import { SearchActions } from '../reports/SearchActions';
import { ColumnPicker } from './ColumnPicker';
import { DEFAULT_COLUMNS, loadColumns, saveColumns } from './columns';
import { EventDialog } from './EventDialog';
import { type FieldInfo, FieldList, fetchFields } from './FieldList';
import { PatternsTab } from './PatternsTab';
import { QueryBox, type QueryBoxHandle } from './QueryBox';
import { addTerm, errorContext, errorPosition, hasPipes } from './query';
import { MAX_ROWS, ResultsTable } from './ResultsTable';
import { SavedMenu } from './SavedMenu';
import { NoStreams, StreamPicker, useReadableStreams } from './StreamPicker';
import { nextSort, type SearchView, shareLink, viewFromParams, viewPath } from './search-url';
import { type TableChart, TableView } from './TableView';
import { Tabs } from './Tabs';
import { Timeline } from './Timeline';
import { CustomRangeForm, TimeRangeSelect, useTimePicker } from './TimePicker';
import { type RangeSel, windowOf, zoomOut } from './time-range';
import { MAX_LIVE_ROWS, useLiveTail } from './useLiveTail';
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

const sameList = (a: readonly string[], b: readonly string[]) => a.join(',') === b.join(',');

export function SearchPage() {
  /** What the address held on arrival (a reload, or a link someone sent). */
  const initial = useRef<SearchView>(viewFromParams(new URLSearchParams(window.location.search)));
  const [text, setText] = useState(() => initial.current.query);
  const [range, setRange] = useState<RangeSel>(() => initial.current.range);
  // A link's columns are shown as they are; the reader's own are kept for their next search.
  const [columns, setColumns] = useState(() => initial.current.columns ?? loadColumns());
  const changeColumns = useCallback((cols: string[]) => {
    setColumns(cols);
    saveColumns(cols);
  }, []);
  const [sort, setSort] = useState<string[]>(() => initial.current.sort);
  /** The saved search this page was opened from or last saved as. */
  const [saved, setSaved] = useState<number | null>(() => initial.current.saved);
  const [selected, setSelected] = useState<LogEvent | null>(null);
  /** The open event's context is shown (opened with `c`). */
  const [withContext, setWithContext] = useState(false);
  /** An event the address names, while it is read (then it is `selected`). */
  const [linked, setLinked] = useState<{ id: string; context: boolean } | null>(() =>
    initial.current.event ? { id: initial.current.event, context: initial.current.context } : null,
  );
  /** The page's tab: the events, or their patterns. */
  const [tab, setTab] = useState<SearchView['tab']>(() => initial.current.tab);
  const [linkError, setLinkError] = useState<string | null>(null);
  /** How the rows of a query with pipes are shown. */
  const [chart, setChart] = useState<TableChart>({ kind: 'table' });
  const open = useCallback((ev: LogEvent, opts?: { context: boolean }) => {
    setWithContext(opts?.context ?? false);
    setSelected(ev);
  }, []);
  // The event an address names: read, then opened (with its context when the tab says so).
  useEffect(() => {
    if (!linked) return;
    let gone = false;
    api<LogEvent>(`/api/events/${encodeURIComponent(linked.id)}`)
      .then((ev) => {
        if (gone) return;
        setWithContext(linked.context);
        setSelected(ev);
        setLinked(null);
      })
      .catch((err) => {
        if (gone) return;
        setLinked(null);
        setLinkError(`The linked event cannot be shown: ${errorText(err)}`);
      });
    return () => {
      gone = true;
    };
  }, [linked]);
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

  /** The next change of the address is a history entry (a new search or range), not a replacement. */
  const pushNext = useRef(false);
  const sortRef = useRef(sort);
  sortRef.current = sort;

  const run = useCallback(
    (query: string, r: RangeSel, push = false, order: readonly string[] = sortRef.current) => {
      const pinned = windowOf(r, Date.now());
      setEdited(false);
      setShown({ query, window: pinned });
      setSelected(null);
      setLinkError(null);
      if (push) pushNext.current = true;
      start(query, pinned, order);
    },
    [start],
  );

  // The first search runs on arrival, with what the address holds (empty: everything).
  // The same effect abandons what still runs when the page goes: under StrictMode the
  // effect runs, is cleaned up and runs again, and the second run searches again.
  useEffect(() => {
    const v = initial.current;
    run(v.query, v.range, false, v.sort);
    return abandon;
  }, [run, abandon]);

  /** Shows a whole view: Back/Forward, and opening a saved search. */
  const show = useCallback(
    (v: SearchView, push: boolean) => {
      setText(v.query);
      setRange(v.range);
      if (v.columns) setColumns(v.columns);
      setSort(v.sort);
      setSaved(v.saved);
      setTab(v.tab);
      run(v.query, v.range, push, v.sort);
      if (v.event) setLinked({ id: v.event, context: v.context });
    },
    [run],
  );

  // Back and Forward: show what the address holds then.
  const liveRef = useRef(live);
  liveRef.current = live;
  useEffect(() => {
    const onPop = () => {
      if (window.location.pathname !== '/search' || liveRef.current) return;
      show(viewFromParams(new URLSearchParams(window.location.search)), false);
    };
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, [show]);

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

  /** Searches (or, while Live, tails) `query`: a history entry, so Back shows the search before. */
  const go = useCallback(
    (query: string) => {
      if (live) {
        setSelected(null);
        setEdited(false);
        setLiveQuery(query);
      } else run(query, range, true);
    },
    [live, run, range],
  );

  /** A click on a column's header: the results sorted by it (again: the other way). */
  const sortBy = useCallback(
    (column: string) => {
      const next = nextSort(sortRef.current, column);
      setSort(next);
      run(shown?.query ?? text, range, false, next);
    },
    [run, shown, text, range],
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
  /** The shown query has pipes: its rows are a table (docs/query-language.md#table), not events. */
  const piped = !live && (state.table !== null || hasPipes(shown?.query ?? ''));
  const unit = piped ? 'rows' : 'events';
  const statusText = live
    ? `${formatCount(tail.rows.length)} events`
    : state.phase === 'failed' || state.phase === 'ERROR'
      ? 'Search failed'
      : state.total === null
        ? running || state.phase === 'idle'
          ? 'Searching…'
          : `0 ${unit}`
        : `${formatCount(state.total)} ${unit}`;
  const error = live ? tail.error : state.error;
  /** The query the error is about, and where in it (a syntax error names its position). */
  const errorQuery = live ? liveQuery : (shown?.query ?? '');
  const errorAt = errorPosition(error, errorQuery);
  const connection = tail.connection;

  /** Everything the page shows, as its address holds it. */
  const view = useMemo<SearchView>(
    () => ({
      query: live ? liveQuery : (shown?.query ?? initial.current.query),
      range,
      columns: sameList(columns, DEFAULT_COLUMNS) ? null : columns,
      sort,
      tab,
      event: selected?.ev_id ?? linked?.id ?? null,
      context: (selected ? withContext : linked?.context) ?? false,
      saved,
    }),
    [live, liveQuery, shown, range, columns, sort, tab, selected, linked, withContext, saved],
  );
  const path = viewPath(view);
  // The address follows the page: a new search or range is a history entry, the rest replaces it.
  useEffect(() => {
    if (window.location.pathname !== '/search') return;
    if (`${window.location.pathname}${window.location.search}` !== path)
      navigate(path, { replace: !pushNext.current });
    pushNext.current = false;
  }, [path]);

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

      {linkError && (
        <div role="alert" className="error">
          {linkError}
        </div>
      )}
      {error && (
        <div role="alert" id="search-error" className="error">
          {error}
          {errorAt !== null && <ErrorContext query={errorQuery} at={errorAt} />}
        </div>
      )}

      {live && connection === 'reconnecting' && (
        <ConnectionLost what="New events show again once it is back." onRetry={tail.retry} />
      )}

      {!live && !piped && (
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
            <SavedMenu view={view} columns={columns} onOpen={(v) => show(v, true)} onSaved={setSaved} />
            <SearchActions
              qid={state.phase === 'SUCCESS' || state.phase === 'STOPPED' ? state.qid : null}
              query={shown?.query ?? text}
              window={shown?.window ?? null}
              preset={range.kind === 'preset' ? range.preset : DEFAULT_PRESET}
              {...(piped ? { chart } : !live && tab === 'patterns' ? { patterns: true } : {})}
            />
            {!piped && (
              <ColumnPicker
                columns={columns}
                onChange={changeColumns}
                query={shown?.query ?? ''}
                timeRange={shown?.window ?? null}
              />
            )}
          </>
        )}
      </div>

      {piped && <TableView results={state.table} chart={chart} onChart={setChart} />}

      {!live && !piped && (
        <Tabs
          tabs={[
            ['events', 'Events'],
            ['patterns', 'Patterns'],
          ]}
          active={tab}
          onChange={(t) => setTab(t as SearchView['tab'])}
        />
      )}

      {piped ? null : !live && tab === 'patterns' ? (
        <div
          id="search-tab-patterns"
          role="tabpanel"
          aria-labelledby="search-tab-patterns-tab"
          className="search-patterns"
        >
          <PatternsTab
            query={shown?.query ?? ''}
            window={shown?.window ?? null}
            onFilter={(term) => {
              setTab('events');
              onFilter(term);
            }}
            onOpenEvent={(id) => setLinked({ id, context: false })}
          />
        </div>
      ) : (
        <div
          className="search-body"
          {...(live
            ? {}
            : { id: 'search-tab-events', role: 'tabpanel', 'aria-labelledby': 'search-tab-events-tab' })}
        >
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
              sort={sort}
              onSort={sortBy}
            />
          )}
        </div>
      )}

      {selected && (
        <EventDialog
          key={selected.ev_id}
          event={selected}
          showContext={withContext}
          onContextChange={setWithContext}
          link={() => shareLink(view, window.location.origin, true, Date.now())}
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
