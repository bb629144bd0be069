import { useState } from 'react';
import { api, type Schemas } from '../../api';
import { Field, Form, FormActions, Select } from '../../components/Field';
import { ErrorBanner, Notice, Page, SmallButton } from '../../components/feedback';
import { type Column, ListTable } from '../../components/ListTable';
import { useAction } from '../../components/useAction';
import { useForm } from '../../components/useForm';
import { useListPage } from '../../components/useListPage';
import { formatCount } from '../../format';
import { Link } from '../../router';
import { useMe, useUserNames } from '../../useMe';
import './work.css';

export type Task = Schemas['Task'];

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
  const { list, act, created } = useListPage<Task>(
    `/api/tasks?page_size=200&ordering=-id${filterQuery(filter, me ? String(me.id) : null)}`,
  );

  const change = (task: Task, patch: Partial<Task>, done: string) =>
    act.run(
      async () => {
        await api(`/api/tasks/${task.id}`, { method: 'PATCH', body: patch });
        list.reload();
      },
      { done },
    );

  const columns: Column<Task>[] = [
    { header: 'Title', cell: (t) => <TaskTitle task={t} /> },
    { header: 'Priority', cell: (t) => <span className={`badge prio-${t.priority}`}>{t.priority}</span> },
    {
      header: 'Assignee',
      cell: (t) =>
        t.assigned_to === null ? (
          <span className="muted">Nobody</span>
        ) : (
          (names.get(t.assigned_to) ?? `User #${t.assigned_to}`)
        ),
    },
    { header: 'Due', cell: (t) => (t.due_date ? t.due_date.slice(0, 10) : '') },
    {
      header: 'Status',
      cell: (t) =>
        !t.is_open ? 'Closed' : t.is_overdue ? <span className="status-overdue">Overdue</span> : 'Open',
    },
  ];

  return (
    <Page title="Tasks" className="work-page">
      <NewTask onCreated={created((t) => `Created task “${t.title}”.`)} />

      <div className="work-toolbar">
        <fieldset className="segmented">
          <legend className="visually-hidden">Show tasks</legend>
          {FILTERS.map((f) => (
            <SmallButton key={f.id} aria-pressed={filter === f.id} onClick={() => setFilter(f.id)}>
              {f.label}
            </SmallButton>
          ))}
        </fieldset>
        <Notice className="work-notice">{act.notice}</Notice>
      </div>

      <ErrorBanner error={act.error ?? list.error} />
      <ListTable
        list={{ data: ready ? list.data : null, error: list.error }}
        columns={columns}
        noun={['task', 'tasks']}
        shown="newest"
        empty={filter === 'all' ? 'No tasks yet.' : 'No tasks here.'}
        className="work-table"
        actions={(t) => (
          <>
            <SmallButton
              disabled={act.busy}
              aria-label={`${t.is_open ? 'Close' : 'Reopen'} “${t.title}”`}
              onClick={() =>
                change(t, { is_open: !t.is_open }, `${t.is_open ? 'Closed' : 'Reopened'} “${t.title}”.`)
              }
            >
              {t.is_open ? 'Close' : 'Reopen'}
            </SmallButton>
            {me && t.assigned_to !== me.id && (
              <SmallButton
                disabled={act.busy}
                aria-label={`Assign to me: “${t.title}”`}
                onClick={() => change(t, { assigned_to: me.id }, `Assigned “${t.title}” to you.`)}
              >
                Assign to me
              </SmallButton>
            )}
          </>
        )}
      />
    </Page>
  );
}

/** A task's title and links to its events. */
function TaskTitle({ task: t }: { task: Task }) {
  return (
    <>
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
    </>
  );
}

function NewTask({ onCreated }: { onCreated: (t: Task) => void }) {
  const form = useForm({ title: '', priority: 'medium', due: '', assignee: '' });
  const act = useAction();
  const { title, priority, due, assignee } = form.values;

  const submit = () =>
    act.run(async () => {
      const t = await api<Task>('/api/tasks', {
        body: {
          title: title.trim(),
          priority,
          ...(due ? { due_date: due } : {}),
          ...(assignee.trim() ? { assigned_to: assignee.trim() } : {}),
        },
      });
      form.reset();
      onCreated(t);
    });

  return (
    <Form title="New task" onSubmit={submit}>
      <Field label="Title" id="task-title" className="grow" error={act.fieldError('title')}>
        <input required maxLength={200} {...form.text('title')} />
      </Field>
      <Field label="Priority" id="task-priority" error={act.fieldError('priority')}>
        <Select options={PRIORITIES} {...form.text('priority')} />
      </Field>
      <Field label="Due date" id="task-due" error={act.fieldError('due_date')}>
        <input type="date" {...form.text('due')} />
      </Field>
      <Field label="Assignee" id="task-assignee" error={act.fieldError('assigned_to')}>
        <input placeholder="username" autoComplete="off" {...form.text('assignee')} />
      </Field>
      <FormActions submit="Create task" busy={act.busy} disabled={!title.trim()} />
      <ErrorBanner error={act.error} className="form-error" />
    </Form>
  );
}
