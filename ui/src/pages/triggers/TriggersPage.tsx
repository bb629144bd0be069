import { useEffect, useState } from 'react';
import { ApiError, api, errorText, type GenericQuery, isAbort, isFinal, type Schemas } from '../../api';
import { Field, Form, FormActions, Select } from '../../components/Field';
import { ErrorBanner, Feedback, Page, SmallButton } from '../../components/feedback';
import { type Column, ListTable } from '../../components/ListTable';
import { useAction } from '../../components/useAction';
import { useForm } from '../../components/useForm';
import { useListPage } from '../../components/useListPage';
import { formatCount, formatTs } from '../../format';
import { Link, useLocation } from '../../router';
import { useApi } from '../../useApi';
import { useMe } from '../../useMe';
import { eventSearchHref } from '../tasks/TasksPage';
import type { Channel } from './AlertingPage';
import '../tasks/work.css';

/**
 * A trigger; its condition as the server answers it, with `group_by` and `warmup_seconds`
 * filled in (the document's schema, shared with requests, has them optional).
 */
type Trigger = Omit<Schemas['Trigger'], 'condition'> & { condition: Condition };

type Op = 'gt' | 'gte' | 'lt' | 'lte';
type Condition =
  | { type: 'match' }
  | { type: 'threshold'; window_seconds: number; op: Op; value: number; group_by: string[] }
  | { type: 'new_pattern'; warmup_seconds: number };

const OP_TEXT: Record<Op, string> = { gt: 'more than', gte: 'at least', lt: 'fewer than', lte: 'at most' };

/** "more than 100 in 5 min per host", or "every match". */
export function describeCondition(c: Condition): string {
  if (c.type === 'match') return 'Every match';
  if (c.type === 'new_pattern')
    return `A new kind of message (after ${c.warmup_seconds % 3600 === 0 ? `${c.warmup_seconds / 3600} h` : `${Math.round(c.warmup_seconds / 60)} min`} of warm-up)`;
  const w = c.window_seconds;
  const window = w % 60 === 0 ? `${w / 60} min` : `${w} s`;
  const per = c.group_by.length ? ` per ${c.group_by.join(', ')}` : '';
  return `${OP_TEXT[c.op][0]?.toUpperCase()}${OP_TEXT[c.op].slice(1)} ${c.value} in ${window}${per}`;
}

type When = 'match' | 'new_pattern' | Op;

const WHEN: { value: When; label: string }[] = [
  { value: 'match', label: 'Every match' },
  { value: 'new_pattern', label: 'A new kind of message (pattern)' },
  { value: 'gt', label: 'More than N in a window' },
  { value: 'gte', label: 'At least N in a window' },
  { value: 'lt', label: 'Fewer than N in a window (silence)' },
  { value: 'lte', label: 'At most N in a window' },
];

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

/**
 * `/triggers`: your triggers, a new one (its query checked as you type), their matches;
 * `/triggers?edit=<id>` opens that trigger in the form (the search page links to it so).
 */
export function TriggersPage() {
  const { list, act, remove, created } = useListPage<Trigger>('/api/triggers?page_size=200');
  const [open, setOpen] = useState<number | null>(null);
  const [editing, setEditing] = useState<Trigger | null>(null);
  const linked = Number(useLocation().search.get('edit'));
  const [opened, setOpened] = useState<number | null>(null);
  const linkedTrigger = list.data?.results.find((t) => t.id === linked);
  if (linkedTrigger && opened !== linked) {
    setOpened(linked);
    setEditing(linkedTrigger);
  }

  const toggle = (t: Trigger) =>
    act.run(
      async () => {
        await api(`/api/triggers/${t.id}`, { method: 'PATCH', body: { enabled: !t.enabled } });
        list.reload();
      },
      { done: `${t.enabled ? 'Disabled' : 'Enabled'} “${t.name}”.` },
    );

  const columns: Column<Trigger>[] = [
    { header: 'Name', cell: (t) => t.name },
    { header: 'Severity', cell: (t) => <span className={`badge prio-${t.severity}`}>{t.severity}</span> },
    { header: 'Query', wide: true, className: 'query-cell', cell: (t) => <code>{t.query}</code> },
    { header: 'Condition', cell: (t) => describeCondition(t.condition) },
    {
      header: 'Action',
      cell: (t) =>
        [
          t.create_task ? 'Opens a task' : t.condition.type === 'match' ? 'Records matches' : '',
          t.notify.length ? `Notifies ${t.notify.length} channel${t.notify.length === 1 ? '' : 's'}` : '',
        ]
          .filter(Boolean)
          .join('; ') || '—',
    },
    {
      header: 'Enabled',
      cell: (t) => (
        <label className="inline-check">
          <input type="checkbox" checked={t.enabled} onChange={() => toggle(t)} />
          <span className="visually-hidden">Enabled: {t.name}</span>
          <span aria-hidden="true">{t.enabled ? 'Yes' : 'No'}</span>
        </label>
      ),
    },
  ];

  return (
    <Page title="Triggers" className="work-page">
      {editing ? (
        <TriggerForm
          key={editing.id}
          editing={editing}
          onCancel={() => setEditing(null)}
          onSaved={(t) => {
            setEditing(null);
            created(() => `Saved trigger “${t.name}”.`)(t);
          }}
        />
      ) : (
        <TriggerForm key="new" onSaved={created((t) => `Created trigger “${t.name}”.`)} />
      )}
      <Feedback action={act} error={list.error} noticeClassName="work-notice" />
      <ListTable
        list={list}
        columns={columns}
        noun={['trigger', 'triggers']}
        empty="No triggers yet."
        className="work-table"
        actions={(t) => (
          <>
            <SmallButton
              aria-expanded={open === t.id}
              aria-controls={open === t.id ? `matches-${t.id}` : undefined}
              onClick={() => setOpen((o) => (o === t.id ? null : t.id))}
            >
              Matches
            </SmallButton>
            <SmallButton aria-label={`Edit “${t.name}”`} onClick={() => setEditing(t)}>
              Edit
            </SmallButton>
            <SmallButton
              aria-label={`Delete “${t.name}”`}
              onClick={() =>
                remove(
                  `Delete the trigger “${t.name}” and its matches?`,
                  `/api/triggers/${t.id}`,
                  `Deleted “${t.name}”.`,
                )
              }
            >
              Delete
            </SmallButton>
          </>
        )}
        after={(t) =>
          open === t.id && (
            <tr className="matches-row" id={`matches-${t.id}`}>
              <td colSpan={columns.length + 1}>
                <Matches trigger={t} />
              </td>
            </tr>
          )
        }
      />
    </Page>
  );
}

type TriggerAction = 'record' | 'task' | 'task-me';
const TRIGGER_ACTIONS: { value: TriggerAction; label: string }[] = [
  { value: 'record', label: 'Record matches' },
  { value: 'task', label: 'Open a task' },
  { value: 'task-me', label: 'Open a task assigned to me' },
];

/** The form's values for a trigger (a new one: the defaults). */
function formValues(t: Trigger | undefined, myId: number | undefined) {
  const c = t?.condition;
  return {
    name: t?.name ?? '',
    query: t?.query ?? '',
    severity: t?.severity ?? 'medium',
    action: (!t?.create_task
      ? 'record'
      : t.assign_to !== null && t.assign_to === myId
        ? 'task-me'
        : 'task') as TriggerAction,
    when: (c?.type === 'threshold' ? c.op : (c?.type ?? 'match')) as When,
    warmupHours: c?.type === 'new_pattern' ? String(c.warmup_seconds / 3600) : '1',
    value: c?.type === 'threshold' ? String(c.value) : '100',
    minutes: c?.type === 'threshold' ? String(c.window_seconds / 60) : '5',
    groupBy: c?.type === 'threshold' ? c.group_by.join(', ') : '',
  };
}

/** A new trigger, or (`editing`) changes to one: its condition and channels included. */
function TriggerForm({
  editing,
  onSaved,
  onCancel,
}: {
  editing?: Trigger;
  onSaved: (t: Trigger) => void;
  onCancel?: () => void;
}) {
  const me = useMe();
  const initial = formValues(editing, me?.id);
  const form = useForm(initial);
  const { name, query, severity, action, when, value, minutes, groupBy, warmupHours } = form.values;
  const channels = useApi<{ results: Channel[] }>('/api/channels?page_size=200');
  const [notify, setNotify] = useState<number[]>(editing?.notify ?? []);
  const [queryError, setQueryError] = useState<string | null>(null);
  const [checking, setChecking] = useState(false);
  const act = useAction();

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

  // The assignee changes only with the action (a task assigned by the API to someone else stays so).
  const assignTo =
    editing && action === initial.action
      ? {}
      : action === 'task-me' && me
        ? { assign_to: me.id }
        : editing
          ? { assign_to: null }
          : {};
  const submit = () =>
    act.run(async () => {
      const t = await api<Trigger>(editing ? `/api/triggers/${editing.id}` : '/api/triggers', {
        ...(editing ? { method: 'PATCH' } : {}),
        body: {
          name: name.trim(),
          query,
          severity,
          create_task: action !== 'record',
          ...assignTo,
          condition:
            when === 'match'
              ? { type: 'match' }
              : when === 'new_pattern'
                ? { type: 'new_pattern', warmup_seconds: Math.round(Number(warmupHours) * 3600) }
                : {
                    type: 'threshold',
                    op: when,
                    value: Number(value),
                    window_seconds: Math.round(Number(minutes) * 60),
                    group_by: groupBy
                      .split(',')
                      .map((f) => f.trim())
                      .filter(Boolean),
                  },
          notify,
        },
      });
      if (!editing) {
        form.reset();
        setNotify([]);
      }
      onSaved(t);
    });

  return (
    <Form title={editing ? `Edit trigger “${editing.name}”` : 'New trigger'} onSubmit={submit}>
      <Field label="Name" id="trigger-name" error={act.fieldError('name')}>
        <input required maxLength={200} {...form.text('name')} />
      </Field>
      <Field
        label="Query"
        id="trigger-query"
        className="grow"
        live
        error={queryError ?? act.fieldError('query')}
      >
        <input
          className="mono"
          spellCheck={false}
          autoComplete="off"
          placeholder="action:login_failure user:root"
          {...form.text('query')}
        />
      </Field>
      <Field label="Severity" id="trigger-severity" error={act.fieldError('severity')}>
        <Select options={SEVERITIES} {...form.text('severity')} />
      </Field>
      <Field label="Action" id="trigger-action">
        <Select options={TRIGGER_ACTIONS} {...form.text('action')} />
      </Field>
      <Field label="Fires on" id="trigger-when" error={act.fieldError('condition')}>
        <Select options={WHEN} {...form.text('when')} />
      </Field>
      {when === 'new_pattern' && (
        <Field
          label="Warm-up (hours)"
          id="trigger-warmup"
          hint="Patterns first seen this soon after the trigger is made are not new to it."
          error={act.fieldError('condition.warmup_seconds')}
        >
          <input type="number" min={0} max={720} step="any" required {...form.text('warmupHours')} />
        </Field>
      )}
      {when !== 'match' && when !== 'new_pattern' && (
        <>
          <Field label="N (events)" id="trigger-value" error={act.fieldError('condition.value')}>
            <input type="number" min={0} required {...form.text('value')} />
          </Field>
          <Field
            label="Window (minutes)"
            id="trigger-window"
            error={act.fieldError('condition.window_seconds')}
          >
            <input type="number" min={0.1} max={1440} step="any" required {...form.text('minutes')} />
          </Field>
          <Field
            label="Per (fields)"
            id="trigger-group"
            hint="Optional, comma-separated: each value counted on its own."
            error={act.fieldError('condition.group_by[0]')}
          >
            <input className="mono" placeholder="host" {...form.text('groupBy')} />
          </Field>
        </>
      )}
      <fieldset className="notify-field">
        <legend>Notify</legend>
        {(channels.data?.results ?? []).length === 0 ? (
          <span className="muted small-text">
            No channels yet (<Link to="/alerting">make one</Link>).
          </span>
        ) : (
          (channels.data?.results ?? []).map((c) => (
            <label key={c.id} className="check">
              <input
                type="checkbox"
                checked={notify.includes(c.id)}
                onChange={(e) =>
                  setNotify((n) => (e.target.checked ? [...n, c.id] : n.filter((x) => x !== c.id)))
                }
              />
              {c.name}
            </label>
          ))
        )}
        {act.fieldError('notify') && <span className="field-error">{act.fieldError('notify')}</span>}
      </fieldset>
      <FormActions
        submit={editing ? 'Save changes' : 'Create trigger'}
        busy={act.busy}
        disabled={!name.trim() || queryError !== null || checking}
        {...(onCancel ? { onCancel } : {})}
      />
      <ErrorBanner error={act.error} className="form-error" />
    </Form>
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
  if (error) return <ErrorBanner error={error} />;
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
