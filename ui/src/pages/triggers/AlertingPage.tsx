import { useEffect, useState } from 'react';
import { api, type Paginated, type Schemas } from '../../api';
import { Field, Select } from '../../components/Field';
import { ErrorBanner, Feedback, Page, SmallButton } from '../../components/feedback';
import { type Column, ListTable } from '../../components/ListTable';
import { useListPage } from '../../components/useListPage';
import { formatTs } from '../../format';
import { useApi } from '../../useApi';
import { ChannelForm, outcomeText, type TestOutcome } from './ChannelForm';
import { type Channel, TYPE_NAMES, target } from './channel-kinds';
import '../tasks/work.css';

export type { Channel } from './channel-kinds';

/** A delivery, what the history shows of its `payload` (an open object in the document). */
type Delivery = Omit<Schemas['Delivery'], 'payload'> & {
  payload: {
    kind?: string;
    trigger?: { name?: string } | null;
    count?: number;
    group?: Record<string, unknown>;
  };
};

const isoSeconds = (iso: string | null) => (iso ? formatTs(Date.parse(iso) / 1000) : '—');

/** `/alerting`: the channels triggers notify (made, tested, deleted) and the delivery history. */
export function AlertingPage() {
  const { list, act, remove, created } = useListPage<Channel>('/api/channels?page_size=200');
  const [outcome, setOutcome] = useState<Record<number, string>>({});
  const [editing, setEditing] = useState<Channel | null>(null);

  const test = (c: Channel) =>
    act.run(async () => {
      setOutcome((o) => ({ ...o, [c.id]: 'Sending…' }));
      const r = await api<TestOutcome>(`/api/channels/${c.id}/test`, { method: 'POST' });
      setOutcome((o) => ({ ...o, [c.id]: outcomeText(r) }));
    });

  const columns: Column<Channel>[] = [
    { header: 'Name', cell: (c) => c.name },
    { header: 'Type', cell: (c) => TYPE_NAMES[c.type].short },
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
    { header: 'Channel type', cell: (d) => TYPE_NAMES[d.channel_type].short },
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
