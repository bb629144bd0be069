import { useCallback, useState } from 'react';
import { ErrorBanner, Notice, Page, SmallButton } from '../../components/feedback';
import { formatCount, formatIso, formatTs } from '../../format';
import { Link } from '../../router';
import { useApi } from '../../useApi';
import { useMe, useUserNames } from '../../useMe';
import { AddToDashboardDialog } from './AddToDashboard';
import { BackfillDialog } from './Backfill';
import {
  chartStep,
  eventsText,
  expositionNames,
  type LogMetric,
  type SeriesAnswer,
  scrapeConfig,
} from './log-metric';
import { MetricChart } from './MetricChart';
import '../tasks/work.css';
import './log-metrics.css';

const DAY = 86_400;

/** `/log-metrics/<id>`: the metric's page, or "not found" for a path that names none. */
export function MetricRoute({ path }: { path: string }) {
  const id = Number(path.slice('/log-metrics/'.length));
  if (!Number.isInteger(id) || id <= 0)
    return (
      <Page title="Metric not found">
        <p>
          <Link to="/log-metrics">All metrics</Link>
        </p>
      </Page>
    );
  return <MetricPage key={id} id={id} />;
}

/**
 * A metric's page: its definition, since when it counts and what backfills covered, a
 * chart of its series over the last 24 h (the labels to keep chosen), the Prometheus
 * names with the scrape configuration to copy, and Backfill with the job's progress.
 */
function MetricPage({ id }: { id: number }) {
  const metric = useApi<LogMetric>(`/api/log-metrics/${id}`);
  const m = metric.data;
  const me = useMe();
  const names = useUserNames(me);
  const [backfilling, setBackfilling] = useState(false);
  const [adding, setAdding] = useState(false);
  const close = useCallback(() => setBackfilling(false), []);

  if (!m)
    return (
      <Page title="Metric">
        {metric.error ? <ErrorBanner error={metric.error} /> : <p className="muted">Loading…</p>}
        <p>
          <Link to="/log-metrics">All metrics</Link>
        </p>
      </Page>
    );
  const mayChange = !!me && (me.is_admin || me.id === m.owner);
  return (
    <Page title={`Metric ${m.name}`} className="work-page metric-page">
      <p>
        <Link to="/log-metrics">All metrics</Link>
      </p>
      <section aria-labelledby="metric-definition" className="metric-section">
        <h2 id="metric-definition">Definition</h2>
        <dl className="metric-facts">
          {m.description && (
            <>
              <dt>Description</dt>
              <dd>{m.description}</dd>
            </>
          )}
          <dt>Query</dt>
          <dd>{m.query ? <code>{m.query}</code> : <span className="muted">every event</span>}</dd>
          <dt>Kind</dt>
          <dd>
            {m.field ? `${m.kind} of ${m.field}` : m.kind}
            {m.quantiles ? ` (${m.quantiles.join(', ')})` : ''}
          </dd>
          <dt>Labels</dt>
          <dd>{m.labels.length ? m.labels.join(', ') : <span className="muted">none</span>}</dd>
          <dt>Resolution</dt>
          <dd>{m.resolution_seconds} s</dd>
          <dt>Retention</dt>
          <dd>{formatCount(m.retention_days)} days</dd>
          <dt>Series</dt>
          <dd>
            {formatCount(m.series_count)} of at most {formatCount(m.max_series)}
            {m.dropped_series > 0 && `, ${formatCount(m.dropped_series)} dropped into __other__`}
          </dd>
          <dt>Owner</dt>
          <dd>
            {m.owner === me?.id ? 'you' : (names.get(m.owner) ?? `User #${m.owner}`)}
            {m.shared_with.everyone ? ', shared with everyone' : ''}
          </dd>
          <dt>Counting since</dt>
          <dd>
            <time dateTime={m.counting_since}>{formatIso(m.counting_since)}</time>
          </dd>
          <dt>Backfilled</dt>
          <dd>
            {m.backfilled.length === 0 ? (
              <span className="muted">nothing yet</span>
            ) : (
              <ul className="metric-ranges">
                {m.backfilled.map((r) => (
                  <li key={r.from}>
                    {formatTs(r.from).slice(0, 16)} – {formatTs(r.to).slice(0, 16)}
                  </li>
                ))}
              </ul>
            )}
          </dd>
        </dl>
        <div className="work-toolbar">
          {mayChange && (
            <button type="button" onClick={() => setBackfilling(true)}>
              Backfill
            </button>
          )}
          <button type="button" className="secondary" onClick={() => setAdding(true)}>
            Add to dashboard
          </button>
        </div>
      </section>
      <SeriesSection metric={m} />
      <ScrapeSection metric={m} />
      {backfilling && <BackfillDialog metric={m} onClose={close} onFinished={metric.reload} />}
      {adding && <AddToDashboardDialog metric={m} onClose={() => setAdding(false)} />}
    </Page>
  );
}

/** The last 24 h of the series, with the labels to keep. */
function SeriesSection({ metric: m }: { metric: LogMetric }) {
  const [kept, setKept] = useState<readonly string[]>(m.labels);
  const [span, setSpan] = useState(() => {
    const to = Math.ceil(Date.now() / 1000);
    return { from: to - DAY, to };
  });
  const qs = new URLSearchParams({
    from: String(span.from),
    to: String(span.to),
    step: String(chartStep(m.resolution_seconds)),
    labels: m.labels.filter((l) => kept.includes(l)).join(','),
  });
  const series = useApi<SeriesAnswer>(`/api/log-metrics/${m.id}/series?${qs}`);
  const refresh = () => {
    const to = Math.ceil(Date.now() / 1000);
    setSpan({ from: to - DAY, to });
  };
  const a = series.data;
  return (
    <section aria-labelledby="metric-series" className="metric-section">
      <div className="metric-section-head">
        <h2 id="metric-series">Last 24 hours</h2>
        <SmallButton onClick={refresh}>Refresh</SmallButton>
      </div>
      {m.labels.length > 0 && (
        <fieldset className="metric-labels">
          <legend>Labels</legend>
          {m.labels.map((l) => (
            <label key={l} className="inline-check">
              <input
                type="checkbox"
                checked={kept.includes(l)}
                onChange={(e) => setKept((k) => (e.target.checked ? [...k, l] : k.filter((x) => x !== l)))}
              />
              {l}
            </label>
          ))}
        </fieldset>
      )}
      <ErrorBanner error={series.error} />
      {a ? (
        <>
          <MetricChart answer={a} title={m.name} />
          <Notice>
            {formatCount(a.series.length)} series{a.truncated ? ' (the busiest shown)' : ''},{' '}
            {eventsText(a.series.reduce((n, s) => n + s.total.events, 0))}
            {a.rebuilding ? '; the metric is being rebuilt' : ''}.
          </Notice>
        </>
      ) : (
        !series.error && <p className="muted">Loading…</p>
      )}
    </section>
  );
}

/** The Prometheus exposition's names, and the scrape configuration with a "Copy" button. */
function ScrapeSection({ metric: m }: { metric: LogMetric }) {
  const config = scrapeConfig(window.location.host);
  const [copied, setCopied] = useState('');
  const copy = () =>
    navigator.clipboard
      .writeText(config)
      .then(() => setCopied('Copied the scrape configuration.'))
      .catch(() => setCopied('Could not copy: select the text and copy it.'));
  return (
    <section aria-labelledby="metric-prometheus" className="metric-section">
      <h2 id="metric-prometheus">Prometheus</h2>
      <ul className="metric-names">
        {expositionNames(m).map((n) => (
          <li key={n.name}>
            <code>{n.name}</code> <span className="muted">{n.what}</span>
          </li>
        ))}
      </ul>
      <div className="metric-section-head">
        <h3 id="metric-scrape">Scrape configuration</h3>
        <SmallButton onClick={copy}>Copy</SmallButton>
      </div>
      <pre className="metric-scrape">{config}</pre>
      <Notice>{copied}</Notice>
    </section>
  );
}
