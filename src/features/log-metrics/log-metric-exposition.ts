import type { Identity } from '../../core/identity.js';
import { counter, type MetricDecl, type MetricsSource } from '../../core/metrics.js';
import type { EventStore } from '../../event-store/event-store.js';
import { type Aggregate, emptyAggregate } from '../../event-store/rollups/metric-rollups.js';
import type { MetricBucketRow, MetricTotalRow } from '../../event-store/rollups/metric-store.js';
import { sketchQuantile } from '../../event-store/rollups/sketch.js';
import type { ReadScopes } from '../../query/read-scopes.js';
import { generationOf } from './log-metric-counting.js';
import type { LogMetric } from './log-metric-schema.js';
import { add, MAX_FIGURES } from './log-metric-series.js';

/** One scrape's text, and how many metrics and series it holds. */
export interface Scrape {
  text: string;
  metrics: number;
  series: number;
}

/**
 * The Prometheus exposition of log metrics (`GET /api/log-metrics/prometheus`,
 * docs/api/log-metrics.md "Prometheus"): per metric the series' cumulative `_total` (and
 * `_sum`, `_count`) since `counting_since`, read in one store read so they count the same
 * events, and the last ended bucket's quantiles, min or max; each summed over the stream
 * sets the caller's scope reads now (the store's set test, rollups/metric-store.ts
 * `setTest`), as a series answer sums them.
 */
export class LogMetricExposition implements MetricsSource {
  private readonly scrapes = { ok: 0, unauthorized: 0, forbidden: 0 };

  constructor(
    private readonly events: EventStore,
    private readonly scopes: ReadScopes,
  ) {}

  /** A scrape answered with `status`, counted by outcome (`/metrics`). */
  counted(status: number): void {
    if (status === 200) this.scrapes.ok++;
    else if (status === 401) this.scrapes.unauthorized++;
    else if (status === 403) this.scrapes.forbidden++;
  }

  metrics(): MetricDecl[] {
    return [
      counter(
        'logscope_log_metric_scrapes_total',
        'Scrapes of /api/log-metrics/prometheus, by outcome.',
        () => ({ ...this.scrapes }),
        'outcome',
      ),
    ];
  }

  async scrape(who: Identity, metrics: readonly LogMetric[], now = Date.now()): Promise<Scrape> {
    const scope = await this.scopes.of(who);
    const out: string[] = [];
    const dropped: string[] = [];
    let series = 0;
    for (const m of metrics) {
      const generation = generationOf(m.counting_since);
      const totals = await this.events.metricTotals(m.id, generation, scope);
      if (totals === null) continue; // not counted on this store (ClickHouse, for now)
      const resolution = m.resolution_seconds * 1000;
      const ended = Math.floor(now / resolution) * resolution - resolution;
      const last =
        m.kind === 'count' || m.kind === 'sum' || m.kind === 'avg'
          ? []
          : ((await this.events.metricBuckets({
              scope,
              metric: m.id,
              generation,
              fromMs: ended,
              toMs: ended + resolution,
              stepMs: resolution,
              maxRows: MAX_FIGURES,
            })) ?? []);
      const total = sumByTuple(m, totals);
      const lastBucket = sumByTuple(m, last);
      series += total.size;
      out.push(...metricLines(m, total, lastBucket));
      const { dropped: n } = await this.events.metricCounts(m.id, generation);
      dropped.push(`logscope_log_metric_dropped_series{metric="${escapeValue(m.name)}"} ${n}`);
    }
    if (dropped.length)
      out.push(
        '# HELP logscope_log_metric_dropped_series Label tuples past max_series, counted under __other__.',
        '# TYPE logscope_log_metric_dropped_series gauge',
        ...dropped,
      );
    return { text: out.length ? `${out.join('\n')}\n` : '', metrics: metrics.length, series };
  }
}

/** The rows' figures (of the stream sets the reader reads: the store chose them) summed by label tuple. */
function sumByTuple(
  m: LogMetric,
  rows: ReadonlyArray<MetricBucketRow | MetricTotalRow>,
): Map<string, { labels: readonly string[]; agg: Aggregate }> {
  const by = new Map<string, { labels: readonly string[]; agg: Aggregate }>();
  for (const r of rows) {
    const key = JSON.stringify(r.labels);
    let s = by.get(key);
    if (!s) {
      s = { labels: r.labels, agg: emptyAggregate(m.kind) };
      by.set(key, s);
    }
    // A total holds events, count and sum alone.
    add(s.agg, 'sketches' in r ? r : { ...r, stepMs: 0, min: null, max: null, sketches: [] });
  }
  return by;
}

/** A metric's families: `_total`, and by kind a summary or a gauge, series in label order. */
function metricLines(
  m: LogMetric,
  total: ReadonlyMap<string, { labels: readonly string[]; agg: Aggregate }>,
  last: ReadonlyMap<string, { labels: readonly string[]; agg: Aggregate }>,
): string[] {
  const help = escapeHelp(m.description ? m.description : `Log metric ${m.name}: ${m.query}`.trimEnd());
  const names = m.labels.map(labelName);
  const keys = [...total.keys()].sort();
  const lines = [`# HELP ${m.name}_total ${help}`, `# TYPE ${m.name}_total counter`];
  for (const k of keys) {
    const s = total.get(k) as { labels: readonly string[]; agg: Aggregate };
    lines.push(`${m.name}_total${labelSet(names, s.labels)} ${num(s.agg.events)}`);
  }
  if (m.kind === 'count') return lines;
  if (m.kind === 'min' || m.kind === 'max') {
    lines.push(`# HELP ${m.name} ${help}`, `# TYPE ${m.name} gauge`);
    for (const k of [...last.keys()].sort()) {
      const s = last.get(k) as { labels: readonly string[]; agg: Aggregate };
      const v = m.kind === 'min' ? s.agg.min : s.agg.max;
      if (v !== null) lines.push(`${m.name}${labelSet(names, s.labels)} ${num(v)}`);
    }
    return lines;
  }
  lines.push(`# HELP ${m.name} ${help}`, `# TYPE ${m.name} summary`);
  for (const k of keys) {
    const s = total.get(k) as { labels: readonly string[]; agg: Aggregate };
    const ls = labelSet(names, s.labels);
    if (m.kind === 'quantiles') {
      const sketch = last.get(k)?.agg.sketch;
      for (const q of m.quantiles ?? []) {
        const v = sketch && sketch.count > 0 ? sketchQuantile(sketch, q) : null;
        if (v !== null)
          lines.push(`${m.name}${labelSet(names, s.labels, ['quantile', JSON.stringify(q)])} ${num(v)}`);
      }
    }
    lines.push(`${m.name}_sum${ls} ${num(s.agg.sum)}`, `${m.name}_count${ls} ${num(s.agg.count)}`);
  }
  return lines;
}

/** A field's name as a Prometheus label: `[a-zA-Z0-9_]` kept, the rest `_`, no leading digit. */
export function labelName(field: string): string {
  const name = field.replace(/[^a-zA-Z0-9_]/g, '_');
  return /^[0-9]/.test(name) ? `_${name}` : name;
}

/** `{a="x",b="y"}`, empty values left out (Prometheus reads them as absent), or nothing. */
function labelSet(names: readonly string[], values: readonly string[], extra?: [string, string]): string {
  const parts: string[] = [];
  names.forEach((n, i) => {
    const v = values[i] ?? '';
    if (v !== '') parts.push(`${n}="${escapeValue(v)}"`);
  });
  if (extra) parts.push(`${extra[0]}="${escapeValue(extra[1])}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

const escapeValue = (v: string): string =>
  v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const escapeHelp = (v: string): string => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');

/** A sample value as the format writes it (Go's float syntax: `+Inf`, `-Inf`, `NaN`). */
function num(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? '+Inf' : '-Inf';
  return String(v);
}
