/**
 * Log metrics' buckets in the DuckDB store (ADR 0035): each append's partial aggregates,
 * written in the transaction that stores its events (so an event counts once, across a
 * crash too), and the label tuples that have a series of their own. A read sums a metric's
 * rows by step, stream set and label tuple; sketches merge in the process.
 */
import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import type { NormalisedEvent, StoredEvent } from '../../core/event.js';
import { compilePredicate, type EventLike } from '../../filter/evaluate.js';
import type { ReadScope, StreamRules } from '../read-scope.js';
import {
  ADMIT_ALL,
  type CountingRule,
  countingRule,
  type MetricRule,
  mergeAggregate,
  OTHER,
  RollupBatch,
  type RollupRow,
} from '../rollups/metric-rollups.js';
import {
  type CoveredRange,
  type MetricBackfill,
  type MetricBackfillResult,
  type MetricBucketRow,
  type MetricBucketsRead,
  type MetricTotalRow,
  type MetricUpkeep,
  streamSetOf,
} from '../rollups/metric-store.js';
import { type DroppedSketch, SeriesBook, type SeriesChange } from '../rollups/series-book.js';
import { decodeSketch, encodeSketch, mergeSketch, newSketch } from '../rollups/sketch.js';
import { blobValue, DuckDBDataChunk } from './duckdb-api.js';
import { tsValue } from './duckdb-schema.js';
import { type MetricQuery, readBuckets, readTotals } from './metric-reads.js';
import type { Bound } from './statement-gate.js';

const CREATE = [
  `CREATE TABLE IF NOT EXISTS metric_buckets (
    metric INTEGER NOT NULL, generation BIGINT NOT NULL, bucket TIMESTAMP NOT NULL,
    streams VARCHAR NOT NULL, labels VARCHAR NOT NULL,
    events BIGINT NOT NULL, count BIGINT NOT NULL, sum DOUBLE NOT NULL,
    min DOUBLE, max DOUBLE, sketch BLOB)`,
  // What retention took from the buckets, summed by key: the totals keep counting it.
  `CREATE TABLE IF NOT EXISTS metric_past (
    metric INTEGER NOT NULL, generation BIGINT NOT NULL, streams VARCHAR NOT NULL, labels VARCHAR NOT NULL,
    events BIGINT NOT NULL, count BIGINT NOT NULL, sum DOUBLE NOT NULL)`,
  // The ranges backfills covered (docs/api/log-metrics.md "Backfill"), written with their rows.
  `CREATE TABLE IF NOT EXISTS metric_backfilled (
    metric INTEGER NOT NULL, generation BIGINT NOT NULL, from_ms BIGINT NOT NULL, to_ms BIGINT NOT NULL)`,
  // The upkeep's merged rows on their way back (empty between runs).
  `CREATE TABLE IF NOT EXISTS metric_buckets_merged AS SELECT * FROM metric_buckets LIMIT 0`,
  `CREATE TABLE IF NOT EXISTS metric_series (
    metric INTEGER NOT NULL, generation BIGINT NOT NULL, labels VARCHAR NOT NULL, own BOOLEAN NOT NULL)`,
  // Past 100,000 folded tuples a metric, their distinct-count sketch (series-book.ts).
  `CREATE TABLE IF NOT EXISTS metric_dropped (
    metric INTEGER NOT NULL, generation BIGINT NOT NULL, registers BLOB NOT NULL)`,
];

/** Label tuples with a series of their own, at most, over every metric (`logMetricTotalSeries`). */
export const TOTAL_SERIES = 1_000_000;

/** Rows a column chunk of `write` holds (DuckDB's vector size). */
const CHUNK_ROWS = 2048;

/** Keys (metric, generation, bucket, stream set, labels) merged by one run of the upkeep, at most. */
export const COMPACT_KEYS = 50_000;

const KEY = ['metric', 'generation', 'bucket', 'streams', 'labels'];
const sameKey = (a: string, b: string, key = KEY) => key.map((k) => `${a}.${k} = ${b}.${k}`).join(' AND ');

export class MetricBuckets {
  private rules: readonly CountingRule[] = [];
  private streams: ReadonlyArray<{ id: number; test: (e: EventLike) => boolean }> = [];

  private constructor(private readonly book: SeriesBook) {}

  static async open(writer: DuckDBConnection): Promise<MetricBuckets> {
    for (const sql of CREATE) await writer.run(sql);
    const book = new SeriesBook(TOTAL_SERIES);
    const rows = (
      await writer.runAndReadAll('SELECT metric, generation, labels, own FROM metric_series')
    ).getRowObjects();
    for (const r of rows)
      book.load(
        Number(r.metric),
        Number(r.generation),
        JSON.parse(String(r.labels)) as string[],
        r.own === true,
      );
    const sketches = (
      await writer.runAndReadAll('SELECT metric, generation, registers FROM metric_dropped')
    ).getRowObjects();
    for (const r of sketches)
      book.loadSketch(Number(r.metric), Number(r.generation), (r.registers as { bytes: Uint8Array }).bytes);
    return new MetricBuckets(book);
  }

  /** The metrics to count by, from the next append on (the append queue gives them in turn). */
  setRules(rules: readonly MetricRule[]): void {
    this.rules = rules.map(countingRule);
  }

  /** The streams' rules an event's stream set is made of. */
  setStreams(rules: StreamRules): void {
    this.streams = rules.streams.map((s) => ({ id: s.id, test: compilePredicate(s.filter) }));
  }

  /** A batch's rows (the series it admits are pending in the book until `committed`). */
  count(events: readonly NormalisedEvent[], storedAt: number): RollupRow[] {
    if (this.rules.length === 0) return [];
    const batch = new RollupBatch(this.rules, this.book);
    for (const e of events) {
      // The event as stored: a query or a stream's rule may read `stored_at`.
      const event = { ...e, stored_at: storedAt };
      batch.add(event, this.setOf(event));
    }
    return batch.take();
  }

  /** The stream set an event belongs to under the streams' rules now. */
  private setOf(event: EventLike): string {
    const ids: number[] = [];
    for (const s of this.streams) if (s.test(event)) ids.push(s.id);
    return streamSetOf(ids);
  }

  /**
   * A backfill window's counting: stored events added as read, by their own label tuples
   * (the book admits them in `writeBackfill`, in the append queue's turn).
   */
  backfillBatch(rule: MetricRule): { add(e: StoredEvent): void; take(): RollupRow[] } {
    const batch = new RollupBatch([countingRule(rule)], ADMIT_ALL);
    return { add: (e) => batch.add(e, this.setOf(e)), take: () => batch.take() };
  }

  /**
   * Writes a backfill window's rows, their tuples admitted by the book now, and the range it
   * covers, in one transaction: a window that overlaps one covered before, or a metric no
   * longer counted as the window was read (reset, deleted), writes nothing.
   */
  async writeBackfill(
    conn: DuckDBConnection,
    req: MetricBackfill,
    rows: readonly RollupRow[],
    events: number,
  ): Promise<MetricBackfillResult> {
    const { rule } = req;
    const id = Math.trunc(rule.id);
    const generation = Math.trunc(rule.generation);
    if (!this.rules.some((r) => r.id === id && r.generation === generation)) return { stale: true };
    const [{ n }] = (
      await conn.runAndReadAll(
        `SELECT count(*)::INTEGER AS n FROM metric_backfilled WHERE metric = ${id} AND generation = ${generation}
         AND from_ms < ${Math.trunc(req.toMs)} AND to_ms > ${Math.trunc(req.fromMs)}`,
      )
    ).getRowObjects() as [{ n: number }];
    if (n > 0) return { overlaps: true };
    const keyed = new Map<string, RollupRow>();
    for (const r of rows) {
      const own = r.labels.length === 0 || this.book.admit(rule, r.labels);
      const labels = own ? r.labels : rule.labels.map(() => OTHER);
      const key = JSON.stringify([r.bucketMs, r.streams, labels]);
      const at = keyed.get(key);
      if (at) mergeAggregate(at.agg, r.agg);
      else keyed.set(key, { ...r, labels });
    }
    await conn.run('BEGIN TRANSACTION');
    try {
      await this.write(conn, [...keyed.values()]);
      await conn.run(
        `INSERT INTO metric_backfilled VALUES (${id}, ${generation}, ${Math.trunc(req.fromMs)}, ${Math.trunc(req.toMs)})`,
      );
      await conn.run('COMMIT');
    } catch (err) {
      await conn.run('ROLLBACK').catch(() => undefined);
      this.book.abort();
      throw err;
    }
    this.book.commit();
    return { events };
  }

  /** The ranges backfills covered for a metric's generation, adjacent ones merged. */
  async backfilled(
    query: (sql: string, params: readonly Bound[]) => Promise<Record<string, unknown>[]>,
    metric: number,
    generation: number,
  ): Promise<CoveredRange[]> {
    const rows = await query(
      'SELECT from_ms, to_ms FROM metric_backfilled WHERE metric = $1 AND generation = $2 ORDER BY from_ms',
      [metric, BigInt(generation)],
    );
    const out: Array<{ fromMs: number; toMs: number }> = [];
    for (const r of rows) {
      const fromMs = Number(r.from_ms);
      const toMs = Number(r.to_ms);
      const last = out[out.length - 1];
      if (last && fromMs <= last.toMs) last.toMs = Math.max(last.toMs, toMs);
      else out.push({ fromMs, toMs });
    }
    return out;
  }

  /**
   * Writes a batch's rows and the series it admitted, in the caller's transaction: the rows
   * as column chunks (one appender call a chunk, not eleven a row: with 50 metrics an
   * append writes several rows an event), a tuple's JSON written once however many rows
   * share its labels.
   */
  async write(conn: DuckDBConnection, rows: readonly RollupRow[]): Promise<void> {
    if (rows.length > 0) {
      const a = await conn.createAppender('metric_buckets');
      try {
        const types = Array.from({ length: a.columnCount }, (_, i) => a.columnType(i));
        const json = new Map<readonly string[], string>();
        for (let start = 0; start < rows.length; start += CHUNK_ROWS) {
          const part = rows.slice(start, start + CHUNK_ROWS);
          const cols: DuckDBValue[][] = types.map(() => new Array<DuckDBValue>(part.length));
          const [metric, generation, bucket, streams, labels, events, count, sum, min, max, sketch] =
            cols as [
              DuckDBValue[],
              DuckDBValue[],
              DuckDBValue[],
              DuckDBValue[],
              DuckDBValue[],
              DuckDBValue[],
              DuckDBValue[],
              DuckDBValue[],
              DuckDBValue[],
              DuckDBValue[],
              DuckDBValue[],
            ];
          part.forEach((r, i) => {
            metric[i] = r.metric;
            generation[i] = BigInt(r.generation);
            bucket[i] = tsValue(r.bucketMs);
            streams[i] = r.streams;
            let text = json.get(r.labels);
            if (text === undefined) {
              text = JSON.stringify(r.labels);
              json.set(r.labels, text);
            }
            labels[i] = text;
            events[i] = BigInt(r.agg.events);
            count[i] = BigInt(r.agg.count);
            sum[i] = r.agg.sum;
            min[i] = r.agg.min;
            max[i] = r.agg.max;
            sketch[i] = r.agg.sketch ? blobValue(encodeSketch(r.agg.sketch)) : null;
          });
          const chunk = DuckDBDataChunk.create(types, part.length);
          chunk.setColumns(cols);
          a.appendDataChunk(chunk);
        }
        a.flushSync();
      } finally {
        a.closeSync();
      }
    }
    const changes: readonly SeriesChange[] = this.book.pending();
    if (changes.length === 0) return;
    const a = await conn.createAppender('metric_series');
    try {
      for (const c of changes) {
        a.appendInteger(c.metric);
        a.appendBigInt(BigInt(c.generation));
        a.appendVarchar(JSON.stringify(c.tuple));
        a.appendBoolean(c.own);
        a.endRow();
      }
      a.flushSync();
    } finally {
      a.closeSync();
    }
  }

  /** The batch's transaction committed: the series it admitted are the store's. */
  committed(): void {
    this.book.commit();
  }

  /** It failed: they are not. */
  aborted(): void {
    this.book.abort();
  }

  /** A metric's series of its own and its folded tuples. */
  counts(metric: number, generation: number): { series: number; dropped: number } {
    return this.book.counts(metric, generation);
  }

  /** The streams with a rule now: a set's other ids name deleted streams (`setTest`). */
  private claimed(): Set<number> {
    return new Set(this.streams.map((s) => s.id));
  }

  /** A metric's rows in the read's range (metric-reads.ts), of the sets the read's scope reads. */
  read(query: MetricQuery, q: MetricBucketsRead): Promise<MetricBucketRow[]> {
    return readBuckets(query, q, this.claimed());
  }

  /** A metric's figures since counting began (metric-reads.ts), of the sets `scope` reads. */
  totals(
    query: MetricQuery,
    metric: number,
    generation: number,
    scope: ReadScope,
  ): Promise<MetricTotalRow[]> {
    return readTotals(query, metric, generation, scope, this.claimed());
  }

  /**
   * The upkeep, in one transaction (the append queue's turn): buckets past their metric's
   * retention leave `metric_buckets` for `metric_past` (summed by key), and the keys with
   * several rows (an append writes one per key it touches) merge into one, sketches merged
   * here, at most `COMPACT_KEYS` of them a run. Reads see the rows before or after, never
   * a part: the sums are the same either way.
   */
  async maintain(conn: DuckDBConnection, nowMs: number): Promise<MetricUpkeep> {
    await conn.run('BEGIN TRANSACTION');
    try {
      const { expired, freed } = await this.expire(conn, nowMs);
      const compacted = await this.compact(conn);
      const sketches = await this.writeSketches(conn);
      await conn.run('COMMIT');
      this.book.sketchesWritten(sketches);
      for (const f of freed) this.book.release(f.metric, f.generation, f.tuple);
      return { expired, compacted, more: compacted >= COMPACT_KEYS };
    } catch (err) {
      await conn.run('ROLLBACK').catch(() => undefined);
      throw err;
    }
  }

  /**
   * Moves the buckets past retention to `metric_past`; the series whose last bucket went
   * give their place back (`freed`: their `metric_series` rows deleted here, the book told
   * once the transaction commits), so a new tuple may take it.
   */
  private async expire(
    conn: DuckDBConnection,
    nowMs: number,
  ): Promise<{ expired: number; freed: Array<{ metric: number; generation: number; tuple: string[] }> }> {
    const none = { expired: 0, freed: [] };
    if (this.rules.length === 0) return none;
    // Integers only, so written into the statement.
    const cuts = this.rules
      .map((r) => `(${Math.trunc(r.id)}, ${Math.trunc(r.generation)}, ${Math.trunc(nowMs - r.retentionMs)})`)
      .join(', ');
    const from = `metric_buckets b JOIN (VALUES ${cuts}) c(metric, generation, cutoff)
      ON b.metric = c.metric AND b.generation = c.generation AND epoch_ms(b.bucket) < c.cutoff`;
    const n = Number(
      (await conn.runAndReadAll(`SELECT count(*) AS n FROM ${from}`)).getRowObjects()[0]?.n ?? 0,
    );
    if (n === 0) return none;
    await conn.run(
      `INSERT INTO metric_past SELECT b.metric, b.generation, b.streams, b.labels,
         sum(b.events), sum(b.count), sum(b.sum) FROM ${from} GROUP BY ALL`,
    );
    await conn.run(
      `CREATE OR REPLACE TEMP TABLE expired_tuples AS SELECT DISTINCT b.metric, b.generation, b.labels FROM ${from}`,
    );
    await conn.run(
      `DELETE FROM metric_buckets b USING (VALUES ${cuts}) c(metric, generation, cutoff)
       WHERE b.metric = c.metric AND b.generation = c.generation AND epoch_ms(b.bucket) < c.cutoff`,
    );
    // One row a key in metric_past (it is small: a row a series).
    const pastKey = ['metric', 'generation', 'streams', 'labels'];
    await conn.run(
      `CREATE OR REPLACE TEMP TABLE past_merged AS SELECT metric, generation, streams, labels,
         sum(events)::BIGINT AS events, sum(count)::BIGINT AS count, sum(sum) AS sum
       FROM metric_past GROUP BY ALL HAVING count(*) > 1`,
    );
    await conn.run(`DELETE FROM metric_past p USING past_merged m WHERE ${sameKey('p', 'm', pastKey)}`);
    await conn.run('INSERT INTO metric_past SELECT * FROM past_merged');
    await conn.run('DROP TABLE past_merged');
    // The series of their own that kept no bucket: their place is given back.
    const tuple = ['metric', 'generation', 'labels'];
    await conn.run(
      `CREATE OR REPLACE TEMP TABLE freed_series AS SELECT s.metric, s.generation, s.labels
       FROM metric_series s JOIN expired_tuples e ON ${sameKey('s', 'e', tuple)}
       WHERE s.own AND NOT EXISTS (SELECT 1 FROM metric_buckets b WHERE ${sameKey('b', 'e', tuple)})`,
    );
    const freed = (await conn.runAndReadAll('SELECT * FROM freed_series')).getRowObjects().map((r) => ({
      metric: Number(r.metric),
      generation: Number(r.generation),
      tuple: JSON.parse(String(r.labels)) as string[],
    }));
    if (freed.length > 0)
      await conn.run(
        `DELETE FROM metric_series s USING freed_series f WHERE s.own AND ${sameKey('s', 'f', tuple)}`,
      );
    await conn.run('DROP TABLE freed_series');
    await conn.run('DROP TABLE expired_tuples');
    return { expired: n, freed };
  }

  private async compact(conn: DuckDBConnection): Promise<number> {
    const rows = (
      await conn.runAndReadAll(
        `SELECT metric, generation, bucket, streams, labels, sum(events) AS events, sum(count) AS count,
           sum(sum) AS sum, min(min) AS min, max(max) AS max,
           list(sketch) FILTER (WHERE sketch IS NOT NULL) AS sketches
         FROM metric_buckets GROUP BY ALL HAVING count(*) > 1 LIMIT ${COMPACT_KEYS}`,
      )
    ).getRowObjects();
    if (rows.length === 0) return 0;
    const a = await conn.createAppender('metric_buckets_merged');
    try {
      for (const r of rows) {
        a.appendInteger(Number(r.metric));
        a.appendBigInt(BigInt(r.generation as bigint));
        a.appendValue(r.bucket as DuckDBValue);
        a.appendVarchar(String(r.streams));
        a.appendVarchar(String(r.labels));
        a.appendBigInt(BigInt(r.events as bigint));
        a.appendBigInt(BigInt(r.count as bigint));
        a.appendDouble(Number(r.sum));
        if (r.min === null) a.appendNull();
        else a.appendDouble(Number(r.min));
        if (r.max === null) a.appendNull();
        else a.appendDouble(Number(r.max));
        const bytes = (r.sketches as { items: Array<{ bytes: Uint8Array }> } | null)?.items ?? [];
        if (bytes.length === 0) a.appendNull();
        else {
          const merged = bytes.reduce((into, b) => mergeSketch(into, decodeSketch(b.bytes)), newSketch());
          a.appendBlob(encodeSketch(merged));
        }
        a.endRow();
      }
      a.flushSync();
    } finally {
      a.closeSync();
    }
    await conn.run(`DELETE FROM metric_buckets b USING metric_buckets_merged m WHERE ${sameKey('b', 'm')}`);
    await conn.run('INSERT INTO metric_buckets SELECT * FROM metric_buckets_merged');
    await conn.run('DELETE FROM metric_buckets_merged');
    return rows.length;
  }

  /**
   * The folded tuples' sketches changed since last written (inside the caller's transaction;
   * `sketchesWritten` once it commits). Written by the upkeep, about once a minute, and at
   * close: a crash loses at most a minute of what they saw (an estimate a little low).
   */
  private async writeSketches(conn: DuckDBConnection): Promise<DroppedSketch[]> {
    const changed = this.book.changedSketches();
    for (const k of changed) {
      await conn.run('DELETE FROM metric_dropped WHERE metric = $1 AND generation = $2', [
        k.metric,
        k.generation,
      ]);
      await conn.run('INSERT INTO metric_dropped VALUES ($1, $2, $3)', [
        k.metric,
        k.generation,
        blobValue(k.bytes),
      ]);
    }
    return changed;
  }

  /** The sketches changed since the upkeep's last run, written now (the store's close). */
  async flushSketches(conn: DuckDBConnection): Promise<void> {
    if (!this.book.changedSketches().length) return;
    await conn.run('BEGIN TRANSACTION');
    try {
      const sketches = await this.writeSketches(conn);
      await conn.run('COMMIT');
      this.book.sketchesWritten(sketches);
    } catch (err) {
      await conn.run('ROLLBACK').catch(() => undefined);
      throw err;
    }
  }

  /** Deletes the buckets and series of metrics no longer counted, and of their older generations. */
  async prune(conn: DuckDBConnection, keep: readonly MetricRule[]): Promise<void> {
    // Integers only, so written into the statement.
    const live = keep.map((r) => `'${Math.trunc(r.id)}:${Math.trunc(r.generation)}'`);
    const key = `metric::VARCHAR || ':' || generation::VARCHAR`;
    const where = live.length ? `${key} NOT IN (${live.join(', ')})` : 'true';
    await conn.run(`DELETE FROM metric_buckets WHERE ${where}`);
    await conn.run(`DELETE FROM metric_past WHERE ${where}`);
    await conn.run(`DELETE FROM metric_backfilled WHERE ${where}`);
    await conn.run(`DELETE FROM metric_series WHERE ${where}`);
    await conn.run(`DELETE FROM metric_dropped WHERE ${where}`);
    this.book.retain(keep);
  }
}
