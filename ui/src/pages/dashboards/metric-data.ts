/**
 * A Metric query's series answer (docs/api/log-metrics.md "The query type Metric") in the
 * shapes the widget visualizations draw: time buckets with a series per label tuple, a
 * table of the series' totals. `y` is the figure the widget shows (its
 * `visualization.options.y`, default `value`). Pure, for tests.
 */

import { type MetricAnswer, type MetricPoint, mergedFigure, seriesName } from '@shared/metric-figures';

// The shapes of charts/data.ts's Bucket and Table, spelled here so that this module
// imports nothing of the UI's (its tests compile it with the server's settings).
interface Bucket {
  ts: number;
  count: number;
  series?: Record<string, number>;
}
interface Table {
  columns: string[];
  rows: unknown[][];
}

/** Most points a chart draws: finer steps are merged (a day of 2-minute steps: 12-minute ones). */
export const MAX_METRIC_POINTS = 120;

const sum = (vs: number[]) => vs.reduce((a, b) => a + b, 0);

/**
 * The answer as a time chart's buckets: a series per label tuple (named by its values, or
 * the metric's name for the one series of no labels), at most MAX_METRIC_POINTS steps.
 */
export function metricBuckets(a: MetricAnswer, y: string): Bucket[] {
  const n = Math.max(0, ...a.series.map((s) => s.points.length));
  const k = Math.max(1, Math.ceil(n / MAX_METRIC_POINTS));
  const buckets: Bucket[] = [];
  for (let i = 0; i < n; i += k) {
    const series: Record<string, number> = {};
    let ts = 0;
    for (const s of a.series) {
      const group = s.points.slice(i, i + k);
      if (!group.length) continue;
      ts = (group[0] as MetricPoint).ts;
      series[seriesName(s, a.metric.name)] = mergedFigure(group, y, a.metric.kind) ?? 0;
    }
    buckets.push({ ts, count: sum(Object.values(series)), series });
  }
  return buckets;
}

const FIGURES = ['events', 'count', 'sum', 'min', 'max', 'avg'] as const;

/** A row per series: its label values, then its total figures (those its metric's kind has). */
export function metricTable(a: MetricAnswer): Table {
  const figures = FIGURES.filter((f) => a.series.some((s) => s.total[f] !== undefined));
  const quantiles = [...new Set(a.series.flatMap((s) => Object.keys(s.total.quantiles ?? {})))];
  return {
    columns: [...a.labels, ...figures, ...quantiles.map((q) => `p${q}`)],
    rows: a.series.map((s) => [
      ...a.labels.map((l) => s.labels[l] ?? ''),
      ...figures.map((f) => s.total[f] ?? null),
      ...quantiles.map((q) => s.total.quantiles?.[q] ?? null),
    ]),
  };
}
