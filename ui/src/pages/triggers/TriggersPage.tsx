import { useEffect, useState } from 'react';
import { api, errorText, type GenericQuery, isAbort, isFinal, type Schemas } from '../../api';
import { ErrorBanner, Feedback, Page, SmallButton } from '../../components/feedback';
import { type Column, ListTable } from '../../components/ListTable';
import { useListPage } from '../../components/useListPage';
import { formatCount, formatTs } from '../../format';
import { Link, useLocation } from '../../router';
import { eventSearchHref } from '../tasks/TasksPage';
import { TriggerForm } from './TriggerForm';
import { type Condition, describeCondition } from './trigger-condition';
import '../tasks/work.css';

/** A trigger; its condition as the server answers it (trigger-condition.ts). */
export type Trigger = Omit<Schemas['Trigger'], 'condition'> & { condition: Condition };

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
