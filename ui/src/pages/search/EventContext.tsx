import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';
import { api, errorText, isAbort, type LogEvent } from '../../api';
import { Check } from '../../components/Field';
import { formatTs } from '../../format';

interface Context {
  anchor: LogEvent;
  by: Record<string, unknown>;
  before?: LogEvent[];
  after?: LogEvent[];
  before_cursor?: string | null;
  after_cursor?: string | null;
}

/** Lines a side loads at a time. */
const STEP = 20;
/** Fields that can name a source, offered as toggles when the event has them. */
const SOURCE_FIELDS = ['host', 'app', 'proc_id', 'log.file.path', 'file.path'];

/**
 * The lines of the event's source around it (`GET /api/events/{id}/context`), in the
 * order they happened, the event itself marked; "Earlier" and "Later" load more; the
 * source's fields are toggles (none: every event).
 */
export function EventContext({ event }: { event: LogEvent }) {
  const offered = SOURCE_FIELDS.filter((f) => event[f] !== undefined && event[f] !== null);
  const [by, setBy] = useState<string[] | null>(null);
  const [lines, setLines] = useState<{ before: LogEvent[]; after: LogEvent[] }>({ before: [], after: [] });
  const [cursors, setCursors] = useState<{ before: string | null; after: string | null }>({
    before: null,
    after: null,
  });
  const [fields, setFields] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const listRef = useRef<HTMLOListElement>(null);
  const anchorRef = useRef<HTMLLIElement>(null);
  /** Counts the loads around the event: each one shows the list centred on it. */
  const [loads, setLoads] = useState(0);
  const base = `/api/events/${encodeURIComponent(event.ev_id)}/context`;

  useEffect(() => {
    const ctl = new AbortController();
    setBusy(true);
    const qs = new URLSearchParams({ before: String(STEP), after: String(STEP) });
    if (by !== null) qs.set('by', by.join(','));
    api<Context>(`${base}?${qs}`, { signal: ctl.signal })
      .then((c) => {
        setLines({ before: c.before ?? [], after: c.after ?? [] });
        setCursors({ before: c.before_cursor ?? null, after: c.after_cursor ?? null });
        setFields(Object.keys(c.by));
        setError(null);
        setLoads((n) => n + 1);
      })
      .catch((err) => {
        if (!isAbort(err)) setError(errorText(err));
      })
      .finally(() => {
        if (!ctl.signal.aborted) setBusy(false);
      });
    return () => ctl.abort();
  }, [base, by]);

  const more = useCallback(
    async (side: 'before' | 'after') => {
      const cursor = cursors[side];
      if (!cursor) return;
      setBusy(true);
      try {
        const c = await api<Context>(`${base}?${side}=${STEP}&cursor=${encodeURIComponent(cursor)}`);
        setLines((l) =>
          side === 'before'
            ? { ...l, before: [...(c.before ?? []), ...l.before] }
            : { ...l, after: [...l.after, ...(c.after ?? [])] },
        );
        setCursors((cs) => ({ ...cs, [side]: c[`${side}_cursor`] ?? null }));
      } catch (err) {
        setError(errorText(err));
      } finally {
        setBusy(false);
      }
    },
    [base, cursors],
  );

  // The event in the middle of the list, not below its fold: only the list scrolls (not
  // the dialog, as scrollIntoView would). Earlier and Later do not centre it again.
  useLayoutEffect(() => {
    const list = listRef.current;
    const anchor = anchorRef.current;
    if (!list || !anchor || loads === 0) return;
    const box = list.getBoundingClientRect();
    const line = anchor.getBoundingClientRect();
    list.scrollTop += line.top + line.height / 2 - (box.top + box.height / 2);
  }, [loads]);

  const chosen = by ?? fields;
  const row = (e: LogEvent, anchor = false) => (
    <li
      key={e.ev_id}
      ref={anchor ? anchorRef : undefined}
      className={anchor ? 'context-anchor' : undefined}
      aria-current={anchor ? 'true' : undefined}
    >
      <span className="context-time">{formatTs(e.ts)}</span>{' '}
      <span className="muted">{[e.host, e.app].filter(Boolean).join(' ')}</span>{' '}
      <span>{typeof e.message === 'string' ? e.message : ''}</span>
    </li>
  );
  return (
    <section aria-label="Context" className="event-context">
      <fieldset className="perm-list">
        <legend>Same source: the lines with equal</legend>
        {offered.map((f) => (
          <Check
            key={f}
            label={f}
            checked={chosen.includes(f)}
            onChange={(e) => setBy(offered.filter((x) => (x === f ? e.target.checked : chosen.includes(x))))}
          />
        ))}
      </fieldset>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <button
        type="button"
        className="secondary"
        disabled={busy || !cursors.before}
        onClick={() => void more('before')}
      >
        Earlier
      </button>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable list must take the keyboard (axe scrollable-region-focusable) */}
      <ol ref={listRef} className="context-lines" aria-label="Lines around the event" tabIndex={0}>
        {lines.before.map((e) => row(e))}
        {row(event, true)}
        {lines.after.map((e) => row(e))}
      </ol>
      <button
        type="button"
        className="secondary"
        disabled={busy || !cursors.after}
        onClick={() => void more('after')}
      >
        Later
      </button>
    </section>
  );
}
