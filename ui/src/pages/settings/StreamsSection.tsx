import { useEffect, useState } from 'react';
import { api, errorText, isAbort, runQuery, type Schemas, type SearchResults, type User } from '../../api';
import { Dialog } from '../../components/Dialog';
import { Field, Form, FormActions } from '../../components/Field';
import { ErrorBanner, Feedback, SmallButton } from '../../components/feedback';
import { type Column, ListTable } from '../../components/ListTable';
import { useAction } from '../../components/useAction';
import { useListPage } from '../../components/useListPage';
import { formatCount } from '../../format';
import { useApi } from '../../useApi';
import { Pick } from './Pick';
import { Section } from './Section';
import { type StreamTiers, tierLines } from './stream-tiers';
import './streams.css';
import type { Team } from './TeamsSection';

export type Stream = Schemas['Stream'];

/**
 * Admins and manage_streams holders: the streams with their events of the last 24 h and
 * in each tier (GET /api/streams?counts=true), new, edit and delete. Users can be chosen as readers by
 * admins only (only they list users); teams by every manager.
 */
export function StreamsSection({ isAdmin }: { isAdmin: boolean }) {
  const { list, act, remove } = useListPage<Stream>('/api/streams?counts=true');
  const teams = useApi<{ results: Team[] }>('/api/teams?page_size=1000');
  const users = useApi<{ results: User[] }>(
    isAdmin ? '/api/users?page_size=1000&ordering=username' : '/api/users/me',
  );
  const [editing, setEditingState] = useState<Stream | 'new' | null>(null);
  // Teams and users made since the page opened are offered too.
  const setEditing = (s: Stream | 'new' | null) => {
    if (s) {
      teams.reload();
      users.reload();
    }
    setEditingState(s);
  };
  const teamNames = new Map((teams.data?.results ?? []).map((t) => [t.id, t.name]));
  const userList = isAdmin ? (users.data?.results ?? []) : [];
  const userNames = new Map(userList.map((u) => [u.id, u.username]));

  const readers = (s: Stream) => {
    const names = [
      ...s.readers.teams.map((id) => `team ${teamNames.get(id) ?? `#${id}`}`),
      ...s.readers.users.map((id) => userNames.get(id) ?? `user #${id}`),
    ];
    return names.length ? names.join(', ') : <span className="muted">admins only</span>;
  };
  const columns: Column<Stream>[] = [
    { header: 'Stream', cell: (s) => s.title },
    {
      header: 'Rule',
      cell: (s) =>
        s.builtin ? <span className="muted">what no other stream takes</span> : <code>{s.rule}</code>,
    },
    { header: 'Readers', cell: readers },
    {
      header: 'Retention',
      wide: true,
      cell: (s) => (
        <>
          {s.retention_days === null
            ? 'default'
            : s.retention_days === 0
              ? 'forever'
              : `${s.retention_days} days`}
          {s.hot_days !== null && <span className="muted"> · cold after {s.hot_days} days</span>}
        </>
      ),
    },
    {
      header: 'Events (24 h)',
      wide: true,
      // Counted only for the streams the viewer may read (a manager sees them all).
      cell: (s) =>
        s.event_count === undefined ? <span className="muted">—</span> : formatCount(s.event_count),
    },
    {
      header: 'Hot and cold',
      wide: true,
      // Given for the streams the viewer may read, once the cold tier has run a round.
      cell: (s) => (s.tiers ? <Tiers tiers={s.tiers} /> : <span className="muted">—</span>),
    },
  ];

  return (
    <Section title="Streams">
      <p className="muted">
        A stream is a rule over events and who may read them. Users read the streams whose readers name them
        or a team of theirs; admins read everything.
      </p>
      <button type="button" onClick={() => setEditing('new')}>
        New stream
      </button>
      <Feedback action={act} error={list.error} />
      <ListTable
        list={list}
        columns={columns}
        noun={['stream', 'streams']}
        actions={(s) => (
          <>
            <SmallButton aria-label={`Edit stream ${s.title}`} onClick={() => setEditing(s)}>
              Edit
            </SmallButton>
            {!s.builtin && (
              <SmallButton
                aria-label={`Delete stream ${s.title}`}
                onClick={() =>
                  remove(
                    `Delete the stream “${s.title}”? Its events go back to Default.`,
                    `/api/streams/${s.id}`,
                    `Deleted stream “${s.title}”.`,
                  )
                }
              >
                Delete
              </SmallButton>
            )}
          </>
        )}
      />
      {editing && (
        <StreamDialog
          stream={editing === 'new' ? null : editing}
          teams={teams.data?.results ?? []}
          users={userList}
          onClose={() => setEditing(null)}
          onSaved={(s) => {
            act.setNotice(`Saved stream “${s.title}”.`);
            setEditing(null);
            list.reload();
          }}
        />
      )}
    </Section>
  );
}

/** A stream's events and bytes in each tier, as of the cold tier's last round. */
function Tiers({ tiers }: { tiers: StreamTiers }) {
  const lines = tierLines(tiers);
  return (
    <div className="stream-tiers">
      <div>{lines.hot}</div>
      <div className={lines.days ? undefined : 'muted'}>{lines.cold}</div>
      {lines.days && <div>{lines.days}</div>}
      <div className="muted">{lines.asOf}</div>
    </div>
  );
}

/** A rule checked as it is typed: the server parses it and counts its events of the last 24 h. */
function useRuleCheck(rule: string): { count: number | null; error: string | null; checking: boolean } {
  const [state, setState] = useState<{ count: number | null; error: string | null; checking: boolean }>({
    count: null,
    error: null,
    checking: false,
  });
  useEffect(() => {
    const text = rule.trim();
    if (!text) {
      setState({ count: null, error: null, checking: false });
      return;
    }
    const ctl = new AbortController();
    setState((s) => ({ ...s, checking: true }));
    const timer = setTimeout(() => {
      runQuery<SearchResults>(
        { type: 'Search', params: { query: text, time_range: { preset: 'last_24_hours' }, page_size: 1 } },
        { signal: ctl.signal, onUpdate: () => {} },
      )
        .then((q) => setState({ count: q.results.total ?? 0, error: q.error, checking: false }))
        .catch((err) => {
          if (!isAbort(err)) setState({ count: null, error: errorText(err), checking: false });
        });
    }, 400);
    return () => {
      clearTimeout(timer);
      ctl.abort();
    };
  }, [rule]);
  return state;
}

function StreamDialog(props: {
  stream: Stream | null;
  teams: readonly Team[];
  users: readonly User[];
  onClose: () => void;
  onSaved: (s: Stream) => void;
}) {
  const { stream } = props;
  const [title, setTitle] = useState(stream?.title ?? '');
  const [rule, setRule] = useState(stream?.rule ?? '');
  const [description, setDescription] = useState(stream?.description ?? '');
  const [retention, setRetention] = useState(
    stream?.retention_days === null || !stream ? '' : String(stream.retention_days),
  );
  const [hot, setHot] = useState(stream?.hot_days == null ? '' : String(stream.hot_days));
  const [teams, setTeams] = useState<number[]>(stream?.readers.teams ?? []);
  const [users, setUsers] = useState<number[]>(stream?.readers.users ?? []);
  const check = useRuleCheck(stream?.builtin ? '' : rule);
  const act = useAction();
  const name = stream ? `Edit stream “${stream.title}”` : 'New stream';
  const save = () =>
    act.run(async () => {
      const days = (text: string) => (text.trim() === '' ? null : Number(text));
      const body: Record<string, unknown> = { description, readers: { teams, users } };
      // Only what changed, so that a refusal names the field that was changed (hot days
      // above the retention, or a retention below the hot days).
      if (!stream || days(retention) !== stream.retention_days) body.retention_days = days(retention);
      if (!stream || days(hot) !== stream.hot_days) body.hot_days = days(hot);
      if (!stream?.builtin) {
        body.title = title.trim();
        body.rule = rule;
      }
      props.onSaved(
        await api<Stream>(stream ? `/api/streams/${stream.id}` : '/api/streams', {
          method: stream ? 'PATCH' : 'POST',
          body,
        }),
      );
    });
  const ruleHint = check.checking
    ? 'Checking…'
    : check.count !== null
      ? `${formatCount(check.count)} events in the last 24 hours match.`
      : 'The query language, as in a search: app:payments OR app:billing';
  return (
    <Dialog label={name} onClose={props.onClose}>
      <Form title={name} className="" onSubmit={save}>
        {!stream?.builtin && (
          <>
            <Field label="Title" error={act.fieldError('title')}>
              <input required maxLength={200} value={title} onChange={(e) => setTitle(e.target.value)} />
            </Field>
            <Field label="Rule" hint={ruleHint} live error={check.error ?? act.fieldError('rule')}>
              <input required spellCheck={false} value={rule} onChange={(e) => setRule(e.target.value)} />
            </Field>
          </>
        )}
        <Field label="Description" error={act.fieldError('description')}>
          <input maxLength={10_000} value={description} onChange={(e) => setDescription(e.target.value)} />
        </Field>
        <div className="inline-form field-pair">
          <Field
            label="Retention (days)"
            hint="Empty: the server's retentionDays. 0 keeps its events forever."
            error={act.fieldError('retention_days')}
          >
            <input
              type="number"
              min={0}
              max={36_500}
              value={retention}
              onChange={(e) => setRetention(e.target.value)}
            />
          </Field>
          <Field
            label="Hot days"
            hint="Days its events stay in the event store before they move to the cold tier. Empty: never move."
            error={act.fieldError('hot_days')}
          >
            <input type="number" min={1} max={36_500} value={hot} onChange={(e) => setHot(e.target.value)} />
          </Field>
        </div>
        <Pick
          legend="Teams that read it"
          options={props.teams.map((t) => ({ id: t.id, name: t.name }))}
          chosen={teams}
          onChange={setTeams}
        />
        {props.users.length > 0 && (
          <Pick
            legend="Users who read it"
            options={props.users.map((u) => ({ id: u.id, name: u.username }))}
            chosen={users}
            onChange={setUsers}
          />
        )}
        <ErrorBanner
          error={act.error ?? act.fieldError('readers.teams') ?? act.fieldError('readers.users')}
        />
        <FormActions submit="Save" busy={act.busy} onCancel={props.onClose} />
      </Form>
    </Dialog>
  );
}
