/**
 * The figures of a Metric query's series answer (docs/api/log-metrics.md "The query type Metric") and
 * how a widget picks one (`visualization.options.y`): shared by the dashboards API that
 * checks the choice, the reports that draw it and the web UI.
 */

/** The figures a point and a total carry; a quantile is picked by its key ("0.99"). */
export const METRIC_FIGURES = ['value', 'events', 'count', 'sum', 'min', 'max', 'avg'] as const;

/** The figures whose totals over several series add up (a number widget sums them). */
export const ADDITIVE_FIGURES: ReadonlySet<string> = new Set(['events', 'count', 'sum']);

/** A quantile's key as JSON writes the number: "0.5", "0.99", "0.999". */
const QUANTILE_KEY = /^0\.\d*[1-9]$/;

export const isMetricFigure = (y: unknown): y is string =>
  typeof y === 'string' &&
  ((METRIC_FIGURES as readonly string[]).includes(y) || (QUANTILE_KEY.test(y) && String(Number(y)) === y));

/** A point's or a total's figures, as the series answer holds them. */
export interface MetricFigures {
  events: number;
  count?: number;
  sum?: number;
  min?: number | null;
  max?: number | null;
  avg?: number | null;
  quantiles?: Record<string, number | null>;
  value: number | null;
}

export interface MetricPoint extends MetricFigures {
  ts: number;
}

export interface MetricSeries {
  labels: Record<string, string>;
  total: MetricFigures;
  points: MetricPoint[];
}

/** The series answer of a Metric query. */
export interface MetricAnswer {
  metric: { id: number; name: string; kind: string; field: string | null };
  from: number;
  to: number;
  step: number;
  labels: string[];
  series: MetricSeries[];
  dropped_series: number;
  truncated: boolean;
  rebuilding: boolean;
}

/** The series answer, or null for results of another shape. */
export const answerOf = (results: unknown): MetricAnswer | null => {
  const a = results as Partial<MetricAnswer> | null;
  return a && Array.isArray(a.series) && a.metric ? (a as MetricAnswer) : null;
};

/** The figure `y` of a point or total (default `value`); null where it has none. */
export function figureOf(f: MetricFigures, y = 'value'): number | null {
  if (y in f && y !== 'quantiles') {
    const v = (f as unknown as Record<string, unknown>)[y];
    return typeof v === 'number' ? v : null;
  }
  const q = f.quantiles?.[y];
  return typeof q === 'number' ? q : null;
}

const present = (vs: Array<number | null>) => vs.filter((v): v is number => v !== null);
const sum = (vs: number[]) => vs.reduce((a, b) => a + b, 0);

/**
 * The figure `y` of consecutive points merged as the metric merges them: counts and sums
 * added, the least min and the greatest max, an average from the summed sums and counts.
 * A quantile cannot be merged from quantiles: the greatest of the merged steps is drawn.
 */
export function mergedFigure(points: readonly MetricPoint[], y: string, kind: string): number | null {
  if (points.length === 1) return figureOf(points[0] as MetricFigures, y);
  // A value is its kind's figure (a quantiles metric's: its first quantile, kept as `value`).
  const figure = y === 'value' && kind !== 'quantiles' ? (kind === 'count' ? 'events' : kind) : y;
  const values = present(points.map((p) => figureOf(p, figure)));
  if (figure === 'events' || figure === 'count' || figure === 'sum') return sum(values);
  if (figure === 'avg') {
    const count = sum(points.map((p) => p.count ?? 0));
    return count > 0 ? sum(points.map((p) => p.sum ?? 0)) / count : null;
  }
  if (!values.length) return null;
  return figure === 'min' ? Math.min(...values) : Math.max(...values);
}

/** A series' name: its label values ("web-1 / 500"), or the metric's name for the one series of no labels. */
export function seriesName(s: MetricSeries, metricName: string): string {
  const values = Object.values(s.labels);
  return values.length ? values.join(' / ') : metricName;
}

/** The figure's words: "value (avg)", "events" (also a count metric's value), "p0.99". */
export function figureTitle(y: string, kind: string): string {
  if (y === 'value') return kind === 'count' ? 'events' : `value (${kind})`;
  return (METRIC_FIGURES as readonly string[]).includes(y) ? y : `p${y}`;
}

/** Whether the figure `y` of several series adds up to one (`value` of a count or sum metric does). */
export const addsUp = (y: string, kind: string) =>
  ADDITIVE_FIGURES.has(y) || (y === 'value' && (kind === 'count' || kind === 'sum'));

/**
 * A number widget's one figure: the sum over the series of a figure that adds up, else
 * the single series' total figure (null with several series: an average of averages
 * would mislead).
 */
export function metricNumber(a: MetricAnswer, y = 'value'): number | null {
  if (addsUp(y, a.metric.kind)) return a.series.reduce((n, s) => n + (figureOf(s.total, y) ?? 0), 0);
  return a.series.length === 1 ? figureOf(a.series[0]!.total, y) : null;
}
