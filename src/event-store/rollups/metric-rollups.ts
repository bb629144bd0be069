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
  /** `key`: the tuple's `tupleKey`, when the caller has it. */
  admit(rule: MetricRule, tuple: readonly string[], key?: string): boolean;
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

type BatchRow = RollupRow & { error: number };

/** A label tuple as one string: `\u0002` and its texts joined by NUL, or `\u0001` and JSON when a text holds a NUL. */
export function tupleKey(texts: readonly string[]): string {
  for (const t of texts) if (t.includes('\u0000')) return `\u0001${JSON.stringify(texts)}`;
  return `\u0002${texts.join('\u0000')}`;
}

/**
 * The rules that read the same label fields in the same order at the same resolution: an
 * event's key (bucket, stream set, label texts) is found once for all of them, as a slot
 * number their rows are kept under.
 */
interface Signature {
  readonly positions: readonly number[];
  readonly resolutionMs: number;
  readonly slots: Map<string, number>;
  readonly labels: string[][];
  readonly keys: string[];
  readonly buckets: number[];
}

/**
 * A batch's partial aggregates: `add` each stored event with its stream set, then `take`
 * the rows. Sums are compensated (Neumaier) within the batch.
 *
 * Built for many metrics over one batch (50 of 5 labels, §26's ingest goal): the rules
 * sharing a query test an event once; each label field and numeric field is read once an
 * event whatever the number of rules reading it; the rules reading the same labels at the
 * same resolution find an event's key once (a slot), each then its row by the slot's
 * number; the series gate is asked once a tuple a batch; folded tuples share a row.
 */
export class RollupBatch {
  /** Per rule (by position): its rows by slot of its signature (several slots, tuples folded, for one row). */
  private readonly rows: Array<Array<BatchRow | undefined>>;
  /** Per rule: the fold's row by bucket and stream set. */
  private readonly folds: Array<Map<string, BatchRow>>;
  /** The rules by query: each query tested once an event. */
  private readonly groups: ReadonlyArray<{
    readonly matches: (e: EventLike) => boolean;
    readonly rules: number[];
  }>;
  private readonly signatures: Signature[] = [];
  /** Per rule: its signature's position. */
  private readonly signatureOf: number[];
  /** The fields labels and figures read, each read once an event. */
  private readonly labelFields: string[] = [];
  private readonly numberFields: string[] = [];
  /** Per rule: its field's position in `numberFields` (-1: none). */
  private readonly numberAt: number[];

  constructor(
    private readonly rules: readonly CountingRule[],
    private readonly gate: SeriesGate,
  ) {
    this.rows = rules.map(() => []);
    this.folds = rules.map(() => new Map());
    const byQuery = new Map<string, { matches: (e: EventLike) => boolean; rules: number[] }>();
    rules.forEach((rule, i) => {
      const key = JSON.stringify(rule.filter);
      const group = byQuery.get(key);
      if (group) group.rules.push(i);
      else byQuery.set(key, { matches: rule.matches, rules: [i] });
    });
    this.groups = [...byQuery.values()];
    const at = (list: string[], field: string) => {
      const i = list.indexOf(field);
      return i >= 0 ? i : list.push(field) - 1;
    };
    const bySignature = new Map<string, number>();
    this.signatureOf = rules.map((r) => {
      const positions = r.labels.map((f) => at(this.labelFields, f));
      const key = `${r.resolutionMs}:${positions.join(',')}`;
      let n = bySignature.get(key);
      if (n === undefined) {
        n =
          this.signatures.push({
            positions,
            resolutionMs: r.resolutionMs,
            slots: new Map(),
            labels: [],
            keys: [],
            buckets: [],
          }) - 1;
        bySignature.set(key, n);
      }
      return n;
    });
    this.numberAt = rules.map((r) => (r.field === null ? -1 : at(this.numberFields, r.field)));
  }

  add(event: Counted, streams: string): void {
    const texts: Array<string | undefined> = new Array(this.labelFields.length);
    const numbers: Array<number | null | undefined> = new Array(this.numberFields.length);
    const slots: Array<number | undefined> = new Array(this.signatures.length);
    for (const group of this.groups) {
      if (!group.matches(event)) continue;
      for (const i of group.rules) {
        const sigAt = this.signatureOf[i] as number;
        const sig = this.signatures[sigAt] as Signature;
        let slot = slots[sigAt];
        if (slot === undefined) {
          const labels: string[] = new Array(sig.positions.length);
          for (let k = 0; k < labels.length; k++) {
            const p = sig.positions[k] as number;
            let text = texts[p];
            if (text === undefined) {
              text = labelText(event, this.labelFields[p] as string);
              texts[p] = text;
            }
            labels[k] = text;
          }
          const bucketMs = bucketOf(event.ts, sig.resolutionMs);
          const tuple = tupleKey(labels);
          const key = `${bucketMs}\u0000${streams}\u0000${tuple}`;
          slot = sig.slots.get(key);
          if (slot === undefined) {
            slot = sig.labels.push(labels) - 1;
            sig.keys.push(tuple);
            sig.buckets.push(bucketMs);
            sig.slots.set(key, slot);
          }
          slots[sigAt] = slot;
        }
        const rows = this.rows[i] as Array<BatchRow | undefined>;
        let row = rows[slot];
        if (!row) {
          row = this.rowOf(
            i,
            sig.labels[slot] as string[],
            sig.keys[slot] as string,
            sig.buckets[slot] as number,
            streams,
          );
          rows[slot] = row;
        }
        const agg = row.agg;
        agg.events++;
        const n = this.numberAt[i] as number;
        if (n < 0) continue;
        let v = numbers[n];
        if (v === undefined) {
          v = metricNumber(event, this.numberFields[n] as string);
          numbers[n] = v;
        }
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
  }

  /** The row of a tuple new to rule `i` in this batch: its own, or the fold's when the gate folds it. */
  private rowOf(i: number, labels: string[], tuple: string, bucketMs: number, streams: string): BatchRow {
    const rule = this.rules[i] as CountingRule;
    const row = (kept: readonly string[]): BatchRow => ({
      metric: rule.id,
      generation: rule.generation,
      bucketMs,
      streams,
      labels: kept,
      agg: emptyAggregate(rule.kind),
      error: 0,
    });
    if (labels.length === 0 || this.gate.admit(rule, labels, tuple)) return row(labels);
    const folds = this.folds[i] as Map<string, BatchRow>;
    const key = `${bucketMs}\u0000${streams}`;
    let fold = folds.get(key);
    if (!fold) {
      fold = row(rule.labels.map(() => OTHER));
      folds.set(key, fold);
    }
    return fold;
  }

  /** The rows, each key once; the batch is empty after. */
  take(): RollupRow[] {
    const out: RollupRow[] = [];
    this.rows.forEach((rows, i) => {
      const seen = new Set<BatchRow>();
      for (const row of rows) if (row && !seen.has(row)) seen.add(row);
      for (const row of (this.folds[i] as Map<string, BatchRow>).values()) seen.add(row);
      for (const row of seen) {
        const { error, ...r } = row;
        r.agg.sum += error;
        out.push(r);
      }
      rows.length = 0;
      (this.folds[i] as Map<string, BatchRow>).clear();
    });
    for (const sig of this.signatures) {
      sig.slots.clear();
      sig.labels.length = 0;
      sig.keys.length = 0;
      sig.buckets.length = 0;
    }
    return out;
  }
}
