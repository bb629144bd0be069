import { DEFAULT_PRESET, TIME_PRESETS } from '@shared/time-presets';
import { type ChangeEvent, useEffect, useState } from 'react';
import { api, type Paginated, type Schemas } from '../../api';
import { Field, Form, FormActions, Select } from '../../components/Field';
import { ErrorBanner, Feedback, Notice, Page, SmallButton } from '../../components/feedback';
import { type Column, ListTable } from '../../components/ListTable';
import { useAction } from '../../components/useAction';
import { useForm } from '../../components/useForm';
import { useListPage } from '../../components/useListPage';
import { formatIso } from '../../format';
import { Link, useLocation } from '../../router';
import { useApi } from '../../useApi';
import { browserTimeZone, downloadFile, FORMATS } from './download';
import '../tasks/work.css';

export type Report = Schemas['ShortReport'];

export interface DashboardItem {
  id: number;
  title: string;
}

const SOURCES = [
  { value: 'query', label: 'Query' },
  { value: 'dashboard', label: 'Dashboard' },
] as const;

/** The caller's dashboards by title, and the one `picked` (else the first). */
export function useDashboards(picked: string) {
  const list = useApi<Paginated<DashboardItem>>('/api/dashboards?page_size=200&ordering=title');
  const boards = list.data?.results ?? [];
  const chosen = picked || (boards[0] ? String(boards[0].id) : '');
  const options = boards.map((d) => ({ value: d.id, label: d.title }));
  return { list, boards, chosen, options };
}

const POLL_MS = 1500;

const FORMAT_OPTIONS = FORMATS.map((f) => ({ value: f.ftype, label: f.label }));

export const formatSize = (bytes: number) =>
  bytes < 1024
    ? `${bytes} B`
    : bytes < 1024 * 1024
      ? `${(bytes / 1024).toFixed(1)} KB`
      : `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/**
 * `/reports`: your reports (refreshed while any is being generated), a new one, downloads;
 * `/reports?schedule=<id>` only the reports that schedule made.
 */
export function ReportsPage() {
  const schedule = Number(useLocation().search.get('schedule')) || null;
  const { list, act, remove } = useListPage<Report>(
    `/api/reports?page_size=200&ordering=-id${schedule ? `&schedule_id=${schedule}` : ''}`,
  );
  const { reload } = list;
  /** The report made here last: its notice follows its status as the list is refreshed. */
  const [made, setMade] = useState<number | null>(null);
  const latest = list.data?.results.find((r) => r.id === made) ?? null;

  const pending = list.data?.results.some((r) => r.status === 'PENDING') ?? false;
  useEffect(() => {
    if (!pending) return;
    const timer = setInterval(reload, POLL_MS);
    return () => clearInterval(timer);
  }, [pending, reload]);

  const download = (r: Report) =>
    act.run(() => downloadFile(`/api/reports/${r.id}/file`, r.filename), {
      done: (name) => `Downloaded ${name}.`,
    });

  const columns: Column<Report>[] = [
    { header: 'Title', cell: (r) => r.title },
    { header: 'Format', cell: (r) => r.ftype },
    {
      header: 'Status',
      cell: (r) => (
        <>
          <span className={`status-badge status-${r.status}`}>{r.status}</span>
          {r.error && <span className="error-text"> {r.error}</span>}
        </>
      ),
    },
    { header: 'Size', wide: true, cell: (r) => (r.status === 'READY' ? formatSize(r.size) : '') },
    { header: 'Created', wide: true, cell: (r) => formatIso(r.created_at) },
  ];

  return (
    <Page title="Reports" className="work-page">
      {schedule && <ScheduleFilter id={schedule} />}
      <NewReport
        onCreated={(r) => {
          setMade(r.id);
          act.setNotice('');
          reload();
        }}
      />
      {latest && (
        <Notice className="work-notice">
          {latest.status === 'READY' ? (
            <>
              “{latest.title}” is ready.{' '}
              <button type="button" className="small" onClick={() => download(latest)}>
                Download now
              </button>
            </>
          ) : latest.status === 'ERROR' ? (
            `“${latest.title}” failed${latest.error ? `: ${latest.error}` : '.'}`
          ) : (
            `Generating “${latest.title}”…`
          )}
        </Notice>
      )}
      <Feedback action={act} error={list.error} noticeClassName="work-notice" />
      <ListTable
        list={list}
        columns={columns}
        noun={['report', 'reports']}
        empty="No reports yet."
        className="work-table"
        actions={(r) => (
          <>
            {r.status === 'READY' && (
              <button
                type="button"
                className="small"
                aria-label={`Download “${r.title}”`}
                onClick={() => download(r)}
              >
                Download
              </button>
            )}
            <SmallButton
              aria-label={`Delete “${r.title}”`}
              onClick={() =>
                remove(`Delete the report “${r.title}”?`, `/api/reports/${r.id}`, `Deleted “${r.title}”.`)
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

/** Which schedule's reports are shown, and the way back to all of them. */
function ScheduleFilter({ id }: { id: number }) {
  const schedule = useApi<{ name: string }>(`/api/schedules/${id}`);
  return (
    <p className="work-notice">
      Only the reports of the schedule “{schedule.data?.name ?? `#${id}`}”.{' '}
      <Link to="/reports">Show all reports</Link> · <Link to="/schedules">Schedules</Link>
    </p>
  );
}

function NewReport({ onCreated }: { onCreated: (r: Report) => void }) {
  const form = useForm(() => ({
    kind: 'query' as (typeof SOURCES)[number]['value'],
    query: '',
    range: DEFAULT_PRESET as string,
    dashboard: '',
    ftype: 'pdf',
    timezone: browserTimeZone(),
    title: '',
  }));
  const { kind, query, range, dashboard, ftype, timezone, title } = form.values;
  const act = useAction();

  const { options, chosen } = useDashboards(dashboard);

  const submit = () =>
    act.run(async () => {
      const source =
        kind === 'query'
          ? {
              kind: 'query',
              query: { type: 'Search', params: { query, time_range: { preset: range }, sort: ['-ts'] } },
            }
          : { kind: 'dashboard', dashboard_id: Number(chosen) };
      const r = await api<Report>('/api/reports', {
        body: {
          ftype,
          source,
          timezone: timezone.trim() || 'UTC',
          ...(title.trim() ? { title: title.trim() } : {}),
        },
      });
      form.set('title', '');
      onCreated(r);
    });

  return (
    <Form title="New report" onSubmit={submit}>
      <fieldset>
        <legend>Source</legend>
        {SOURCES.map((s) => (
          <label key={s.value}>
            <input
              type="radio"
              name="report-source"
              checked={kind === s.value}
              onChange={() => form.set('kind', s.value)}
            />
            {s.label}
          </label>
        ))}
      </fieldset>
      {kind === 'query' ? (
        <>
          <Field
            label="Query"
            id="report-query"
            className="grow"
            error={act.fieldError('source.query.params.query')}
          >
            <input
              className="mono"
              spellCheck={false}
              autoComplete="off"
              placeholder="Everything"
              {...form.text('query')}
            />
          </Field>
          <Field label="Time range" id="report-range">
            <Select options={TIME_PRESETS} {...form.text('range')} />
          </Field>
        </>
      ) : (
        <Field label="Dashboard" id="report-dashboard" className="grow">
          <Select
            value={chosen}
            disabled={options.length === 0}
            options={options.length ? options : [{ value: '', label: 'No dashboards' }]}
            onChange={(e) => form.set('dashboard', e.target.value)}
          />
        </Field>
      )}
      <FormatField id="report-format" {...form.text('ftype')} />
      <Field label="Time zone" id="report-timezone" error={act.fieldError('timezone')}>
        <input autoComplete="off" spellCheck={false} {...form.text('timezone')} />
      </Field>
      <Field label="Title (optional)" id="report-name" error={act.fieldError('title')}>
        <input maxLength={200} {...form.text('title')} />
      </Field>
      <FormActions submit="Create report" busy={act.busy} disabled={kind === 'dashboard' && !chosen} />
      <ErrorBanner error={act.error} className="form-error" />
    </Form>
  );
}

/** The file format of a report or an export. */
export function FormatField(props: {
  id?: string;
  value: string;
  onChange: (e: ChangeEvent<HTMLSelectElement>) => void;
}) {
  return (
    <Field label="Format" id={props.id}>
      <Select value={props.value} onChange={props.onChange} options={FORMAT_OPTIONS} />
    </Field>
  );
}
