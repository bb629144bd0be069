/** A log metric as the UI reads it (docs/api/log-metrics.md): types, its exposition names, the scrape configuration. */
import type { Answer, Schemas } from '../../api';
import { formatCount } from '../../format';

export type LogMetric = Schemas['LogMetric'];
export type MetricKind = LogMetric['kind'];
export type BackfillJob = Answer<'/api/log-metrics/jobs/{job_id}'>;

export const KINDS: readonly { value: MetricKind; label: string }[] = [
  { value: 'count', label: 'count: the matching events' },
  { value: 'sum', label: 'sum of a field' },
  { value: 'avg', label: 'avg: average of a field' },
  { value: 'min', label: 'min of a field' },
  { value: 'max', label: 'max of a field' },
  { value: 'quantiles', label: 'quantiles of a field' },
];

/** Figures of a point or a series' total (`value` is the kind's figure). */
export interface Figures {
  events: number;
  value: number | null;
}

/** GET /api/log-metrics/{id}/series (the document leaves it open: log-metric-series.ts's shape). */
export interface SeriesAnswer {
  metric: { id: number; name: string; kind: MetricKind; field: string | null };
  from: number;
  to: number;
  step: number;
  labels: string[];
  series: { labels: Record<string, string>; total: Figures; points: ({ ts: number } & Figures)[] }[];
  dropped_series: number;
  truncated: boolean;
  rebuilding: boolean;
}

/** The families the Prometheus exposition gives the metric, each with what it is. */
export function expositionNames(m: Pick<LogMetric, 'name' | 'kind'>): { name: string; what: string }[] {
  const names = [{ name: `${m.name}_total`, what: 'counter: the events counted since counting began' }];
  if (m.kind === 'sum' || m.kind === 'avg' || m.kind === 'quantiles')
    names.push(
      { name: `${m.name}_sum`, what: 'the numbers’ sum' },
      { name: `${m.name}_count`, what: 'how many numbers' },
    );
  if (m.kind === 'quantiles')
    names.push({ name: m.name, what: 'summary: each quantile over the last bucket' });
  if (m.kind === 'min' || m.kind === 'max')
    names.push({ name: m.name, what: `gauge: the last bucket’s ${m.kind}` });
  return names;
}

/** The scrape configuration for Prometheus against this server (`host`: the page's). */
export const scrapeConfig = (host: string) =>
  [
    'scrape_configs:',
    '  - job_name: logscope',
    '    metrics_path: /api/log-metrics/prometheus',
    '    authorization: {credentials: <USER token>}',
    `    static_configs: [{targets: [${JSON.stringify(host)}]}]`,
  ].join('\n');

/** A series' name in a legend: its label values, `field=value` joined (no labels: `all`). */
export const seriesName = (labels: Record<string, string>) =>
  Object.entries(labels)
    .map(([k, v]) => `${k}=${v === '' ? '(none)' : v}`)
    .join(', ') || 'all';

/** Unix seconds as local `YYYY-MM-DDTHH:MM` (a datetime-local input's value) and back. */
export function toLocalInput(seconds: number): string {
  const d = new Date(seconds * 1000);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}
export const fromLocalInput = (text: string): number | null => {
  const ms = new Date(text).getTime();
  return Number.isNaN(ms) ? null : Math.floor(ms / 1000);
};

/** The metric's page. */
export const metricHref = (id: number) => `/log-metrics/${id}`;

/** The step for a 24-hour chart: the smallest multiple of the resolution giving at most 120 points. */
export function chartStep(resolution: number, span = 86_400): number {
  const least = Math.ceil(span / 120);
  return Math.ceil(least / resolution) * resolution;
}

/** `1 event`, `1,204 events`. */
export const eventsText = (n: number) => `${formatCount(n)} event${n === 1 ? '' : 's'}`;
