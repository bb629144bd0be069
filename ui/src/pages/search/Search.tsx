import { DEFAULT_PRESET, TAIL_WINDOW } from '@shared/time-presets';
import { type FormEvent, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { api, errorText, type LogEvent, type TimeRange } from '../../api';
import { ConnectionLost } from '../../components/feedback';
import { formatCount } from '../../format';
import { useMe } from '../../useMe';
import { SearchActions } from '../reports/SearchActions';
import { ColumnPicker } from './ColumnPicker';
import { coldStatus, indexStatus } from './cold-status';
import { type ColumnWidths, saveColumns, saveWidths } from './columns';
import { EmptyResults } from './EmptyResults';
import { ErrorContext } from './ErrorContext';
import { EventDialog } from './EventDialog';
import { FieldList } from './FieldList';
import { queryTerms, useMarkTerms } from './highlight';
import { LiveControls, LiveNewBar, useLiveHold, waitingText } from './LiveNewBar';
import { PatternsTab } from './PatternsTab';
import { QueryBox, type QueryBoxHandle } from './QueryBox';
import { addTerm, errorPosition, hasPipes } from './query';
import { rememberQuery } from './query-history';
import { MAX_ROWS, ResultsTable } from './ResultsTable';
import { SavedMenu } from './SavedMenu';
import { NoStreams, StreamPicker, useReadableStreams } from './StreamPicker';
import { nextSort, type SearchView, shareLink, viewFromParams } from './search-url';
import { type TableChart, TableView } from './TableView';
import { Tabs } from './Tabs';
import { Timeline } from './Timeline';
import { TimePicker, useTimePicker } from './TimePicker';
import { type RangeSel, windowOf, zoomOut } from './time-range';
import { useExplain } from './useExplain';
import { MAX_LIVE_ROWS, useLiveTail } from './useLiveTail';
import { useRangeFields } from './useRangeFields';
import { useSearch } from './useSearch';
import { useSearchAddress } from './useSearchAddress';
import { WrapToggle } from './WrapToggle';

const isEditable = (el: EventTarget | null) =>
  el instanceof HTMLElement &&
  (el.isContentEditable ||
    el instanceof HTMLInputElement ||
    el instanceof HTMLTextAreaElement ||
    el instanceof HTMLSelectElement);

const noRows = () => {};

export function SearchPage() {
  /** The box's text: what the next search will be of (the address holds the last one searched). */
  const [text, setText] = useState(() => viewFromParams(new URLSearchParams(window.location.search)).query);
  const [live, setLive] = useState(false);
  const [paused, setPaused] = useState(false);
  const liveRef = useRef(live);
  liveRef.current = live;
  const { state, start, stop, abandon, ensureRows, running } = useSearch();
  /** The window the results (and the field list) are of: the range pinned when the search ran. */
  const [pinned, setPinned] = useState<{ ts_from: number; ts_to: number } | null>(null);
  const [linkError, setLinkError] = useState<string | null>(null);
  /** The query was edited since the last search (its error is no longer marked in the box). */
  const [edited, setEdited] = useState(false);

  const run = useCallback(
    (query: string, r: RangeSel, order: readonly string[]) => {
      const span = windowOf(r, Date.now());
      setEdited(false);
      setPinned(span);
      setLinkError(null);
      start(query, span, order);
    },
    [start],
  );

  // Back, Forward or a link: the address's view shows, its search run (while Live the
  // tail follows the address's query by itself).
  const { view, columns, widths, update } = useSearchAddress((v) => {
    setText(v.query);
    if (!liveRef.current) run(v.query, v.range, v.sort);
  });
  const viewRef = useRef(view);
  viewRef.current = view;
  const { range, sort, tab } = view;
  /** The query the results are of (the tailed one while Live). */
  const shown = pinned && { query: view.query, window: pinned };

  /** The event the address names, once read (or taken from the row opened). */
  const [opened, setOpened] = useState<LogEvent | null>(null);
  const selected = view.event !== null && opened?.ev_id === view.event ? opened : null;
  /** The results table's step to the previous/next event (the panel's j/k). */
  const stepRef = useRef<((delta: number) => void) | null>(null);
  /** The panel takes the focus when opened, not when the table's arrows step it. */
  const [panelFocus, setPanelFocus] = useState(true);
  const open = useCallback(
    (ev: LogEvent, opts?: { context?: boolean; focus?: boolean }) => {
      setPanelFocus(opts?.focus ?? true);
      setOpened(ev);
      update({ event: ev.ev_id, context: opts?.context ?? false });
    },
    [update],
  );
  // An event the address names that is not the one open: read, then shown.
  useEffect(() => {
    if (view.event === null || opened?.ev_id === view.event) return;
    let gone = false;
    api<LogEvent>(`/api/events/${encodeURIComponent(view.event)}`)
      .then((ev) => {
        if (!gone) setOpened(ev);
      })
      .catch((err) => {
        if (gone) return;
        update({ event: null, context: false });
        setLinkError(`The linked event cannot be shown: ${errorText(err)}`);
      });
    return () => {
      gone = true;
    };
  }, [view.event, opened?.ev_id, update]);

  const queryRef = useRef<QueryBoxHandle>(null);
  const me = useMe();
  const streams = useReadableStreams();
  /** How the rows of a query with pipes are shown. */
  const [chart, setChart] = useState<TableChart>({ kind: 'table' });
  // While the reader reads (the list scrolled down, an event open) the tail holds its rows.
  const { bodyRef, held, jump } = useLiveHold(live, view.event);
  const tail = useLiveTail(view.query, live, paused || held !== null);
  const waiting = waitingText(tail.waiting, tail.waitingMore);

  // The first search runs on arrival, with what the address holds (empty: everything).
  // The same effect abandons what still runs when the page goes: under StrictMode the
  // effect runs, is cleaned up and runs again, and the second run searches again.
  useEffect(() => {
    const v = viewRef.current;
    run(v.query, v.range, v.sort);
    return abandon;
  }, [run, abandon]);

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

  /**
   * Searches (or, while Live, tails) `query`, with more of the view changed in the same
   * step: a history entry, so Back shows the search before.
   */
  const go = useCallback(
    (query: string, patch: Partial<SearchView> = {}) => {
      setEdited(false);
      rememberQuery(query);
      if (live) {
        update({ ...patch, query, event: null, context: false });
      } else {
        update({ ...patch, query, event: null, context: false }, { push: true });
        run(query, patch.range ?? range, sort);
      }
    },
    [live, run, range, sort, update],
  );

  /** A click on a column's header: the results sorted by it (again: the other way). */
  const sortBy = useCallback(
    (column: string) => {
      const next = nextSort(sort, column);
      update({ sort: next, event: null, context: false });
      run(view.query, range, next);
    },
    [run, view.query, range, sort, update],
  );

  const submit = (e?: FormEvent) => {
    e?.preventDefault();
    go(text);
  };

  const onFilter = useCallback(
    (term: string, patch: Partial<SearchView> = {}) => {
      const next = addTerm(view.query, term);
      setText(next);
      go(next, patch);
    },
    [view.query, go],
  );

  const toggleLive = () => {
    update({ query: text, event: null, context: false });
    if (live) {
      setLive(false);
      setPaused(false);
      run(text, range, sort);
    } else {
      // The historical search is not needed while tailing.
      if (running) void stop();
      setPaused(false);
      setLive(true);
    }
  };

  const liveRange = useMemo<TimeRange>(() => ({ preset: TAIL_WINDOW }), []);

  // Completion's fields (and an empty result's): every field of the time range.
  const allFields = useRangeFields(range);

  /** A new range searches the box's text over it. */
  const picker = useTimePicker({
    range,
    shown: shown?.window ?? null,
    live,
    onChange: (r) => go(text, { range: r }),
  });

  /** A span of the timeline: the shown query over it. */
  const zoomTo = useCallback((r: RangeSel) => go(view.query, { range: r }), [go, view.query]);
  const onZoomOut = useCallback(() => {
    if (pinned) zoomTo(zoomOut(pinned));
  }, [pinned, zoomTo]);

  const total = state.total ?? 0;
  /** The shown query has pipes: its rows are a table (docs/query-language.md#table), not events. */
  const piped = !live && (state.table !== null || hasPipes(shown?.query ?? ''));
  const explain = useExplain({
    view,
    window: shown?.window ?? null,
    update,
    onFilter,
    enabled: !live && !piped,
  });
  const unit = piped ? 'rows' : 'events';
  const failed = state.phase === 'failed' || state.phase === 'ERROR';
  const indexNote = live || running ? null : indexStatus(state.index);
  const statusText = live
    ? `${formatCount(tail.rows.length)} events`
    : failed
      ? 'Search failed'
      : state.total === null
        ? running || state.phase === 'idle'
          ? 'Searching…'
          : `0 ${unit}`
        : `${formatCount(state.total)} ${unit}`;
  const error = live ? tail.error : state.error;
  /** The query the error is about, and where in it (a syntax error names its position). */
  const errorQuery = live ? view.query : (shown?.query ?? '');
  const errorAt = errorPosition(error, errorQuery);
  const connection = tail.connection;
  /** The query and window the field list, column picker and event dialog look at. */
  const scope = live
    ? { query: view.query, timeRange: liveRange }
    : { query: shown?.query ?? '', timeRange: shown?.window ?? null };
  /** The search's terms, marked in the rows' messages and the event panel (highlight.tsx). */
  useMarkTerms(useMemo(() => queryTerms(scope.query), [scope.query]));
  /** The event panel sits beside the results (the Patterns tab and a table have none). */
  const besideResults = !piped && (live || tab !== 'patterns');
  const panel = selected && (
    <EventDialog
      key={selected.ev_id}
      event={selected}
      showContext={view.context}
      onContextChange={(context) => update({ context })}
      link={() => shareLink(view, window.location.origin, true, Date.now())}
      onClose={() => {
        // The focus goes back to the event's row (if it is drawn).
        const row = bodyRef.current?.querySelector<HTMLElement>('tr.event-row.selected .row-open');
        update({ event: null, context: false });
        row?.focus();
      }}
      onFilter={onFilter}
      onStep={(delta) => stepRef.current?.(delta)}
      takeFocus={panelFocus}
      scope={scope}
    />
  );

  const changeColumns = (cols: string[]) => {
    // The reader's own columns for their next search, and this page's in its address.
    saveColumns(cols);
    update({ columns: cols });
  };
  const changeWidths = (w: ColumnWidths) => {
    saveWidths(w);
    update({ widths: w });
  };
  /** A saved search opened: its whole view (the columns shown when it names none), searched. */
  const openSaved = (v: SearchView) => {
    update(v, { push: true });
    setText(v.query);
    run(v.query, v.range, v.sort);
  };

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
            fields={allFields}
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
          <TimePicker picker={picker} />
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

      {!live && !piped && !failed && (
        <Timeline
          timeline={state.timeline}
          window={shown?.window ?? null}
          onZoom={zoomTo}
          onZoomOut={onZoomOut}
          {...explain.timeline}
        />
      )}
      {explain.panel}

      <div className="status-row">
        <div role="status" className="count">
          {statusText}
          {!live && state.cold && <span className="cold-status"> · {coldStatus(state.cold, running)}</span>}
        </div>
        {indexNote && <span className="index-status muted">{indexNote}</span>}
        {live ? (
          <>
            <LiveControls
              {...{ connection, paused, held, waiting, max: MAX_LIVE_ROWS }}
              onPause={() => setPaused((p) => !p)}
            />
            <WrapToggle />
            <ColumnPicker columns={columns} onChange={changeColumns} {...scope} />
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
            <SavedMenu
              view={view}
              columns={columns}
              onOpen={openSaved}
              onSaved={(saved) => update({ saved })}
            />
            <SearchActions
              qid={state.phase === 'SUCCESS' || state.phase === 'STOPPED' ? state.qid : null}
              query={shown?.query ?? text}
              window={shown?.window ?? null}
              preset={range.kind === 'preset' ? range.preset : DEFAULT_PRESET}
              {...(piped ? { chart } : !live && tab === 'patterns' ? { patterns: true } : {})}
            />
            {!piped && <WrapToggle />}
            {!piped && <ColumnPicker columns={columns} onChange={changeColumns} {...scope} />}
          </>
        )}
      </div>

      {piped && <TableView key={state.qid} results={state.table} chart={chart} onChart={setChart} />}

      {!live && !piped && (
        <Tabs
          tabs={[
            ['events', 'Events'],
            ['patterns', 'Patterns'],
          ]}
          active={tab}
          onChange={(t) => update({ tab: t as SearchView['tab'] })}
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
            onFilter={(term) => onFilter(term, { tab: 'events' })}
            onOpenEvent={(id) => update({ event: id, context: false })}
          />
        </div>
      ) : (
        <div
          ref={bodyRef}
          className="search-body"
          {...(live
            ? {}
            : { id: 'search-tab-events', role: 'tabpanel', 'aria-labelledby': 'search-tab-events-tab' })}
        >
          <FieldList {...scope} onFilter={onFilter} columns={columns} onColumns={changeColumns} />
          {live && <LiveNewBar waiting={paused ? '' : waiting} onJump={jump} />}
          {live ? (
            <ResultsTable
              key="live"
              total={tail.rows.length}
              pages={tail.pages}
              phase={tail.connection === 'open' ? 'SUCCESS' : 'PENDING'}
              ensureRows={noRows}
              stepRef={stepRef}
              selectedId={selected?.ev_id ?? null}
              onOpen={open}
              emptyText="Waiting for events…"
              columns={columns}
              widths={widths}
              onWidths={changeWidths}
              onColumns={changeColumns}
              onFilter={onFilter}
            />
          ) : (
            <ResultsTable
              key={state.qid ?? 'none'}
              total={total}
              pages={state.pages}
              phase={state.phase}
              ensureRows={ensureRows}
              stepRef={stepRef}
              selectedId={selected?.ev_id ?? null}
              onOpen={open}
              columns={columns}
              sort={sort}
              onSort={sortBy}
              widths={widths}
              onWidths={changeWidths}
              onColumns={changeColumns}
              onFilter={onFilter}
              emptyState={
                shown && state.phase === 'SUCCESS' && (streams?.length !== 0 || me?.is_admin) ? (
                  <EmptyResults {...shown} range={range} fields={allFields} onSearch={go} onText={setText} />
                ) : null
              }
            />
          )}
          {panel}
        </div>
      )}

      {besideResults ? null : panel}
    </div>
  );
}
