import { useState } from 'react';
import { Feedback, Page, SmallButton } from '../../components/feedback';
import { type Column, ListTable } from '../../components/ListTable';
import { useListPage } from '../../components/useListPage';
import { formatCount } from '../../format';
import { Link } from '../../router';
import { useMe, useUserNames } from '../../useMe';
import { AddToDashboardDialog } from './AddToDashboard';
import { BackfillDialog } from './Backfill';
import { type LogMetric, metricHref } from './log-metric';
import { MetricDialog } from './MetricForm';
import '../tasks/work.css';
import './log-metrics.css';

type Open = { kind: 'new' } | { kind: 'edit' | 'backfill' | 'dashboard'; metric: LogMetric } | null;

/**
 * `/log-metrics`: the log metrics you may see (yours and those shared with you), a new
 * one, and per metric Edit, Backfill, Add to dashboard (anyone who sees it) and Delete;
 * its name leads to its page.
 */
export function LogMetricsPage() {
  const { list, act, remove, created } = useListPage<LogMetric>(
    '/api/log-metrics?page_size=200&ordering=name',
  );
  const me = useMe();
  const names = useUserNames(me);
  const [open, setOpen] = useState<Open>(null);
  const close = () => setOpen(null);
  const mayChange = (m: LogMetric) => !!me && (me.is_admin || me.id === m.owner);

  const columns: Column<LogMetric>[] = [
    {
      header: 'Name',
      cell: (m) => (
        <>
          <Link to={metricHref(m.id)} className="metric-name">
            {m.name}
          </Link>
          {m.description && <span className="muted small-text metric-note">{m.description}</span>}
        </>
      ),
    },
    { header: 'Kind', cell: (m) => (m.field ? `${m.kind} of ${m.field}` : m.kind) },
    {
      header: 'Query',
      className: 'query-cell',
      cell: (m) => (m.query ? <code>{m.query}</code> : <span className="muted">every event</span>),
    },
    {
      header: 'Labels',
      wide: true,
      cell: (m) => (m.labels.length ? m.labels.join(', ') : <span className="muted">none</span>),
    },
    { header: 'Series', className: 'num', cell: (m) => formatCount(m.series_count) },
    { header: 'Dropped series', wide: true, className: 'num', cell: (m) => formatCount(m.dropped_series) },
    {
      header: 'Owner',
      wide: true,
      cell: (m) => (m.owner === me?.id ? 'you' : (names.get(m.owner) ?? `User #${m.owner}`)),
    },
  ];

  return (
    <Page title="Metrics" className="work-page">
      <p className="muted">
        A log metric counts the events a query matches, per time bucket and label values, as they arrive: its
        series outlive the events, and Prometheus can scrape them.
      </p>
      <div className="work-toolbar">
        <button type="button" onClick={() => setOpen({ kind: 'new' })}>
          New metric
        </button>
      </div>
      <Feedback action={act} error={list.error} noticeClassName="work-notice" />
      <ListTable
        list={list}
        columns={columns}
        noun={['metric', 'metrics']}
        empty="No metrics yet."
        className="work-table metrics-table"
        actions={(m) => (
          <>
            {mayChange(m) && (
              <>
                <SmallButton
                  aria-label={`Edit “${m.name}”`}
                  onClick={() => setOpen({ kind: 'edit', metric: m })}
                >
                  Edit
                </SmallButton>
                <SmallButton
                  aria-label={`Backfill “${m.name}”`}
                  onClick={() => setOpen({ kind: 'backfill', metric: m })}
                >
                  Backfill
                </SmallButton>
              </>
            )}
            <SmallButton
              aria-label={`Add to dashboard “${m.name}”`}
              onClick={() => setOpen({ kind: 'dashboard', metric: m })}
            >
              Add to dashboard
            </SmallButton>
            {mayChange(m) && (
              <SmallButton
                aria-label={`Delete “${m.name}”`}
                onClick={() =>
                  remove(
                    `Delete the metric “${m.name}”? Its series go with it.`,
                    `/api/log-metrics/${m.id}`,
                    `Deleted “${m.name}”.`,
                  )
                }
              >
                Delete
              </SmallButton>
            )}
          </>
        )}
      />
      {open?.kind === 'new' && (
        <MetricDialog onClose={close} onSaved={created((m: LogMetric) => `Created metric “${m.name}”.`)} />
      )}
      {open?.kind === 'edit' && (
        <MetricDialog
          key={open.metric.id}
          editing={open.metric}
          onClose={close}
          onSaved={created((m: LogMetric) => `Saved metric “${m.name}”.`)}
        />
      )}
      {open?.kind === 'dashboard' && <AddToDashboardDialog metric={open.metric} onClose={close} />}
      {open?.kind === 'backfill' && (
        <BackfillDialog metric={open.metric} onClose={close} onFinished={list.reload} />
      )}
    </Page>
  );
}
