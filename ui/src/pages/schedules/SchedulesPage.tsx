import { useEffect, useState } from 'react';
import { api } from '../../api';
import { Feedback, Page, SmallButton } from '../../components/feedback';
import { type Column, ListTable } from '../../components/ListTable';
import { useListPage } from '../../components/useListPage';
import { Link } from '../../router';
import { ScheduleForm, useSources } from './ScheduleForm';
import { formatInZone, type Schedule, useCronDescriptions, viewerZone } from './schedule-times';
import '../tasks/work.css';
import './schedules.css';

const POLL_MS = 1500;
const FORMAT_NAMES: Record<Schedule['format'], string> = {
  pdf: 'PDF',
  xlsx: 'xlsx',
  docx: 'docx',
  csv: 'CSV',
};

/** A run's deliveries in a few words: "Sent to 2 of 3 channels". */
const deliveredText = (deliveries: NonNullable<Schedule['last_run']>['deliveries']) => {
  const sent = deliveries.filter((d) => d.status === 'sent').length;
  const failed = deliveries.filter((d) => d.status === 'failed').length;
  const n = deliveries.length;
  return `Sent to ${sent} of ${n} channel${n === 1 ? '' : 's'}${failed ? `, ${failed} failed` : ''}`;
};

/** Where a schedule's reports are listed. */
export const scheduleReportsHref = (s: Schedule) => `/reports?schedule=${s.id}`;

/**
 * `/schedules`: your report schedules (a dashboard or saved search rendered on a cron and
 * delivered), a new one, changes, runs now; refreshed while a run is going.
 */
export function SchedulesPage() {
  const { list, act, remove, created } = useListPage<Schedule>('/api/schedules?page_size=200&ordering=name');
  const { reload } = list;
  const [open, setOpen] = useState<Schedule | 'new' | null>(null);
  const sources = useSources();
  const rows = list.data?.results ?? [];
  const description = useCronDescriptions(rows);
  const mine = viewerZone();

  const running = rows.some((s) => s.last_run?.status === 'running');
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(reload, POLL_MS);
    return () => clearInterval(timer);
  }, [running, reload]);

  const toggle = (s: Schedule) =>
    act.run(
      async () => {
        await api(`/api/schedules/${s.id}`, { method: 'PATCH', body: { enabled: !s.enabled } });
        reload();
      },
      { done: `${s.enabled ? 'Disabled' : 'Enabled'} “${s.name}”.` },
    );
  const runNow = (s: Schedule) =>
    act.run(
      async () => {
        await api(`/api/schedules/${s.id}/run`, { method: 'POST' });
        reload();
      },
      { done: `Started a run of “${s.name}”.` },
    );

  const columns: Column<Schedule>[] = [
    {
      header: 'Name',
      cell: (s) => (
        <>
          <span className="schedule-name">{s.name}</span>
          {s.description && <span className="muted small-text schedule-note">{s.description}</span>}
        </>
      ),
    },
    {
      header: 'Source',
      wide: true,
      cell: (s) =>
        'dashboard_id' in s.source ? (
          <Link to={`/dashboards/${s.source.dashboard_id}`}>{sources.name(s.source)}</Link>
        ) : (
          sources.name(s.source)
        ),
    },
    { header: 'Format', wide: true, cell: (s) => FORMAT_NAMES[s.format] },
    {
      header: 'Cron',
      className: 'query-cell',
      cell: (s) => (
        <>
          <code>{s.cron}</code>
          <span className="muted small-text schedule-note">{description(s) ?? ''}</span>
        </>
      ),
    },
    { header: 'Time zone', wide: true, cell: (s) => s.time_zone },
    {
      header: 'Next run',
      cell: (s) =>
        s.next_run_at ? (
          <>
            <time dateTime={s.next_run_at}>{formatInZone(s.next_run_at, s.time_zone)}</time>
            {mine !== s.time_zone && (
              <span className="muted small-text schedule-note schedule-when">
                {formatInZone(s.next_run_at)} your time
              </span>
            )}
          </>
        ) : (
          <span className="muted">— (disabled)</span>
        ),
    },
    {
      header: 'Last run',
      cell: (s) =>
        s.last_run ? (
          <>
            <span className={`status-badge run-${s.last_run.status}`}>{s.last_run.status}</span>{' '}
            {s.last_run.report_id !== null && (
              <Link to={scheduleReportsHref(s)} aria-label={`Reports of “${s.name}”`}>
                reports
              </Link>
            )}
            <span className="muted small-text schedule-note">
              {s.last_run.trigger === 'manual' ? 'By hand' : 'On schedule'} {formatInZone(s.last_run.at)}
            </span>
            {s.last_run.deliveries.length > 0 && (
              <span className="muted small-text schedule-note">{deliveredText(s.last_run.deliveries)}</span>
            )}
            {s.last_run.error && <span className="error-text schedule-note">{s.last_run.error}</span>}
          </>
        ) : (
          <span className="muted">Not run yet</span>
        ),
    },
    {
      header: 'Enabled',
      cell: (s) => (
        <label className="inline-check">
          <input type="checkbox" checked={s.enabled} onChange={() => toggle(s)} />
          <span className="visually-hidden">Enabled: {s.name}</span>
          <span aria-hidden="true">{s.enabled ? 'Yes' : 'No'}</span>
        </label>
      ),
    },
  ];

  return (
    <Page title="Schedules" className="work-page">
      <p className="muted">
        A schedule renders a dashboard or a saved search as a report on a cron, as you, keeps it among your{' '}
        <Link to="/reports">reports</Link> and sends it to your channels.
      </p>
      {open === null ? (
        <div className="work-toolbar">
          <button type="button" onClick={() => setOpen('new')}>
            New schedule
          </button>
        </div>
      ) : (
        <ScheduleForm
          key={open === 'new' ? 'new' : open.id}
          {...(open === 'new' ? {} : { editing: open })}
          onCancel={() => setOpen(null)}
          onSaved={(s) => {
            setOpen(null);
            created(() => `${open === 'new' ? 'Created' : 'Saved'} schedule “${s.name}”.`)(s);
          }}
        />
      )}
      <Feedback action={act} error={list.error} noticeClassName="work-notice" />
      <ListTable
        list={list}
        columns={columns}
        noun={['schedule', 'schedules']}
        empty="No schedules yet."
        className="work-table schedules-table"
        actions={(s) => (
          <>
            <SmallButton
              aria-label={`Run now: “${s.name}”`}
              disabled={s.last_run?.status === 'running'}
              onClick={() => runNow(s)}
            >
              Run now
            </SmallButton>
            <SmallButton aria-label={`Edit “${s.name}”`} onClick={() => setOpen(s)}>
              Edit
            </SmallButton>
            <SmallButton
              aria-label={`Delete “${s.name}”`}
              onClick={() =>
                remove(
                  `Delete the schedule “${s.name}”? Its reports stay.`,
                  `/api/schedules/${s.id}`,
                  `Deleted “${s.name}”.`,
                )
              }
            >
              Delete
            </SmallButton>
          </>
        )}
      />
    </Page>
  );
}
