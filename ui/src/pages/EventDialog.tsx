import { useEffect, useRef, useState } from 'react';
import { api, errorText, isAbort, type LogEvent } from '../api';
import { formatTs } from '../format';
import { Link } from '../router';
import './tasks/work.css';

interface Timestamps {
  event_time: number;
  received_time: number;
  stored_time: number;
}

interface MatchedTrigger {
  trigger_id: number;
  name: string;
  severity: string;
  description: string;
  matched_at: number;
  task_id: number | null;
}

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
    .filter(([k]) => k !== 'raw')
    .sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b));
  return {
    filled: all.filter(([, v]) => v !== null && v !== undefined),
    empty: all.filter(([, v]) => v === null || v === undefined).map(([k]) => k),
  };
}

/**
 * One event in a modal dialog: every field (`GET /api/events/{ev_id}`), its `raw` record,
 * its timestamps and the triggers it matched. Esc or Close closes it.
 */
export function EventDialog({ event, onClose }: { event: LogEvent; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const [full, setFull] = useState<Record<string, unknown> | null>(null);
  const [times, setTimes] = useState<Timestamps | null>(null);
  const [triggers, setTriggers] = useState<MatchedTrigger[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [task, setTask] = useState<{ id: number; title: string } | null>(null);
  const [taskBusy, setTaskBusy] = useState(false);

  /** A task linked to this event, titled from its message (`POST /api/tasks`). */
  const createTask = async () => {
    setTaskBusy(true);
    setError(null);
    try {
      const message = typeof event.message === 'string' ? event.message.split('\n')[0]?.trim() : '';
      const title = (message || `Event ${event.ev_id}`).slice(0, 200);
      setTask(
        await api<{ id: number; title: string }>('/api/tasks', { body: { title, ev_ids: [event.ev_id] } }),
      );
    } catch (err) {
      setError(errorText(err));
    } finally {
      setTaskBusy(false);
    }
  };

  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
  }, []);

  useEffect(() => {
    const ctl = new AbortController();
    const base = `/api/events/${encodeURIComponent(event.ev_id)}`;
    const opts = { signal: ctl.signal };
    setFull(null);
    setTimes(null);
    setTriggers(null);
    setError(null);
    setTask(null);
    api<Record<string, unknown>>(base, opts)
      .then(setFull)
      .catch((err) => {
        if (!isAbort(err)) setError(errorText(err));
      });
    api<Timestamps>(`${base}/timestamps`, opts)
      .then(setTimes)
      .catch(() => {});
    api<{ triggers: MatchedTrigger[] }>(`${base}/triggers`, opts)
      .then((r) => setTriggers(r.triggers))
      .catch(() => {});
    return () => ctl.abort();
  }, [event.ev_id]);

  const { filled, empty } = orderedFields(full ?? event);
  const raw = full?.raw;

  return (
    <dialog ref={ref} aria-label="Event" className="event-dialog" onClose={onClose}>
      <div className="dialog-head">
        <h2>Event</h2>
        <div className="dialog-actions">
          <button
            type="button"
            className="secondary"
            disabled={taskBusy || task !== null}
            onClick={createTask}
          >
            Create task
          </button>
          <button type="button" className="secondary" onClick={() => ref.current?.close()}>
            Close
          </button>
        </div>
      </div>
      <p role="status" className="muted task-created">
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
      <p className="event-message">{typeof event.message === 'string' ? event.message : ''}</p>
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
              <td>{show(k, v)}</td>
            </tr>
          ))}
        </tbody>
      </table>
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
      <pre className="raw">
        {raw === undefined ? (full ? '(not available)' : 'Loading…') : JSON.stringify(raw, null, 2)}
      </pre>
    </dialog>
  );
}
