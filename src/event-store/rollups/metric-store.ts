/**
 * What an event store keeps for log metrics (ADR 0035), as the stores and the log-metrics
 * feature speak of it: the rules it counts by, the rows a read gets, and whether a stream
 * set counts for a reader.
 */
import type { ReadScope } from '../read-scope.js';
import type { Aggregate, MetricRule } from './metric-rollups.js';

/** The stream set of an event no stream's rule claims: the built-in stream. */
export const BUILT_IN_SET = '';

/** The stream set an event belongs to under `rules`: the ids of the streams whose rule takes it. */
export const streamSetOf = (ids: readonly number[]): string => ids.join(',');

/** The ids of a stream set's streams (none: the built-in set). */
export const setIds = (set: string): number[] => (set === BUILT_IN_SET ? [] : set.split(',').map(Number));

/**
 * The streams a metric read is narrowed to (a series' `streams`, a Metric query's
 * `params.streams`), each checked readable by the streams feature: their ids but the
 * built-in stream's, and whether the built-in stream is one of them.
 */
export interface StreamChoice {
  readonly ids: readonly number[];
  readonly unclaimed: boolean;
}

/**
 * Whether a stream set counts for a read in `scope` (ADR 0035), the test every metric read
 * goes through in the store, as every event read goes through its scope's filter: a set
 * counts when the scope reads one of its streams (an administrator's and the system's
 * read every set), or the built-in stream for a set whose streams no rule names now
 * (`claimed`: the streams with a rule, as the store keeps them; a set naming only deleted
 * streams reads as the built-in one); with `only`, a set holding one of those. A scope
 * not made of streams reads no set.
 */
export function setTest(
  scope: ReadScope,
  claimed: ReadonlySet<number>,
  only?: StreamChoice,
): (set: string) => boolean {
  const every = scope.filter === null;
  const streams = scope.streams;
  if (!every && !streams) return () => false;
  const readable = streams && !every ? new Set(streams.ids) : null;
  const unclaimed = (every || streams?.unclaimed === true) && (only ? only.unclaimed : true);
  const chosen = only ? new Set(only.ids) : null;
  return (set) => {
    const ids = setIds(set).filter((id) => claimed.has(id));
    if (ids.length === 0) return unclaimed;
    return ids.some((id) => (readable === null || readable.has(id)) && (chosen === null || chosen.has(id)));
  };
}

/**
 * A read of one metric's buckets: its generation's, in `[fromMs, toMs)`, summed by
 * `stepMs`, of the stream sets `scope` reads (`setTest`), narrowed to `only`.
 */
export interface MetricBucketsRead {
  readonly scope: ReadScope;
  readonly only?: StreamChoice | undefined;
  readonly metric: number;
  readonly generation: number;
  readonly fromMs: number;
  readonly toMs: number;
  readonly stepMs: number;
  /** At most this many rows (a read that would give more gets `maxRows + 1`). */
  readonly maxRows: number;
}

/**
 * A metric's figures since counting began (`counting_since`), by stream set and label
 * tuple: its buckets' and those retention has taken (the Prometheus counters).
 */
export interface MetricTotalRow {
  readonly streams: string;
  readonly labels: readonly string[];
  readonly events: number;
  readonly count: number;
  readonly sum: number;
}

/**
 * One window of a backfill (docs/api/log-metrics.md "Backfill"): the events of `[fromMs,
 * toMs)` (bucket-aligned) matching the rule and stored before `storedBefore` (the metric's
 * `counting_since`), counted under the stream sets they belong to now.
 */
export interface MetricBackfill {
  readonly rule: MetricRule;
  readonly fromMs: number;
  readonly toMs: number;
  readonly storedBefore: number;
}

/** A window counted (`events`), or refused: a backfill covered part of it already, or the rule changed. */
export type MetricBackfillResult =
  | { readonly events: number }
  | { readonly overlaps: true }
  /** The metric was reset or deleted while the window was read. */
  | { readonly stale: true };

/** A time range a backfill covered, Unix ms `[fromMs, toMs)`. */
export interface CoveredRange {
  readonly fromMs: number;
  readonly toMs: number;
}

/** What a run of the buckets' upkeep did: buckets that passed retention, keys merged. */
export interface MetricUpkeep {
  readonly expired: number;
  readonly compacted: number;
  /** Keys were left to merge: run again. */
  readonly more: boolean;
}

/**
 * One step of one stream set and label tuple (the buckets in it summed): the aggregate's
 * figures, and its buckets' sketches as bytes (sketch.ts), merged by the reader.
 */
export interface MetricBucketRow extends Omit<Aggregate, 'sketch'> {
  readonly stepMs: number;
  readonly streams: string;
  readonly labels: readonly string[];
  readonly sketches: readonly Uint8Array[];
}
