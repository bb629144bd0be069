/**
 * A Metric widget in a report (docs/api/log-metrics.md "The query type Metric"): a table of the series
 * with their total figures, under a line chart of each series (report-charts.ts metricChart).
 */

import type { ExportColumn } from '../../export/renderer.js';
import { answerOf, type MetricFigures } from '../../shared/metric-figures.js';
import { stepText } from './report-charts.js';

// Averages and quantiles come with a dozen decimals nobody reads.
const round = (v: number | null | undefined) =>
  typeof v === 'number' && !Number.isInteger(v) ? Math.round(v * 100) / 100 : (v ?? null);

/** "The log metric nginx_errors (avg of http.duration_ms) per 5 min, by host". */
export function metricShows(results: unknown): string {
  const a = answerOf(results);
  if (!a) return 'A log metric';
  const what = a.metric.field ? `${a.metric.kind} of ${a.metric.field}` : a.metric.kind;
  const by = a.labels.length ? `, by ${a.labels.join(', ')}` : '';
  return `The log metric ${a.metric.name} (${what}) per ${stepText(a.step)}${by}`;
}

/** A row per series: its label values, then its total figures (those its metric's kind has). */
export function metricTable(results: unknown): {
  columns: ExportColumn[];
  rows: Array<Record<string, unknown>>;
  footnotes: string[];
} {
  const a = answerOf(results);
  if (!a) return { columns: [], rows: [], footnotes: [] };
  const has = (k: keyof MetricFigures) => a.series.some((s) => s.total[k] !== undefined);
  const figures = (['events', 'count', 'sum', 'min', 'max', 'avg'] as const).filter(has);
  const quantiles = [...new Set(a.series.flatMap((s) => Object.keys(s.total.quantiles ?? {})))];
  const columns: ExportColumn[] = [
    ...a.labels.map((l) => ({ key: `label.${l}`, title: l, kind: 'string' as const })),
    ...figures.map((f) => ({ key: f, title: f, kind: 'number' as const })),
    ...quantiles.map((q) => ({ key: `q${q}`, title: `p${q}`, kind: 'number' as const })),
  ];
  const rows = a.series.map((s) => ({
    ...Object.fromEntries(a.labels.map((l) => [`label.${l}`, s.labels[l] ?? ''])),
    ...Object.fromEntries(figures.map((f) => [f, round(s.total[f] as number | null | undefined)])),
    ...Object.fromEntries(quantiles.map((q) => [`q${q}`, round(s.total.quantiles?.[q])])),
  }));
  const footnotes: string[] = [];
  if (a.truncated) footnotes.push(`More series than the query's limit: the ${rows.length} largest.`);
  if (a.dropped_series > 0)
    footnotes.push(`The metric folded ${a.dropped_series} series past its Max series into __other__.`);
  if (a.rebuilding) footnotes.push('The metric was being rebuilt: its figures may be short.');
  return { columns, rows, footnotes };
}
