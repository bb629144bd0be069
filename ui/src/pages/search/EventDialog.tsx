import { type KeyboardEvent, useEffect, useRef, useState } from 'react';
import { type Answer, api, errorText, isAbort, type LogEvent, type TimeRange } from '../../api';
import { formatTs } from '../../format';
import { Link } from '../../router';
import { EventContext } from './EventContext';
import { Marked } from './highlight';
import { LongText } from './LongText';
import { filterTerm } from './query';
import '../tasks/work.css';
import './event-panel.css';

type Timestamps = Answer<'/api/events/{ev_id}/timestamps'>;

type MatchedTriggers = Answer<'/api/events/{ev_id}/triggers'>;
type MatchedTrigger = MatchedTriggers['triggers'][number];

/** An action hint of `GET /api/events/{ev_id}?actions_hint=true` (README: actions_hint). */
interface ActionHint {
  id: string;
  title: string;
  method?: string;
  path?: string;
  body?: { type: string; params: Record<string, unknown> & { filter?: Array<Record<string, unknown>> } };
}

/** What running a hint gave: a TopN's items (with `geo` for the GeoIP lookup). */
interface HintResult {
  field: string;
  id: string;
  items?: Array<{ value: unknown; count: number; geo?: Record<string, unknown> }>;
  error?: string;
}

const SHOWN_ACTIONS = ['filter_in', 'filter_out', 'top_values', 'geoip'];

const COLUMN_ORDER = ['ts', 'severity', 'host', 'app', 'message', 'source', 'intake', 'ev_id'];
const TIME_FIELDS = new Set(['ts', 'received_at', 'stored_at']);

const show = (key: string, v: unknown): string => {
  if (TIME_FIELDS.has(key) && typeof v === 'number') return `${formatTs(v)} (${v})`;
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
};

/** The fields with a value, columns first, and the names of the empty (null) columns. */
function orderedFields(ev: Record<string, unknown>): { filled: [string, unknown][]; empty: string[] } {
  const rank = (k: string) => {
    const i = COLUMN_ORDER.indexOf(k);
    return i === -1 ? COLUMN_ORDER.length : i;
  };
  const all = Object.entries(ev)
    .filter(([k]) => k !== 'raw' && k !== 'actions')
    .sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b));
  return {
    filled: all.filter(([, v]) => v !== null && v !== undefined),
    empty: all.filter(([, v]) => v === null || v === undefined).map(([k]) => k),
  };
}

/** Keys that step to the previous/next event of the results from the panel. */
const STEP_KEYS: Record<string, number> = { j: 1, k: -1, ArrowDown: 1, ArrowUp: -1 };

/**
 * One event in a side panel beside the results (a non-modal dialog: the results stay
 * usable): every field (`GET /api/events/{ev_id}`), its `raw` record, its timestamps and
 * the triggers it matched. Esc or Close closes it; j/k (↑/↓ on its heading) step through
 * the results.
 */
export function EventDialog({
  event,
  onClose,
  onFilter,
  scope,
  showContext = false,
  onContextChange,
  link,
  onStep,
  takeFocus = true,
}: {
  event: LogEvent;
  /** Steps to the previous (-1) or next (1) event of the results. */
  onStep?: (delta: number) => void;
  /** Opening moves the focus to the panel's heading (not when stepped from the table). */
  takeFocus?: boolean;
  /** Opens with the event's context shown (the search page's `c`). */
  showContext?: boolean;
  /** Told when the context is shown or hidden (the search page keeps it in its address). */
  onContextChange?: (shown: boolean) => void;
  /** A link to the search with this event open, its time range frozen (the search page's). */
  link?: () => string;
  onClose: () => void;
  /** Narrows the search by a query term (the field list's filter for / filter out). */
  onFilter?: (term: string) => void;
  /** The search shown: Top values count over it (the API's own hint is the event's second). */
  scope?: { query: string; timeRange: TimeRange | null };
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const headingRef = useRef<HTMLHeadingElement>(null);
  const confirmRef = useRef<HTMLLegendElement>(null);
  const [context, setContext] = useState(showContext);
  /** 'copied', or the link itself where the browser gives the page no clipboard. */
  const [copied, setCopied] = useState<string | null>(null);
  const copyLink = async (href: string) => {
    try {
      await navigator.clipboard.writeText(href);
      setCopied('copied');
    } catch {
      setCopied(href);
    }
  };
  const [full, setFull] = useState<Record<string, unknown> | null>(null);
  const [times, setTimes] = useState<Timestamps | null>(null);
  const [triggers, setTriggers] = useState<MatchedTrigger[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [task, setTask] = useState<{ id: number; title: string } | null>(null);
  const [taskBusy, setTaskBusy] = useState(false);
  /** Create task asks once before it writes: the confirm step is shown. */
  const [confirming, setConfirming] = useState(false);
  const [hint, setHint] = useState<HintResult | 'loading' | null>(null);

  /** Runs a Top values or GeoIP hint: its request with this event's value filled in. */
  const runHint = async (field: string, value: unknown, a: ActionHint) => {
    if (!a.body || !a.path) return;
    setHint('loading');
    const filter = (a.body.params.filter ?? []).map((f) =>
      f.field === field && !('value' in f) ? { ...f, value } : f,
    );
    const over =
      a.id === 'top_values' && scope?.timeRange ? { query: scope.query, time_range: scope.timeRange } : {};
    try {
      const q = await api<{
        status: string;
        error?: string | null;
        results: { items?: HintResult['items'] };
      }>(a.path, {
        body: { ...a.body, params: { ...a.body.params, ...(filter.length ? { filter } : {}), ...over } },
      });
      setHint(
        q.status === 'ERROR'
          ? { field, id: a.id, error: q.error ?? 'failed' }
          : { field, id: a.id, items: q.results.items ?? [] },
      );
    } catch (err) {
      setHint({ field, id: a.id, error: errorText(err) });
    }
  };

  const firstLine = typeof event.message === 'string' ? event.message.split('\n')[0]?.trim() : '';
  const taskTitle = (firstLine || `Event ${event.ev_id}`).slice(0, 200);

  /** A task linked to this event, titled from its message (`POST /api/tasks`). */
  const createTask = async () => {
    setTaskBusy(true);
    setError(null);
    try {
      const title = taskTitle;
      setTask(
        await api<{ id: number; title: string }>('/api/tasks', { body: { title, ev_ids: [event.ev_id] } }),
      );
    } catch (err) {
      setError(errorText(err));
    } finally {
      setTaskBusy(false);
      setConfirming(false);
    }
  };

  // Shown without a backdrop (show(), not showModal()): the results stay beside it. The
  // heading takes the focus, not the first button (Create task): Enter on a row and Enter
  // again would write (APG dialog pattern).
  useEffect(() => {
    const d = ref.current;
    // show() focuses the dialog's first control: stepped from the table, the row keeps it.
    const before = document.activeElement;
    if (d && !d.open) d.show();
    if (takeFocus) headingRef.current?.focus();
    else if (before instanceof HTMLElement) before.focus();
  }, [takeFocus]);

  // Escape in the results (the rows' arrows step the panel from there) closes it too.
  useEffect(() => {
    const onKey = (e: globalThis.KeyboardEvent) => {
      if (e.key !== 'Escape' || e.defaultPrevented || !(e.target instanceof Element)) return;
      if (!e.target.closest('section.results')) return;
      e.preventDefault();
      ref.current?.close();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);

  const onKeyDown = (e: KeyboardEvent<HTMLDialogElement>) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const target = e.target as HTMLElement;
    if (e.key === 'Escape') {
      e.preventDefault();
      ref.current?.close();
      return;
    }
    const delta = STEP_KEYS[e.key];
    if (!delta || !onStep || target.closest('input, textarea, select, [contenteditable="true"]')) return;
    // The arrows scroll the panel unless its heading (where it opens) has the focus.
    if (e.key.startsWith('Arrow') && target !== headingRef.current) return;
    e.preventDefault();
    onStep(delta);
  };

  // The confirm step's sentence takes the focus: it is read before its buttons.
  useEffect(() => {
    if (confirming) confirmRef.current?.focus();
  }, [confirming]);

  useEffect(() => {
    const ctl = new AbortController();
    const base = `/api/events/${encodeURIComponent(event.ev_id)}`;
    const opts = { signal: ctl.signal };
    setFull(null);
    setTimes(null);
    setTriggers(null);
    setError(null);
    setTask(null);
    setHint(null);
    api<Record<string, unknown>>(`${base}?actions_hint=true`, opts)
      .then(setFull)
      .catch((err) => {
        if (!isAbort(err)) setError(errorText(err));
      });
    api<Timestamps>(`${base}/timestamps`, opts)
      .then(setTimes)
      .catch(() => {});
    api<MatchedTriggers>(`${base}/triggers`, opts)
      .then((r) => setTriggers(r.triggers))
      .catch(() => {});
    return () => ctl.abort();
  }, [event.ev_id]);

  const { filled, empty } = orderedFields(full ?? event);
  const actions = (full?.actions ?? {}) as Record<string, ActionHint[]>;
  const raw = full?.raw;

  return (
    <dialog
      ref={ref}
      aria-label="Event"
      className="event-dialog event-panel"
      onClose={onClose}
      onKeyDown={onKeyDown}
    >
      <div className="dialog-head">
        <h2 ref={headingRef} tabIndex={-1}>
          Event
        </h2>
        <div className="dialog-actions">
          <button
            type="button"
            className="secondary"
            aria-expanded={confirming}
            disabled={taskBusy || task !== null}
            onClick={() => setConfirming(true)}
          >
            Create task…
          </button>
          {link && (
            <button type="button" className="secondary" onClick={() => void copyLink(link())}>
              Copy link
            </button>
          )}
          <button type="button" className="secondary" onClick={() => ref.current?.close()}>
            Close
          </button>
        </div>
      </div>
      {confirming && task === null && (
        <fieldset className="task-confirm">
          <legend ref={confirmRef} tabIndex={-1}>
            Create a task “{taskTitle}” linked to this event?
          </legend>
          <button type="button" disabled={taskBusy} onClick={() => void createTask()}>
            Create task
          </button>
          <button type="button" className="secondary" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </fieldset>
      )}
      <p role="status" className="muted task-created">
        {copied &&
          (copied === 'copied' ? (
            'Link copied.'
          ) : (
            <>
              Copy this link: <code>{copied}</code>
            </>
          ))}
        {task && (
          <>
            Created task{' '}
            <Link to="/tasks">
              #{task.id} “{task.title}”
            </Link>
            .
          </>
        )}
      </p>
      <p className="event-message">
        <MarkedText text={typeof event.message === 'string' ? event.message : ''} max={4_000} />
      </p>
      <button
        type="button"
        className="secondary"
        aria-expanded={context}
        onClick={() => {
          setContext(!context);
          onContextChange?.(!context);
        }}
      >
        {context ? 'Hide context' : 'Show context'}
      </button>
      {context && <EventContext event={event} />}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}

      <h3>Timestamps</h3>
      <dl className="timestamps">
        <dt>Event time</dt>
        <dd>{formatTs(times?.event_time ?? event.ts)}</dd>
        <dt>Received</dt>
        <dd>{formatTs(times?.received_time ?? event.received_at)}</dd>
        <dt>Stored</dt>
        <dd>{formatTs(times?.stored_time ?? event.stored_at)}</dd>
      </dl>

      <h3>Fields</h3>
      <table className="fields">
        <tbody>
          {filled.map(([k, v]) => (
            <tr key={k}>
              <th scope="row">{k}</th>
              <td>
                <MarkedText text={show(k, v)} max={1_000} />
              </td>
              <td className="field-hints">
                {(actions[k] ?? [])
                  .filter((a) => SHOWN_ACTIONS.includes(a.id))
                  .filter((a) => onFilter || (a.id !== 'filter_in' && a.id !== 'filter_out'))
                  .map((a) => (
                    <button
                      key={a.id}
                      type="button"
                      className="secondary small"
                      aria-label={`${a.title}: ${k}`}
                      onClick={() => {
                        if (a.id === 'filter_in' || a.id === 'filter_out') {
                          const text = typeof v === 'string' ? v : String(v);
                          onFilter?.(
                            filterTerm(k, text, {
                              numeric: typeof v === 'number',
                              negate: a.id === 'filter_out',
                            }),
                          );
                          ref.current?.close();
                        } else void runHint(k, v, a);
                      }}
                    >
                      {a.id === 'filter_in' ? '+' : a.id === 'filter_out' ? '−' : a.title}
                    </button>
                  ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <div role="status" className="hint-result">
        {hint === 'loading' ? (
          <p className="muted">Counting…</p>
        ) : hint?.error ? (
          <p className="error">{hint.error}</p>
        ) : hint?.id === 'geoip' ? (
          <p>
            {hint.field}: {geoText(hint.items?.[0]?.geo)}
          </p>
        ) : hint ? (
          <>
            <h4>
              Top values of {hint.field} {scope?.timeRange ? 'in this search' : 'in the second of this event'}
            </h4>
            <ol className="hint-values">
              {(hint.items ?? []).map((i) => (
                <li key={String(i.value)}>
                  {String(i.value)} <span className="muted">{i.count.toLocaleString('en-US')}</span>
                </li>
              ))}
            </ol>
          </>
        ) : null}
      </div>
      {empty.length > 0 && <p className="muted">Empty: {empty.join(', ')}</p>}

      {triggers && triggers.length > 0 && (
        <>
          <h3>Triggers matched</h3>
          <ul className="triggers">
            {triggers.map((t) => (
              <li key={t.trigger_id}>
                <span className={`badge prio-${t.severity}`}>{t.severity}</span> {t.name}
                {t.task_id !== null ? ` (task #${t.task_id})` : ''}
              </li>
            ))}
          </ul>
        </>
      )}

      <h3>Raw</h3>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a long record scrolls and must take the keyboard (axe scrollable-region-focusable) */}
      <pre className="raw" tabIndex={0}>
        <LongText
          text={raw === undefined ? (full ? '(not available)' : 'Loading…') : JSON.stringify(raw, null, 2)}
          max={8_000}
        />
      </pre>
    </dialog>
  );
}

/** A text with the search's terms marked; a long one cut (LongText) unmarked. */
function MarkedText({ text, max }: { text: string; max: number }) {
  return text.length <= max ? <Marked text={text} /> : <LongText text={text} max={max} />;
}

/** Where GeoIP places an address, as a reader says it. */
function geoText(geo: Record<string, unknown> | undefined): string {
  if (!geo) return 'GeoIP does not place this address (private, reserved or unknown).';
  const parts = [geo.city, geo.country ?? geo.country_code].filter((p) => typeof p === 'string' && p);
  const asn = typeof geo.asn === 'number' ? ` (AS${geo.asn})` : '';
  return `${parts.join(', ') || 'somewhere unnamed'}${asn}`;
}
