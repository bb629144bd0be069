/**
 * Reads of the log metrics' buckets (ADR 0035), of the stream sets a reader's scope reads
 * (rollups/metric-store.ts `setTest`): the sets are chosen first, so rows the reader may not
 * read neither answer nor count toward a read's row bound. `claimed`: the streams with a rule
 * now (a set's other ids name deleted streams).
 */
import type { ReadScope } from '../read-scope.js';
import {
  type MetricBucketRow,
  type MetricBucketsRead,
  type MetricTotalRow,
  setTest,
} from '../rollups/metric-store.js';
import { listValue } from './duckdb-api.js';
import { tsValue } from './duckdb-schema.js';
import type { Bound } from './statement-gate.js';

/** Runs a statement on the store's read side and answers its rows. */
export type MetricQuery = (sql: string, params: readonly Bound[]) => Promise<Record<string, unknown>[]>;

/**
 * A metric's rows in the read's range, summed by step, stream set and label tuple, of the
 * stream sets the read's scope reads (`setTest`): those are chosen first, so rows the
 * reader may not read neither answer nor count toward `maxRows`.
 */
export async function readBuckets(
  query: MetricQuery,
  q: MetricBucketsRead,
  claimed: ReadonlySet<number>,
): Promise<MetricBucketRow[]> {
  const range: Bound[] = [q.metric, BigInt(q.generation), tsValue(q.fromMs), tsValue(q.toMs)];
  const where = 'metric = $1 AND generation = $2 AND bucket >= $3 AND bucket < $4';
  const reads = setTest(q.scope, claimed, q.only);
  const sets = (await query(`SELECT DISTINCT streams FROM metric_buckets WHERE ${where}`, range))
    .map((r) => String(r.streams))
    .filter(reads);
  if (sets.length === 0) return [];
  const rows = await query(
    `SELECT (epoch_ms(bucket) // $5) * $5 AS step, streams, labels, sum(events) AS events, sum(count) AS count,
       sum(sum) AS sum, min(min) AS min, max(max) AS max,
       list(sketch) FILTER (WHERE sketch IS NOT NULL) AS sketches
     FROM metric_buckets
     WHERE ${where} AND list_contains($6::VARCHAR[], streams)
     GROUP BY ALL ORDER BY step LIMIT $7`,
    [...range, BigInt(Math.round(q.stepMs)), listValue(sets), BigInt(q.maxRows + 1)],
  );
  return rows.map((r) => ({
    stepMs: Number(r.step),
    streams: String(r.streams),
    labels: JSON.parse(String(r.labels)) as string[],
    events: Number(r.events),
    count: Number(r.count),
    sum: Number(r.sum),
    min: r.min === null ? null : Number(r.min),
    max: r.max === null ? null : Number(r.max),
    sketches: (r.sketches as Uint8Array[] | null) ?? [],
  }));
}

/**
 * A metric's figures since counting began (its buckets and what retention took), by
 * stream set and labels, of the stream sets `scope` reads (`setTest`).
 */
export async function readTotals(
  query: MetricQuery,
  metric: number,
  generation: number,
  scope: ReadScope,
  claimed: ReadonlySet<number>,
): Promise<MetricTotalRow[]> {
  const reads = setTest(scope, claimed);
  // One statement: one snapshot, so a key's events, count and sum count the same events.
  const rows = await query(
    `SELECT streams, labels, sum(events) AS events, sum(count) AS count, sum(sum) AS sum FROM (
       SELECT streams, labels, events, count, sum FROM metric_buckets WHERE metric = $1 AND generation = $2
       UNION ALL
       SELECT streams, labels, events, count, sum FROM metric_past WHERE metric = $1 AND generation = $2)
     GROUP BY ALL`,
    [metric, BigInt(generation)],
  );
  return rows
    .filter((r) => reads(String(r.streams)))
    .map((r) => ({
      streams: String(r.streams),
      labels: JSON.parse(String(r.labels)) as string[],
      events: Number(r.events),
      count: Number(r.count),
      sum: Number(r.sum),
    }));
}
