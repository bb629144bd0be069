import { type FormEvent, Fragment, useEffect, useState } from 'react';
import { ApiError, api, errorText, type GenericQuery, isAbort, isFinal, type Paginated } from '../../api';
import { formatCount, formatTs } from '../../format';
import { Link } from '../../router';
import { useApi } from '../../useApi';
import { eventSearchHref } from '../tasks/TasksPage';
import { useMe } from '../tasks/useMe';
import '../tasks/work.css';

interface Trigger {
  id: number;
  name: string;
  description: string;
  severity: string;
  query: string;
  filter: unknown[];
  enabled: boolean;
  create_task: boolean;
  assign_to: number | null;
}

const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;

/**
 * The query's problem as the server states it (`POST /api/query?validate_only=true`), or
 * null when it is valid. Throws on anything but a 400 (an abort, a network failure).
 */
export async function validateQuery(query: string, signal?: AbortSignal): Promise<string | null> {
  try {
    await api('/api/query?validate_only=true', {
      body: { type: 'Search', params: { query } },
      signal,
    });
    return null;
  } catch (err) {
    if (err instanceof ApiError && err.status === 400) {
      const own = err.errors?.['params.query'];
      return own?.length ? own.join(' ') : errorText(err);
    }
    throw err;
  }
}

/** `/triggers`: your triggers, a new one (its query checked as you type), their matches. */
export function TriggersPage() {
  const list = useApi<Paginated<Trigger>>('/api/triggers?page_size=200');
  const [notice, setNotice] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState<number | null>(null);

  const toggle = async (t: Trigger) => {
    setError(null);
    try {
      await api(`/api/triggers/${t.id}`, { method: 'PATCH', body: { enabled: !t.enabled } });
      setNotice(`${t.enabled ? 'Disabled' : 'Enabled'} “${t.name}”.`);
      list.reload();
    } catch (err) {
      setError(errorText(err));
    }
  };

  const remove = async (t: Trigger) => {
    if (!window.confirm(`Delete the trigger “${t.name}” and its matches?`)) return;
    setError(null);
    try {
      await api(`/api/triggers/${t.id}`, { method: 'DELETE' });
      setNotice(`Deleted “${t.name}”.`);
      list.reload();
    } catch (err) {
      setError(errorText(err));
    }
  };

  const data = list.data;
  return (
    <div className="page work-page">
      <h1>Triggers</h1>
      <NewTrigger
        onCreated={(t) => {
          setNotice(`Created trigger “${t.name}”.`);
          list.reload();
        }}
      />
      <p role="status" className="muted work-notice">
        {notice}
      </p>
      {(error ?? list.error) && (
        <p role="alert" className="error">
          {error ?? list.error}
        </p>
      )}
      {!data && !list.error && <p className="muted">Loading…</p>}
      {data && data.results.length === 0 && <p className="muted">No triggers yet.</p>}
      {data && data.results.length > 0 && (
        <>
          <p className="muted">
            {formatCount(data.count)} {data.count === 1 ? 'trigger' : 'triggers'}
          </p>
          <div className="table-wrap">
            <table className="list work-table">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Severity</th>
                  <th scope="col" className="wide-only">
                    Query
                  </th>
                  <th scope="col">Action</th>
                  <th scope="col">Enabled</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {data.results.map((t) => (
                  <Fragment key={t.id}>
                    <tr>
                      <td>{t.name}</td>
                      <td>
                        <span className={`badge prio-${t.severity}`}>{t.severity}</span>
                      </td>
                      <td className="wide-only query-cell">
                        <code>{t.query}</code>
                      </td>
                      <td>{t.create_task ? 'Opens a task' : 'Records matches'}</td>
                      <td>
                        <label className="inline-check">
                          <input type="checkbox" checked={t.enabled} onChange={() => toggle(t)} />
                          <span className="visually-hidden">Enabled: {t.name}</span>
                          <span aria-hidden="true">{t.enabled ? 'Yes' : 'No'}</span>
                        </label>
                      </td>
                      <td className="actions-cell">
                        <div className="row-actions">
                          <button
                            type="button"
                            className="secondary small"
                            aria-expanded={open === t.id}
                            aria-controls={open === t.id ? `matches-${t.id}` : undefined}
                            onClick={() => setOpen((o) => (o === t.id ? null : t.id))}
                          >
                            Matches
                          </button>
                          <button
                            type="button"
                            className="secondary small"
                            aria-label={`Delete “${t.name}”`}
                            onClick={() => remove(t)}
                          >
                            Delete
                          </button>
                        </div>
                      </td>
                    </tr>
                    {open === t.id && (
                      <tr className="matches-row" id={`matches-${t.id}`}>
                        <td colSpan={6}>
                          <Matches trigger={t} />
                        </td>
                      </tr>
                    )}
                  </Fragment>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </div>
  );
}

function NewTrigger({ onCreated }: { onCreated: (t: Trigger) => void }) {
  const me = useMe();
  const [name, setName] = useState('');
  const [query, setQuery] = useState('');
  const [severity, setSeverity] = useState('medium');
  const [action, setAction] = useState<'record' | 'task' | 'task-me'>('record');
  const [queryError, setQueryError] = useState<string | null>(null);
  const [checking, setChecking] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  // The query is checked 400 ms after the last keystroke.
  useEffect(() => {
    if (!query.trim()) {
      setQueryError(null);
      setChecking(false);
      return;
    }
    const ctl = new AbortController();
    setChecking(true);
    const timer = setTimeout(() => {
      validateQuery(query, ctl.signal)
        .then((problem) => {
          setQueryError(problem);
          setChecking(false);
        })
        .catch((err) => {
          if (!isAbort(err)) setChecking(false);
        });
    }, 400);
    return () => {
      clearTimeout(timer);
      ctl.abort();
    };
  }, [query]);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const t = await api<Trigger>('/api/triggers', {
        body: {
          name: name.trim(),
          query,
          severity,
          create_task: action !== 'record',
          ...(action === 'task-me' && me ? { assign_to: me.id } : {}),
        },
      });
      setName('');
      setQuery('');
      setSeverity('medium');
      setAction('record');
      onCreated(t);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="work-form" aria-labelledby="new-trigger-title" onSubmit={submit}>
      <h2 id="new-trigger-title">New trigger</h2>
      <div className="field">
        <label htmlFor="trigger-name">Name</label>
        <input
          id="trigger-name"
          required
          maxLength={200}
          value={name}
          onChange={(e) => setName(e.target.value)}
        />
      </div>
      <div className="field grow">
        <label htmlFor="trigger-query">Query</label>
        <input
          id="trigger-query"
          className="mono"
          spellCheck={false}
          autoComplete="off"
          placeholder="action:login_failure user:root"
          value={query}
          aria-invalid={queryError !== null}
          aria-describedby={queryError ? 'trigger-query-error' : undefined}
          onChange={(e) => setQuery(e.target.value)}
        />
      </div>
      <div className="field">
        <label htmlFor="trigger-severity">Severity</label>
        <select id="trigger-severity" value={severity} onChange={(e) => setSeverity(e.target.value)}>
          {SEVERITIES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="trigger-action">Action</label>
        <select
          id="trigger-action"
          value={action}
          onChange={(e) => setAction(e.target.value as typeof action)}
        >
          <option value="record">Record matches</option>
          <option value="task">Open a task</option>
          <option value="task-me">Open a task assigned to me</option>
        </select>
      </div>
      <button type="submit" disabled={busy || !name.trim() || queryError !== null || checking}>
        Create trigger
      </button>
      {queryError && (
        <p role="alert" id="trigger-query-error" className="error form-error">
          {queryError}
        </p>
      )}
      {error && (
        <p role="alert" className="error form-error">
          {error}
        </p>
      )}
    </form>
  );
}

interface Matched {
  ev_id: string;
  ts: number;
  message?: unknown;
  host?: unknown;
  triggers?: { trigger_id: number; matched_at: number }[];
}

const MATCH_WINDOW = 'last_7_days';

/**
 * A trigger's recorded matches among the last week's events its query selects: the API
 * has no list of a trigger's matches, but a Search with `add_trigger_data` tells which of
 * its events matched which triggers (a trigger matches events ingested after it exists).
 */
function Matches({ trigger }: { trigger: Trigger }) {
  const [state, setState] = useState<{ events: Matched[]; scanned: number; total: number } | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const ctl = new AbortController();
    const flags = 'add_trigger_data=true';
    (async () => {
      let q = await api<GenericQuery<{ total: number; events: Matched[] }>>(`/api/query?${flags}`, {
        body: {
          type: 'Search',
          params: {
            query: trigger.query,
            filter: trigger.filter,
            time_range: { preset: MATCH_WINDOW },
            sort: ['-ts'],
            page_size: 500,
          },
        },
        signal: ctl.signal,
      });
      while (!isFinal(q.status)) {
        await new Promise((r) => setTimeout(r, 300));
        if (ctl.signal.aborted) return;
        q = await api(`/api/query/${encodeURIComponent(q.query_id)}?${flags}`, { signal: ctl.signal });
      }
      if (q.status === 'ERROR') throw new Error(q.error ?? 'The search failed.');
      const events = q.results.events ?? [];
      setState({
        events: events.filter((e) => e.triggers?.some((m) => m.trigger_id === trigger.id)),
        scanned: events.length,
        total: q.results.total ?? 0,
      });
    })().catch((err) => {
      if (!isAbort(err)) setError(errorText(err));
    });
    return () => ctl.abort();
  }, [trigger]);

  const searchHref = `/search?${new URLSearchParams({ q: trigger.query, range: MATCH_WINDOW })}`;
  if (error)
    return (
      <p role="alert" className="error">
        {error}
      </p>
    );
  if (!state) return <p className="muted">Looking for matches…</p>;
  return (
    <div>
      <p>
        {state.events.length === 0
          ? 'No recorded matches among '
          : `${formatCount(state.events.length)} recorded ${state.events.length === 1 ? 'match' : 'matches'} among `}
        the newest {formatCount(state.scanned)} of {formatCount(state.total)} events of the last 7 days its
        query selects (<Link to={searchHref}>search them</Link>).
      </p>
      {state.events.length > 0 && (
        <ul className="matches">
          {state.events.slice(0, 50).map((e) => {
            const m = e.triggers?.find((x) => x.trigger_id === trigger.id);
            return (
              <li key={e.ev_id}>
                <Link to={eventSearchHref(e.ev_id)}>{formatTs(e.ts)}</Link>{' '}
                {typeof e.host === 'string' ? `${e.host}: ` : ''}
                {typeof e.message === 'string' ? e.message : ''}
                {m ? <span className="muted"> (matched {formatTs(m.matched_at)})</span> : null}
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}
