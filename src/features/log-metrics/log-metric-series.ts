import type { Identity } from '../../core/identity.js';
import { INTERVAL_UNITS, parseIsoMs } from '../../core/time.js';
import { AppError, fieldError } from '../../errors/errors.js';
import type { EventStore } from '../../event-store/event-store.js';
import type { ReadScope } from '../../event-store/read-scope.js';
import { type Aggregate, emptyAggregate } from '../../event-store/rollups/metric-rollups.js';
import type { MetricBucketRow, StreamChoice } from '../../event-store/rollups/metric-store.js';
import { decodeSketch, mergeSketch, sketchQuantile } from '../../event-store/rollups/sketch.js';
import type { ReadScopes } from '../../query/read-scopes.js';
import type { MetricAnswer, MetricFigures } from '../../shared/metric-figures.js';
import { generationOf } from './log-metric-counting.js';
import type { LogMetric } from './log-metric-schema.js';

/** What `GET /api/log-metrics/{id}/series` takes, as the query string gives it. */
export interface SeriesParams {
  from?: string | undefined;
  to?: string | undefined;
  step?: string | undefined;
  labels?: string | undefined;
  streams?: string | undefined;
  limit?: number | undefined;
  /** `label.<field>`: the values a label must hold. */
  labelFilter: ReadonlyMap<string, readonly string[]>;
}

const MAX_POINTS = 11_000;
const DEFAULT_POINTS = 1_000;
/**
 * Figures one answer holds at most: rows read from the store (steps × stream sets × label
 * tuples) and points written (series × steps). `limit` 10,000 series of 11,000 points
 * each would be 110 million: an answer past this is a 400 asking for less.
 */
export const MAX_FIGURES = 2_000_000;

/** Unix seconds or ISO 8601, as ms; a 400 on `field` otherwise. */
export function timeParam(field: string, text: string | undefined, dflt: number): number {
  if (text === undefined || text === '') return dflt;
  const ms = /^-?\d+(\.\d+)?$/.test(text) ? Number(text) * 1000 : parseIsoMs(text);
  if (ms === null || !Number.isFinite(ms)) throw fieldError(field, 'A time: Unix seconds or ISO 8601.');
  return ms;
}

/** Seconds (`300`) or a duration (`5m`, `1h`, `1d`), as ms; a 400 on `field` otherwise. */
export function stepParam(text: string, field = 'step'): number {
  const m = /^(\d{1,9})([smhd]?)$/.exec(text);
  if (!m) throw fieldError(field, 'Seconds (300) or a duration (5m, 1h, 1d).');
  return Number(m[1]) * (m[2] ? (INTERVAL_UNITS[m[2]] as number) : 1000);
}

/** A series read, checked against its metric: Unix ms, aligned on `stepMs`. */
export interface SeriesRead {
  readonly fromMs: number;
  readonly toMs: number;
  readonly stepMs: number;
  /** The labels kept, in the metric's order of asking. */
  readonly kept: readonly string[];
  /** Tuples whose label holds one of these values (`label.<field>`, `label_filter`). */
  readonly labelFilter: ReadonlyMap<string, readonly string[]>;
  readonly limit: number;
}

/** What a read asks, as numbers and lists (the route's query string or a Metric query's params). */
export interface SeriesAsk {
  readonly fromMs: number;
  readonly toMs: number;
  /** Ms; undefined: the default. */
  readonly stepMs?: number | undefined;
  readonly labels?: readonly string[] | undefined;
  readonly labelFilter: ReadonlyMap<string, readonly string[]>;
  readonly limit?: number | undefined;
}

/** The names errors give the parameters: the route's (`step`) or a Metric query's (`params.step`). */
export interface ParamNames {
  readonly from: string;
  readonly step: string;
  readonly labels: string;
  readonly label: (field: string) => string;
  readonly limit: string;
}

const ROUTE_NAMES: ParamNames = {
  from: 'from',
  step: 'step',
  labels: 'labels',
  label: (f) => `label.${f}`,
  limit: 'limit',
};

/** A read checked against its metric (docs/api/log-metrics.md "Reading"): a 400 naming the parameter otherwise. */
export function seriesRead(metric: LogMetric, ask: SeriesAsk, names: ParamNames = ROUTE_NAMES): SeriesRead {
  const resolution = metric.resolution_seconds * 1000;
  const { fromMs: from0, toMs: to0 } = ask;
  if (from0 >= to0) throw fieldError(names.from, '`from` must be before `to`.');
  let step: number;
  if (ask.stepMs !== undefined) {
    step = ask.stepMs;
    if (step <= 0 || step % resolution !== 0)
      throw fieldError(names.step, `A multiple of the metric's resolution (${metric.resolution_seconds} s).`);
  } else step = resolution * Math.max(1, Math.ceil((to0 - from0) / resolution / DEFAULT_POINTS));
  const fromMs = Math.floor(from0 / step) * step;
  const toMs = Math.ceil(to0 / step) * step;
  const points = (toMs - fromMs) / step;
  if (points > MAX_POINTS)
    throw fieldError(
      names.step,
      `${points} points a series; at most ${MAX_POINTS}: a longer step or a shorter range.`,
    );
  const kept = ask.labels ?? metric.labels;
  for (const l of kept)
    if (!metric.labels.includes(l)) throw fieldError(names.labels, `\`${l}\` is no label of this metric.`);
  for (const l of ask.labelFilter.keys())
    if (!metric.labels.includes(l)) throw fieldError(names.label(l), `\`${l}\` is no label of this metric.`);
  const limit = ask.limit ?? 100;
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000)
    throw fieldError(names.limit, 'From 1 to 10,000.');
  return { fromMs, toMs, stepMs: step, kept, labelFilter: ask.labelFilter, limit };
}

/**
 * A log metric's series (docs/api/log-metrics.md, "Reading"): its buckets in the range,
 * summed by step, over the stream sets the reader's scope reads (the event store decides
 * which, rollups/metric-store.ts `setTest`), by the label tuples asked for. The series
 * route and the query type Metric answer with it.
 */
export class LogMetricSeries {
  constructor(
    private readonly events: EventStore,
    private readonly scopes: ReadScopes,
  ) {}

  /** `GET /api/log-metrics/{id}/series`: the query string's parameters, for `who`. */
  async series(who: Identity, metric: LogMetric, p: SeriesParams): Promise<MetricAnswer> {
    const toMs = timeParam('to', p.to, Date.now());
    const fromMs = timeParam('from', p.from, toMs - 3_600_000);
    const read = seriesRead(metric, {
      fromMs,
      toMs,
      stepMs: p.step !== undefined && p.step !== '' ? stepParam(p.step) : undefined,
      labels: p.labels === undefined ? undefined : p.labels === '' ? [] : p.labels.split(','),
      labelFilter: p.labelFilter,
      limit: p.limit,
    });
    const streams =
      p.streams === undefined || p.streams === ''
        ? undefined
        : p.streams.split(',').map((s) => {
            if (!/^\d{1,10}$/.test(s.trim())) throw fieldError('streams', 'Stream ids, comma-separated.');
            return Number(s);
          });
    const only = await this.scopes.streamChoice(who.userId, streams, 'streams');
    return this.answer(metric, read, await this.scopes.of(who), only);
  }

  /** The series of `read` in `scope` (a reader's, a query owner's), narrowed to `only`. */
  async answer(
    metric: LogMetric,
    read: SeriesRead,
    scope: ReadScope,
    only: StreamChoice | undefined,
    names: ParamNames = ROUTE_NAMES,
  ): Promise<MetricAnswer> {
    const { fromMs: from, toMs: to, stepMs: step, kept, limit } = read;
    const points = (to - from) / step;
    const generation = generationOf(metric.counting_since);
    const rows = await this.events.metricBuckets({
      scope,
      only,
      metric: metric.id,
      generation,
      fromMs: from,
      toMs: to,
      stepMs: step,
      maxRows: MAX_FIGURES,
    });
    if (rows === null)
      throw new AppError(
        409,
        'not_counted',
        'This server keeps its events on ClickHouse, where log metrics are not counted yet (docs/api/log-metrics.md).',
      );
    if (rows.length > MAX_FIGURES)
      throw fieldError(
        names.step,
        `More than ${MAX_FIGURES.toLocaleString('en-US')} figures in this range: a longer step, fewer labels or a shorter range.`,
      );
    const positions = kept.map((l) => metric.labels.indexOf(l));
    const filters = [...read.labelFilter].map(([l, values]) => ({
      at: metric.labels.indexOf(l),
      values: new Set(values),
    }));
    const bySeries = new Map<string, { labels: string[]; steps: Map<number, Aggregate> }>();
    for (const r of rows) {
      if (!filters.every((f) => f.values.has(r.labels[f.at] ?? ''))) continue;
      const labels = positions.map((i) => r.labels[i] ?? '');
      const key = JSON.stringify(labels);
      let s = bySeries.get(key);
      if (!s) {
        s = { labels, steps: new Map() };
        bySeries.set(key, s);
      }
      const at = s.steps.get(r.stepMs);
      s.steps.set(r.stepMs, at ? add(at, r) : add(empty(metric), r));
    }
    const all = [...bySeries.values()].map((s) => {
      const total = [...s.steps.values()].reduce((t, x) => add(t, x), empty(metric));
      return { ...s, total };
    });
    all.sort(
      (a, b) =>
        b.total.events - a.total.events || (JSON.stringify(a.labels) < JSON.stringify(b.labels) ? -1 : 1),
    );
    const listed = all.filter((s) => s.total.events > 0).slice(0, limit);
    if (listed.length * points > MAX_FIGURES)
      throw fieldError(
        names.limit,
        `${listed.length} series of ${points} points is more than ${MAX_FIGURES.toLocaleString('en-US')}: a lower limit, a longer step or a shorter range.`,
      );
    const { dropped } = await this.events.metricCounts(metric.id, generation);
    return {
      metric: { id: metric.id, name: metric.name, kind: metric.kind, field: metric.field },
      from: from / 1000,
      to: to / 1000,
      step: step / 1000,
      labels: [...kept],
      series: listed.map((s) => ({
        labels: Object.fromEntries(kept.map((l, i) => [l, s.labels[i] ?? ''])),
        total: figures(metric, s.total),
        points: Array.from({ length: points }, (_, k) => {
          const ts = from + k * step;
          return { ts: ts / 1000, ...figures(metric, s.steps.get(ts) ?? empty(metric)) };
        }),
      })),
      dropped_series: dropped,
      truncated: all.filter((s) => s.total.events > 0).length > listed.length,
      rebuilding: false,
    };
  }
}

const empty = (metric: LogMetric): Aggregate => emptyAggregate(metric.kind);

/** `into` plus a row's or another sum's figures, sketches merged as they come. */
export function add(into: Aggregate, r: Aggregate | MetricBucketRow): Aggregate {
  into.events += r.events;
  into.count += r.count;
  into.sum += r.sum;
  if (r.min !== null) into.min = into.min === null ? r.min : Math.min(into.min, r.min);
  if (r.max !== null) into.max = into.max === null ? r.max : Math.max(into.max, r.max);
  if (into.sketch) {
    if ('sketches' in r) for (const bytes of r.sketches) mergeSketch(into.sketch, decodeSketch(bytes));
    else if (r.sketch) mergeSketch(into.sketch, r.sketch);
  }
  return into;
}

/** A point's or total's figures as the contract writes them, by the metric's kind. */
function figures(metric: LogMetric, a: Aggregate): MetricFigures {
  if (metric.kind === 'count') return { events: a.events, value: a.events };
  const none = a.count === 0;
  const out: MetricFigures = {
    events: a.events,
    count: a.count,
    sum: none ? 0 : a.sum,
    min: none ? null : a.min,
    max: none ? null : a.max,
    avg: none ? null : a.sum / a.count,
    value: null,
  };
  if (metric.kind === 'quantiles') {
    const qs = metric.quantiles ?? [];
    out.quantiles = Object.fromEntries(
      qs.map((q) => [JSON.stringify(q), none || !a.sketch ? null : sketchQuantile(a.sketch, q)]),
    );
    out.value = out.quantiles[JSON.stringify(qs[0])] ?? null;
  } else out.value = { sum: out.sum, avg: out.avg, min: out.min, max: out.max }[metric.kind] ?? null;
  return out;
}
