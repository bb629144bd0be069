/**
 * What a log metric counts of each event (docs/api/log-metrics.md, "Counting at ingest"):
 * the bucket of its time, its label values, the number its field holds, and the partial
 * aggregates of a batch per (metric, generation, bucket, stream set, label values), which a
 * store writes in the transaction that stores the batch. Pure: plain data in and out, the
 * same for every store and for a backfill, which counts stored events the same way.
 */
import { EVENT_SCHEMA, type NormalisedEvent } from '../../core/event.js';
import { decodeShape, typedValue } from '../../core/record-shape.js';
import type { FilterNode } from '../../filter/ast.js';
import { compilePredicate, type EventLike } from '../../filter/evaluate.js';
import { mergeSketch, newSketch, type Sketch } from './sketch.js';

export type MetricKind = 'count' | 'sum' | 'avg' | 'min' | 'max' | 'quantiles';

/** A log metric as a store counts it: given by the log-metrics feature, as streams give their rules. */
export interface MetricRule {
  readonly id: number;
  /** Changes when what is counted changes (a reset): buckets of an older generation are not read. */
  readonly generation: number;
  readonly kind: MetricKind;
  /** The field whose numbers are aggregated; null for `count`. */
  readonly field: string | null;
  readonly labels: readonly string[];
  readonly resolutionMs: number;
  /** Buckets older than this (ms before now) leave the series; their counts stay in the totals. */
  readonly retentionMs: number;
  /** Label tuples with a series of their own at most; the others fold into `OTHER`'s. */
  readonly maxSeries: number;
  /** The metric's query as a Search tests it (data, so it crosses to the store's worker). */
  readonly filter: FilterNode;
}

/** A rule with its query compiled (filter/evaluate.ts, held equal to both SQL compilers). */
export interface CountingRule extends MetricRule {
  readonly matches: (event: EventLike) => boolean;
}

export const countingRule = (rule: MetricRule): CountingRule => ({
  ...rule,
  matches: compilePredicate(rule.filter),
});

/** The label value of the series events fold into past `maxSeries`. */
export const OTHER = '__other__';
/** A label value is cut to this many characters (code points). */
export const LABEL_CHARS = 200;

/** The start (Unix ms) of the bucket of `resolutionMs` holding `ts`, aligned on Unix time. */
export const bucketOf = (ts: number, resolutionMs: number): number =>
  Math.floor(ts / resolutionMs) * resolutionMs;

/** The schema's columns that hold numbers, and the other columns a label can read. */
const NUMBER_COLUMNS = new Set<string>(
  EVENT_SCHEMA.filter((c) => c.type === 'int32' || c.type === 'int64').map((c) => c.name),
);
const LABEL_COLUMNS = new Set<string>(
  EVENT_SCHEMA.filter((c) => c.type !== 'map' && c.type !== 'time' && !('internal' in c)).map((c) => c.name),
);

type Counted = EventLike & Pick<NormalisedEvent, 'ts' | 'fields' | 'shape'>;

/** The JSON type a field was sent as (record-shape.ts); undefined: a string. */
const typeOf = (e: Counted, field: string) => {
  const types = e.shape ? decodeShape(e.shape).t : undefined;
  return types && Object.hasOwn(types, field) ? types[field] : undefined;
};

/**
 * The finite number `field` holds: a numeric column's value, or a field sent as a JSON
 * number. Numeric text (`"12"`) is not a number; null when there is none.
 */
export function metricNumber(e: Counted, field: string): number | null {
  if (NUMBER_COLUMNS.has(field)) {
    const v = (e as Record<string, unknown>)[field];
    return typeof v === 'number' && Number.isFinite(v) ? v : null;
  }
  if (!Object.hasOwn(e.fields, field) || typeOf(e, field) !== 'n') return null;
  const n = Number(e.fields[field]);
  return Number.isFinite(n) ? n : null;
}

/**
 * A label's value: the field's value as text (numbers as JSON writes them, `true`/`false`,
 * arrays and objects as compact JSON), cut to `LABEL_CHARS`; `""` when the event has none.
 */
export function labelText(e: Counted, field: string): string {
  let text: string;
  if (LABEL_COLUMNS.has(field)) {
    const v = (e as Record<string, unknown>)[field];
    if (v === null || v === undefined) return '';
    text = typeof v === 'string' ? v : JSON.stringify(v);
  } else {
    if (!Object.hasOwn(e.fields, field)) return '';
    const value = typedValue(e.fields[field] as string, typeOf(e, field));
    text = typeof value === 'string' ? value : JSON.stringify(value);
  }
  if (text.length <= LABEL_CHARS) return text;
  return Array.from(text).slice(0, LABEL_CHARS).join('');
}

/** What a key holds: matching events and, for kinds with a field, its numbers' figures. */
export interface Aggregate {
  events: number;
  count: number;
  sum: number;
  min: number | null;
  max: number | null;
  /** For `quantiles` only. */
  sketch: Sketch | null;
}

export const emptyAggregate = (kind: MetricKind): Aggregate => ({
  events: 0,
  count: 0,
  sum: 0,
  min: null,
  max: null,
  sketch: kind === 'quantiles' ? newSketch() : null,
});

/** One key's partial aggregate of a batch. */
export interface RollupRow {
  readonly metric: number;
  readonly generation: number;
  readonly bucketMs: number;
  /** The stream set the events belong to, as the store names it (its stream ids). */
  readonly streams: string;
  readonly labels: readonly string[];
  readonly agg: Aggregate;
}

/** Whether a label tuple gets a series of its own (`SeriesBook`); false: it folds into `OTHER`. */
export interface SeriesGate {
  admit(rule: MetricRule, tuple: readonly string[]): boolean;
}

/** Admits every tuple: a backfill's rows before the store's book decides (`MetricBuckets.writeBackfill`). */
export const ADMIT_ALL: SeriesGate = { admit: () => true };

/** `into` with `from`'s figures added (`into` changes; sketches merged). */
export function mergeAggregate(into: Aggregate, from: Aggregate): Aggregate {
  into.events += from.events;
  into.count += from.count;
  into.sum += from.sum;
  if (from.min !== null) into.min = into.min === null ? from.min : Math.min(into.min, from.min);
  if (from.max !== null) into.max = into.max === null ? from.max : Math.max(into.max, from.max);
  if (into.sketch && from.sketch) mergeSketch(into.sketch, from.sketch);
  return into;
}

/**
 * A batch's partial aggregates: `add` each stored event with its stream set, then `take`
 * the rows. Sums are compensated (Neumaier) within the batch.
 */
export class RollupBatch {
  private readonly rows = new Map<string, RollupRow & { error: number }>();

  constructor(
    private readonly rules: readonly CountingRule[],
    private readonly gate: SeriesGate,
  ) {}

  add(event: Counted, streams: string): void {
    for (const rule of this.rules) {
      if (!rule.matches(event)) continue;
      let labels = rule.labels.map((f) => labelText(event, f));
      if (labels.length > 0 && !this.gate.admit(rule, labels)) labels = rule.labels.map(() => OTHER);
      const bucketMs = bucketOf(event.ts, rule.resolutionMs);
      const key = JSON.stringify([rule.id, rule.generation, bucketMs, streams, labels]);
      let row = this.rows.get(key);
      if (!row) {
        row = {
          metric: rule.id,
          generation: rule.generation,
          bucketMs,
          streams,
          labels,
          agg: emptyAggregate(rule.kind),
          error: 0,
        };
        this.rows.set(key, row);
      }
      const agg = row.agg;
      agg.events++;
      const v = rule.field === null ? null : metricNumber(event, rule.field);
      if (v === null) continue;
      agg.count++;
      const t = agg.sum + v;
      row.error += Math.abs(agg.sum) >= Math.abs(v) ? agg.sum - t + v : v - t + agg.sum;
      agg.sum = t;
      agg.min = agg.min === null ? v : Math.min(agg.min, v);
      agg.max = agg.max === null ? v : Math.max(agg.max, v);
      agg.sketch?.accept(v);
    }
  }

  /** The rows, each key once; the batch is empty after. */
  take(): RollupRow[] {
    const out = [...this.rows.values()].map(({ error, ...row }) => {
      row.agg.sum += error;
      return row;
    });
    this.rows.clear();
    return out;
  }
}
