import { useEffect, useState } from 'react';
import { api, type Paginated, type Schemas } from '../../api';
import { Field, Form, FormActions, Select } from '../../components/Field';
import { ErrorBanner, Feedback, Page, SmallButton } from '../../components/feedback';
import { type Column, ListTable } from '../../components/ListTable';
import { useAction } from '../../components/useAction';
import { useForm } from '../../components/useForm';
import { useListPage } from '../../components/useListPage';
import { formatTs } from '../../format';
import { useApi } from '../../useApi';
import '../tasks/work.css';

/** A channel, its `config` (an open object in the document) as each type has it. */
export type Channel = Omit<Schemas['Channel'], 'config'> & {
  config: { url?: string; to?: string[]; secret?: string; headers?: Record<string, string> };
};

/** A delivery, what the history shows of its `payload` (an open object in the document). */
type Delivery = Omit<Schemas['Delivery'], 'payload'> & {
  payload: {
    kind?: string;
    trigger?: { name?: string } | null;
    count?: number;
    group?: Record<string, unknown>;
  };
};

const TYPES = [
  { value: 'webhook', label: 'Webhook (JSON POST)' },
  { value: 'slack', label: 'Slack incoming webhook' },
  { value: 'email', label: 'Email' },
];

const isoSeconds = (iso: string | null) => (iso ? formatTs(Date.parse(iso) / 1000) : '—');
const target = (c: Channel) => (c.type === 'email' ? (c.config.to ?? []).join(', ') : (c.config.url ?? ''));

/** `/alerting`: the channels triggers notify (made, tested, deleted) and the delivery history. */
export function AlertingPage() {
  const { list, act, remove, created } = useListPage<Channel>('/api/channels?page_size=200');
  const [outcome, setOutcome] = useState<Record<number, string>>({});
  const [editing, setEditing] = useState<Channel | null>(null);

  const test = (c: Channel) =>
    act.run(async () => {
      setOutcome((o) => ({ ...o, [c.id]: 'Sending…' }));
      const r = await api<{ sent: boolean; error: string | null; duration_ms: number }>(
        `/api/channels/${c.id}/test`,
        { method: 'POST' },
      );
      setOutcome((o) => ({
        ...o,
        [c.id]: r.sent ? `Sent in ${r.duration_ms} ms.` : `Not sent: ${r.error ?? 'failed'}.`,
      }));
    });

  const columns: Column<Channel>[] = [
    { header: 'Name', cell: (c) => c.name },
    { header: 'Type', cell: (c) => c.type },
    { header: 'Sends to', wide: true, className: 'query-cell', cell: (c) => <code>{target(c)}</code> },
    {
      header: 'Test',
      cell: (c) => (
        <span role="status" className="muted">
          {outcome[c.id] ?? ''}
        </span>
      ),
    },
  ];

  return (
    <Page title="Alerting" className="work-page">
      {editing ? (
        <ChannelForm
          key={editing.id}
          editing={editing}
          onCancel={() => setEditing(null)}
          onSaved={(c) => {
            setEditing(null);
            created(() => `Saved channel “${c.name}”.`)(c);
          }}
        />
      ) : (
        <ChannelForm key="new" onSaved={created((c: Channel) => `Created channel “${c.name}”.`)} />
      )}
      <Feedback action={act} error={list.error} noticeClassName="work-notice" />
      <h2>Channels</h2>
      <ListTable
        list={list}
        columns={columns}
        noun={['channel', 'channels']}
        empty="No channels yet: make one above, then choose it in a trigger's Notify."
        className="work-table"
        actions={(c) => (
          <>
            <SmallButton aria-label={`Send a test to “${c.name}”`} onClick={() => test(c)}>
              Test
            </SmallButton>
            <SmallButton aria-label={`Edit “${c.name}”`} onClick={() => setEditing(c)}>
              Edit
            </SmallButton>
            <SmallButton
              aria-label={`Delete “${c.name}”`}
              onClick={() =>
                remove(
                  `Delete the channel “${c.name}” and its delivery history?`,
                  `/api/channels/${c.id}`,
                  `Deleted “${c.name}”.`,
                )
              }
            >
              Delete
            </SmallButton>
          </>
        )}
      />
      <Deliveries channels={list.data?.results ?? []} />
    </Page>
  );
}

/** What the API answers for a kept secret; sent back, it keeps the secret. */
const KEPT_SECRET = '********';

/** A new channel, or (`editing`) changes to one; a webhook's secret is kept unless replaced. */
function ChannelForm({
  editing,
  onSaved,
  onCancel,
}: {
  editing?: Channel;
  onSaved: (c: Channel) => void;
  onCancel?: () => void;
}) {
  const form = useForm({
    name: editing?.name ?? '',
    type: editing?.type ?? 'webhook',
    url: editing?.config.url ?? '',
    to: (editing?.config.to ?? []).join(', '),
    secret: '',
  });
  const { name, type, url, to, secret } = form.values;
  const hasSecret = editing?.type === 'webhook' && Boolean(editing.config.secret);
  const act = useAction();
  const submit = () =>
    act.run(async () => {
      const keep = type === 'webhook' && !secret && hasSecret ? { secret: KEPT_SECRET } : {};
      // Headers have no field here: an edited webhook keeps the ones it has.
      const headers =
        type === 'webhook' && editing?.config.headers ? { headers: editing.config.headers } : {};
      const config =
        type === 'email'
          ? {
              to: to
                .split(/[,\s]+/)
                .map((a) => a.trim())
                .filter(Boolean),
            }
          : { url: url.trim(), ...headers, ...(type === 'webhook' && secret ? { secret } : keep) };
      const body = { name: name.trim(), type, config };
      const c = editing
        ? await api<Channel>(`/api/channels/${editing.id}`, { method: 'PATCH', body })
        : await api<Channel>('/api/channels', { body });
      if (!editing) form.reset();
      onSaved(c);
    });
  const error = (key: string) => act.fieldError(`config.${key}`) ?? act.fieldError(`config.${key}[0]`);
  return (
    <Form title={editing ? `Edit channel “${editing.name}”` : 'New channel'} onSubmit={submit}>
      <Field label="Name" id="channel-name" error={act.fieldError('name')}>
        <input required maxLength={200} {...form.text('name')} />
      </Field>
      <Field label="Type" id="channel-type">
        <Select options={TYPES} {...form.text('type')} />
      </Field>
      {type === 'email' ? (
        <Field label="Recipients" id="channel-to" className="grow" error={error('to')}>
          <input placeholder="oncall@example.com, ops@example.com" {...form.text('to')} />
        </Field>
      ) : (
        <Field label="URL" id="channel-url" className="grow" error={error('url')}>
          <input
            type="url"
            className="mono"
            placeholder="https://hooks.example.com/…"
            {...form.text('url')}
          />
        </Field>
      )}
      {type === 'webhook' && (
        <Field
          label="Secret"
          id="channel-secret"
          hint={
            hasSecret
              ? 'Set: leave empty to keep it, or type a new one.'
              : 'Optional: signs each body (X-Logscope-Signature: sha256=…).'
          }
          error={error('secret')}
        >
          <input type="password" autoComplete="new-password" {...form.text('secret')} />
        </Field>
      )}
      <FormActions
        submit={editing ? 'Save changes' : 'Create channel'}
        busy={act.busy}
        disabled={!name.trim() || (type === 'email' ? !to.trim() : !url.trim())}
        {...(onCancel ? { onCancel } : {})}
      />
      <ErrorBanner error={act.error} className="form-error" />
    </Form>
  );
}

const STATUSES = [
  { value: '', label: 'Any status' },
  { value: 'pending', label: 'Pending' },
  { value: 'sent', label: 'Sent' },
  { value: 'failed', label: 'Failed' },
];

/** The newest deliveries, refreshed every 5 s. */
function Deliveries({ channels }: { channels: Channel[] }) {
  const [status, setStatus] = useState('');
  const list = useApi<Paginated<Delivery>>(
    `/api/deliveries?page_size=100${status ? `&status=${status}` : ''}`,
  );
  const { reload } = list;
  useEffect(() => {
    const timer = setInterval(reload, 5000);
    return () => clearInterval(timer);
  }, [reload]);
  const channelName = (id: number) => channels.find((c) => c.id === id)?.name ?? `#${id}`;
  const columns: Column<Delivery>[] = [
    { header: 'Made', cell: (d) => isoSeconds(d.created_at) },
    { header: 'Trigger', cell: (d) => d.payload.trigger?.name ?? (d.trigger_id ? `#${d.trigger_id}` : '—') },
    { header: 'Channel', cell: (d) => channelName(d.channel_id) },
    { header: 'Status', cell: (d) => <span className={`badge delivery-${d.status}`}>{d.status}</span> },
    { header: 'Attempts', cell: (d) => d.attempts },
    {
      header: 'Last error / next try',
      wide: true,
      cell: (d) =>
        d.status === 'sent'
          ? `Sent ${isoSeconds(d.sent_at)}`
          : [d.last_error, d.next_attempt_at ? `next try ${isoSeconds(d.next_attempt_at)}` : null]
              .filter(Boolean)
              .join('; ') || '—',
    },
  ];
  return (
    <section aria-labelledby="deliveries-heading">
      <h2 id="deliveries-heading">Delivery history</h2>
      <Field label="Status" id="delivery-status" className="delivery-filter">
        <Select options={STATUSES} value={status} onChange={(e) => setStatus(e.target.value)} />
      </Field>
      <ErrorBanner error={list.error} />
      <ListTable
        list={list}
        columns={columns}
        noun={['delivery', 'deliveries']}
        shown="newest"
        empty="No notifications yet."
        className="work-table"
      />
    </section>
  );
}
