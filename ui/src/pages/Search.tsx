import { type FormEvent, useCallback, useEffect, useRef, useState } from 'react';
import type { LogEvent } from '../api';
import { DEFAULT_PRESET, formatCount, isPreset, pinPreset, TIME_PRESETS } from '../format';
import { navigate } from '../router';
import { EventDialog } from './EventDialog';
import { MAX_ROWS, ResultsTable } from './ResultsTable';
import { Timeline } from './Timeline';
import { useSearch } from './useSearch';

const isEditable = (el: EventTarget | null) =>
  el instanceof HTMLElement &&
  (el.isContentEditable ||
    el instanceof HTMLInputElement ||
    el instanceof HTMLTextAreaElement ||
    el instanceof HTMLSelectElement);

export function SearchPage() {
  const initial = useRef(new URLSearchParams(window.location.search));
  const [text, setText] = useState(() => initial.current.get('q') ?? '');
  const [preset, setPreset] = useState(() => {
    const r = initial.current.get('range');
    return isPreset(r) ? r : DEFAULT_PRESET;
  });
  const [selected, setSelected] = useState<LogEvent | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const { state, start, stop, ensureRows, running } = useSearch();
  const [searchWindow, setWindow] = useState<{ ts_from: number; ts_to: number } | null>(null);

  const run = useCallback(
    (query: string, range: string) => {
      const pinned = pinPreset(range, Date.now());
      setWindow(pinned);
      setSelected(null);
      const params = new URLSearchParams();
      if (query) params.set('q', query);
      if (range !== DEFAULT_PRESET) params.set('range', range);
      const qs = params.toString();
      navigate(qs ? `/search?${qs}` : '/search', { replace: true });
      start(query, pinned);
    },
    [start],
  );

  // The first search runs on arrival, with what the address holds (empty: everything).
  useEffect(() => {
    const q = initial.current;
    const r = q.get('range');
    run(q.get('q') ?? '', isPreset(r) ? r : DEFAULT_PRESET);
  }, [run]);

  // `/` focuses the query box from anywhere (except while typing elsewhere).
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey || isEditable(e.target)) return;
      if (document.querySelector('dialog[open]')) return;
      e.preventDefault();
      const input = inputRef.current;
      if (!input) return;
      input.focus();
      input.setSelectionRange(input.value.length, input.value.length);
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    run(text, preset);
  };

  const total = state.total ?? 0;
  const statusText =
    state.phase === 'failed' || state.phase === 'ERROR'
      ? 'Search failed'
      : state.total === null
        ? running || state.phase === 'idle'
          ? 'Searching…'
          : '0 events'
        : `${formatCount(state.total)} events`;

  return (
    <div className="search-page">
      <h1 className="visually-hidden">Search</h1>
      <search>
        <form className="search-form" onSubmit={submit}>
          <label htmlFor="query" className="visually-hidden">
            Query
          </label>
          <input
            id="query"
            ref={inputRef}
            type="text"
            className="query-input"
            value={text}
            onChange={(e) => setText(e.target.value)}
            placeholder="e.g. error AND host:web-1   (press / to focus)"
            autoComplete="off"
            autoCapitalize="none"
            spellCheck={false}
          />
          <label htmlFor="time-range" className="visually-hidden">
            Time range
          </label>
          <select
            id="time-range"
            value={preset}
            onChange={(e) => {
              setPreset(e.target.value);
              run(text, e.target.value);
            }}
          >
            {TIME_PRESETS.map((p) => (
              <option key={p.value} value={p.value}>
                {p.label}
              </option>
            ))}
          </select>
          <button type="submit">Search</button>
        </form>
      </search>

      {state.error && (
        <p role="alert" className="error">
          {state.error}
        </p>
      )}

      <Timeline timeline={state.timeline} window={searchWindow} />

      <div className="status-row">
        <div role="status" className="count">
          {statusText}
        </div>
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
      </div>

      <ResultsTable
        key={state.qid ?? 'none'}
        total={total}
        pages={state.pages}
        phase={state.phase}
        ensureRows={ensureRows}
        selectedId={selected?.ev_id ?? null}
        onOpen={setSelected}
      />

      {selected && <EventDialog event={selected} onClose={() => setSelected(null)} />}
    </div>
  );
}
