import { useEffect, useState } from 'react';
import { api } from '../../api';
import { Dialog } from '../../components/Dialog';
import { Field, Form, FormActions, Select } from '../../components/Field';
import { ErrorBanner } from '../../components/feedback';
import { Menu, type MenuEntry } from '../../components/Menu';
import { useAction } from '../../components/useAction';
import { useForm } from '../../components/useForm';
import { Link } from '../../router';
import { useMe } from '../../useMe';
import { MetricDialog } from '../log-metrics/MetricForm';
import { withStream } from '../search/StreamPicker';
import type { TableChart } from '../search/TableView';
import { CreateTriggerDialog } from '../triggers/CreateTriggerDialog';
import { searchPart } from '../triggers/trigger-preview';
import { browserTimeZone, downloadFile, FORMATS } from './download';
import { type DashboardItem, FormatField, type Report, useDashboards } from './ReportsPage';
import '../tasks/work.css';

/** What the search page shows: the query, its pinned window and the preset it came from. */
export interface ShownSearch {
  /** The finished (or stopped) Search's id, null while none. */
  qid: string | null;
  query: string;
  window: { ts_from: number; ts_to: number } | null;
  preset: string;
  /** A query with pipes: it is a Table, shown as this chart (what a widget of it shows). */
  chart?: TableChart;
  /** The Patterns tab is shown: a widget or report of the search's patterns. */
  patterns?: boolean;
}

type TimeRangeParam = { ts_from: number; ts_to: number } | { preset: string };

/**
 * The query a report or widget of what the page shows runs: the Table of a query with
 * pipes, the Patterns of the Patterns tab (new ones against as long a period just before),
 * or the newest events.
 */
function shownQuery(props: ShownSearch, time_range: TimeRangeParam, pageSize?: number) {
  if (props.chart) return { type: 'Table', params: { query: props.query, time_range } };
  if (props.patterns)
    return {
      type: 'Patterns',
      params: {
        query: props.query,
        time_range,
        n: 20,
        compare_to:
          'preset' in time_range
            ? time_range
            : { ts_from: 2 * time_range.ts_from - time_range.ts_to, ts_to: time_range.ts_from },
      },
    };
  return {
    type: 'Search',
    params: { query: props.query, time_range, sort: ['-ts'], ...(pageSize ? { page_size: pageSize } : {}) },
  };
}

/** How often a report being generated is read again. */
const REPORT_POLL_MS = 1500;

const describe = (query: string) => (query.trim() ? query.trim().slice(0, 150) : 'All events');

/**
 * The search page's actions on its results: Export (a menu: a file of the Search now, or a
 * report generated in the background), Add to dashboard (a Search table widget) and, for
 * admins and holders of manage_triggers, Create trigger (a threshold on the search's query);
 * Create metric (a log metric counting the search's matches).
 */
export function SearchActions(props: ShownSearch) {
  const [dialog, setDialog] = useState<'report' | 'dashboard' | 'trigger' | 'metric' | null>(null);
  const act = useAction();
  const { qid } = props;
  const me = useMe();
  const mayTrigger = !!me && (me.is_admin || me.permissions.includes('manage_triggers'));

  const exportAs = (ftype: string) =>
    act.run(
      () => {
        const qs = new URLSearchParams({ ftype, timezone: browserTimeZone() });
        return downloadFile(`/api/query/${encodeURIComponent(qid ?? '')}/export?${qs}`, `search.${ftype}`);
      },
      { failure: 'Export failed' },
    );

  const items: MenuEntry[] = [
    ...FORMATS.map((f) => ({ label: f.label, disabled: !qid, onSelect: () => void exportAs(f.ftype) })),
    'separator',
    { label: 'Report…', onSelect: () => setDialog('report') },
  ];

  return (
    <div className="search-actions">
      {act.error && (
        <span role="alert" className="error small-text">
          {act.error}
        </span>
      )}
      <Menu label={act.busy ? 'Exporting…' : 'Export'} disabled={act.busy} items={items} />
      <button type="button" className="secondary small" onClick={() => setDialog('dashboard')}>
        Add to dashboard
      </button>
      {mayTrigger && (
        <button type="button" className="secondary small" onClick={() => setDialog('trigger')}>
          Create trigger…
        </button>
      )}
      <button type="button" className="secondary small" onClick={() => setDialog('metric')}>
        Create metric
      </button>
      {dialog === 'report' && <ReportDialog {...props} onClose={() => setDialog(null)} />}
      {dialog === 'dashboard' && <DashboardDialog {...props} onClose={() => setDialog(null)} />}
      {dialog === 'trigger' && <CreateTriggerDialog query={props.query} onClose={() => setDialog(null)} />}
      {dialog === 'metric' && (
        // A metric counts matching events: the search's pipes and `stream:` terms are left out.
        <MetricDialog query={withStream(searchPart(props.query), null)} onClose={() => setDialog(null)} />
      )}
    </div>
  );
}

function ReportDialog(props: ShownSearch & { onClose: () => void }) {
  const form = useForm(() => ({
    ftype: 'pdf',
    title: `Search: ${describe(props.query)}`.slice(0, 200),
    timezone: browserTimeZone(),
  }));
  const { ftype, title, timezone } = form.values;
  const act = useAction();
  const [made, setMade] = useState<Report | null>(null);

  // The notice follows the report: read again while it is being generated (a read that
  // fails is tried again at the next tick).
  const pendingId = made?.status === 'PENDING' ? made.id : null;
  useEffect(() => {
    if (pendingId === null) return;
    const ctl = new AbortController();
    const timer = setInterval(() => {
      api<Report>(`/api/reports/${pendingId}`, { signal: ctl.signal })
        .then(setMade)
        .catch(() => {});
    }, REPORT_POLL_MS);
    return () => {
      clearInterval(timer);
      ctl.abort();
    };
  }, [pendingId]);

  const download = (r: Report) =>
    act.run(() => downloadFile(`/api/reports/${r.id}/file`, r.filename), {
      done: (name) => `Downloaded ${name}.`,
    });

  const submit = () =>
    act.run(async () => {
      const r = await api<Report>('/api/reports', {
        body: {
          ftype,
          title: title.trim() || undefined,
          timezone: timezone.trim() || 'UTC',
          source: {
            kind: 'query',
            query: shownQuery(props, props.window ?? { preset: props.preset }),
          },
        },
      });
      setMade(r);
    });

  return (
    <Dialog label="Report" onClose={props.onClose}>
      <Form className="" onSubmit={submit}>
        <h2>Report of this search</h2>
        <p className="muted">
          Generated in the background from <code>{describe(props.query)}</code> over the searched time range.
        </p>
        <FormatField {...form.text('ftype')} />
        <Field label="Title" error={act.fieldError('title')}>
          <input maxLength={200} {...form.text('title')} />
        </Field>
        <Field label="Time zone" error={act.fieldError('timezone')}>
          <input {...form.text('timezone')} />
        </Field>
        <ErrorBanner error={act.error} />
        <p role="status">
          {made?.status === 'READY' ? (
            <>
              “{made.title}” is ready.{' '}
              <button type="button" className="small" onClick={() => download(made)}>
                Download
              </button>
            </>
          ) : made?.status === 'ERROR' ? (
            `“${made.title}” failed${made.error ? `: ${made.error}` : '.'}`
          ) : made ? (
            `Generating “${made.title}”…`
          ) : null}
          {made && (
            <>
              {' '}
              <Link to="/reports">Open Reports</Link>
            </>
          )}
          {act.notice && ` ${act.notice}`}
        </p>
        <FormActions
          submit={made ? undefined : 'Create report'}
          busy={act.busy}
          onCancel={props.onClose}
          cancel={made ? 'Close' : 'Cancel'}
        />
      </Form>
    </Dialog>
  );
}

function DashboardDialog(props: ShownSearch & { onClose: () => void }) {
  const form = useForm(() => ({ picked: '', title: describe(props.query).slice(0, 200) }));
  const { picked, title } = form.values;
  const { list, boards, chosen, options } = useDashboards(picked);
  const act = useAction();
  const [added, setAdded] = useState<{ dashboard: DashboardItem; title: string } | null>(null);

  const submit = () => {
    const dashboard = boards.find((d) => String(d.id) === chosen);
    if (!dashboard) return;
    void act.run(async () => {
      const w = await api<{ id: number; title: string }>(`/api/dashboards/${dashboard.id}/widgets`, {
        body: {
          title: title.trim() || 'Search',
          // A query with pipes stays one, as a Table widget drawn as its chart; the
          // Patterns tab is a Patterns widget, drawn as its list.
          query: shownQuery(props, { preset: props.preset }, 50),
          visualization: props.chart
            ? { kind: props.chart.kind, options: props.chart.value ? { value: props.chart.value } : {} }
            : { kind: props.patterns ? 'list' : 'table', options: {} },
        },
      });
      setAdded({ dashboard, title: w.title });
    });
  };

  return (
    <Dialog label="Add to dashboard" onClose={props.onClose}>
      <Form className="" onSubmit={submit}>
        <h2>Add to dashboard</h2>
        <p className="muted">
          {props.chart ? (
            <>
              The {props.chart.kind === 'table' ? 'table' : `${props.chart.kind} chart`} of{' '}
              <code>{describe(props.query)}</code>, pipes included, following the time range preset.
            </>
          ) : props.patterns ? (
            <>
              The 20 most common patterns of <code>{describe(props.query)}</code>, following the time range
              preset, those new since as long a period before marked.
            </>
          ) : (
            <>
              A table of the newest events of <code>{describe(props.query)}</code>, following the time range
              preset.
            </>
          )}
        </p>
        {list.data && boards.length === 0 ? (
          <p>
            You have no dashboards yet. <Link to="/dashboards">Create one</Link> first.
          </p>
        ) : (
          <Field label="Dashboard">
            <Select value={chosen} options={options} onChange={(e) => form.set('picked', e.target.value)} />
          </Field>
        )}
        <Field label="Widget title" error={act.fieldError('title')}>
          <input required maxLength={200} {...form.text('title')} />
        </Field>
        <ErrorBanner error={act.error ?? list.error} />
        <p role="status">
          {added && (
            <>
              Added “{added.title}” to{' '}
              <Link to={`/dashboards/${added.dashboard.id}`}>{added.dashboard.title}</Link>.
            </>
          )}
        </p>
        <FormActions
          submit={added ? undefined : 'Add widget'}
          busy={act.busy}
          disabled={!chosen}
          onCancel={props.onClose}
          cancel={added ? 'Close' : 'Cancel'}
        />
      </Form>
    </Dialog>
  );
}
