import { type FormEvent, useState } from 'react';
import { api, errorText, type Paginated } from '../../api';
import { formatCount } from '../../format';
import { Link } from '../../router';
import { useApi } from '../../useApi';
import { useMe, useUserNames } from './useMe';
import './work.css';

export interface Task {
  id: number;
  title: string;
  description: string;
  owner: number;
  priority: string;
  is_open: boolean;
  is_overdue: boolean;
  due_date: string | null;
  assigned_to: number | null;
  ev_ids: string[];
  trigger_id: number | null;
}

const PRIORITIES = ['low', 'medium', 'high', 'critical'] as const;

type Filter = 'open' | 'overdue' | 'mine' | 'unassigned' | 'all';
const FILTERS: { id: Filter; label: string }[] = [
  { id: 'open', label: 'Open' },
  { id: 'overdue', label: 'Overdue' },
  { id: 'mine', label: 'Mine' },
  { id: 'unassigned', label: 'Unassigned' },
  { id: 'all', label: 'All' },
];

/** The Search page showing one event (the query language has an `ev_id` column). */
export const eventSearchHref = (evId: string) =>
  `/search?${new URLSearchParams({ q: `ev_id:"${evId.replace(/["\\]/g, '\\$&')}"`, range: 'last_30_days' })}`;

function filterQuery(filter: Filter, me: string | null): string {
  switch (filter) {
    case 'open':
      return '&is_open=true';
    case 'overdue':
      return '&is_overdue=true';
    case 'mine':
      return `&is_open=true&assigned_to=${encodeURIComponent(me ?? '')}`;
    case 'unassigned':
      return '&is_open=true&unassigned=true';
    default:
      return '';
  }
}

/** `/tasks`: the team's board, filtered; a new task; close, reopen, assign to me. */
export function TasksPage() {
  const me = useMe();
  const names = useUserNames(me);
  const [filter, setFilter] = useState<Filter>('open');
  // "Mine" waits for the user: an empty assignee would list nothing meaningful.
  const ready = filter !== 'mine' || me !== null;
  const list = useApi<Paginated<Task>>(
    `/api/tasks?page_size=200&ordering=-id${filterQuery(filter, me ? String(me.id) : null)}`,
  );
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState('');
  const [busy, setBusy] = useState(false);

  const change = async (task: Task, patch: Partial<Task>, done: string) => {
    setError(null);
    setBusy(true);
    try {
      await api(`/api/tasks/${task.id}`, { method: 'PATCH', body: patch });
      setNotice(done);
      list.reload();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  const assignee = (id: number | null) =>
    id === null ? <span className="muted">Nobody</span> : (names.get(id) ?? `User #${id}`);

  const data = ready ? list.data : null;
  return (
    <div className="page work-page">
      <h1>Tasks</h1>
      <NewTask
        onCreated={(t) => {
          setNotice(`Created task “${t.title}”.`);
          list.reload();
        }}
      />

      <div className="work-toolbar">
        <fieldset className="segmented">
          <legend className="visually-hidden">Show tasks</legend>
          {FILTERS.map((f) => (
            <button
              key={f.id}
              type="button"
              className="secondary small"
              aria-pressed={filter === f.id}
              onClick={() => setFilter(f.id)}
            >
              {f.label}
            </button>
          ))}
        </fieldset>
        <p role="status" className="muted work-notice">
          {notice}
        </p>
      </div>

      {(error ?? list.error) && (
        <p role="alert" className="error">
          {error ?? list.error}
        </p>
      )}
      {!data && !list.error && <p className="muted">Loading…</p>}
      {data && data.results.length === 0 && (
        <p className="muted">{filter === 'all' ? 'No tasks yet.' : 'No tasks here.'}</p>
      )}
      {data && data.results.length > 0 && (
        <>
          <p className="muted">
            {formatCount(data.count)} {data.count === 1 ? 'task' : 'tasks'}
            {data.count > data.results.length
              ? ` (showing the newest ${formatCount(data.results.length)})`
              : ''}
          </p>
          <div className="table-wrap">
            <table className="list work-table">
              <thead>
                <tr>
                  <th scope="col">Title</th>
                  <th scope="col">Priority</th>
                  <th scope="col">Assignee</th>
                  <th scope="col">Due</th>
                  <th scope="col">Status</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {data.results.map((t) => (
                  <tr key={t.id}>
                    <td>
                      <span className="task-title">{t.title}</span>
                      {t.ev_ids.length > 0 && (
                        <span className="task-events">
                          {t.ev_ids.length === 1 ? 'Event ' : 'Events '}
                          {t.ev_ids.slice(0, 5).map((id) => (
                            <Link key={id} to={eventSearchHref(id)} className="ev-link" title={id}>
                              <code>{id}</code>
                            </Link>
                          ))}
                          {t.ev_ids.length > 5 && ` and ${formatCount(t.ev_ids.length - 5)} more`}
                        </span>
                      )}
                    </td>
                    <td>
                      <span className={`badge prio-${t.priority}`}>{t.priority}</span>
                    </td>
                    <td>{assignee(t.assigned_to)}</td>
                    <td>{t.due_date ? t.due_date.slice(0, 10) : ''}</td>
                    <td>
                      {t.is_open ? (
                        t.is_overdue ? (
                          <span className="status-overdue">Overdue</span>
                        ) : (
                          'Open'
                        )
                      ) : (
                        'Closed'
                      )}
                    </td>
                    <td className="actions-cell">
                      <div className="row-actions">
                        <button
                          type="button"
                          className="secondary small"
                          disabled={busy}
                          aria-label={`${t.is_open ? 'Close' : 'Reopen'} “${t.title}”`}
                          onClick={() =>
                            change(
                              t,
                              { is_open: !t.is_open },
                              `${t.is_open ? 'Closed' : 'Reopened'} “${t.title}”.`,
                            )
                          }
                        >
                          {t.is_open ? 'Close' : 'Reopen'}
                        </button>
                        {me && t.assigned_to !== me.id && (
                          <button
                            type="button"
                            className="secondary small"
                            disabled={busy}
                            aria-label={`Assign “${t.title}” to me`}
                            onClick={() => change(t, { assigned_to: me.id }, `Assigned “${t.title}” to you.`)}
                          >
                            Assign to me
                          </button>
                        )}
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </div>
  );
}

function NewTask({ onCreated }: { onCreated: (t: Task) => void }) {
  const [title, setTitle] = useState('');
  const [priority, setPriority] = useState('medium');
  const [due, setDue] = useState('');
  const [assignee, setAssignee] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const t = await api<Task>('/api/tasks', {
        body: {
          title: title.trim(),
          priority,
          ...(due ? { due_date: due } : {}),
          ...(assignee.trim() ? { assigned_to: assignee.trim() } : {}),
        },
      });
      setTitle('');
      setDue('');
      setAssignee('');
      setPriority('medium');
      onCreated(t);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="work-form" aria-labelledby="new-task-title" onSubmit={submit}>
      <h2 id="new-task-title">New task</h2>
      <div className="field grow">
        <label htmlFor="task-title">Title</label>
        <input
          id="task-title"
          required
          maxLength={200}
          value={title}
          onChange={(e) => setTitle(e.target.value)}
        />
      </div>
      <div className="field">
        <label htmlFor="task-priority">Priority</label>
        <select id="task-priority" value={priority} onChange={(e) => setPriority(e.target.value)}>
          {PRIORITIES.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="task-due">Due date</label>
        <input id="task-due" type="date" value={due} onChange={(e) => setDue(e.target.value)} />
      </div>
      <div className="field">
        <label htmlFor="task-assignee">Assignee</label>
        <input
          id="task-assignee"
          placeholder="username"
          autoComplete="off"
          value={assignee}
          onChange={(e) => setAssignee(e.target.value)}
        />
      </div>
      <button type="submit" disabled={busy || !title.trim()}>
        Create task
      </button>
      {error && (
        <p role="alert" className="error form-error">
          {error}
        </p>
      )}
    </form>
  );
}
