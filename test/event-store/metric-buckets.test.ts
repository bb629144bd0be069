import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DuckDbEventStore } from '../../src/event-store/duckdb/duckdb-event-store.js';
import { EVERY_EVENT, NO_EVENT } from '../../src/event-store/read-scope.js';
import type { MetricRule } from '../../src/event-store/rollups/metric-rollups.js';
import {
  decodeSketch,
  mergeSketch,
  newSketch,
  sketchQuantile,
} from '../../src/event-store/rollups/sketch.js';
import { rulesWithKey } from '../../src/features/streams/membership.js';
import { parseQuery } from '../../src/syntax/parse-query.js';
import { event } from './filter-store.js';

// Log metrics' buckets in the DuckDB store (ADR 0035): counted in the append's transaction,
// by stream set and label tuple; kept across a reopen with the series book; a reset or a
// deleted metric prunes what it counted.

const T = Date.UTC(2026, 10, 1, 10, 0, 0);
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const open = (dataDir: string) =>
  DuckDbEventStore.open({ dataDir, memoryLimit: '256MB', checkpointThreshold: '16MB' });

const rule = (over: Partial<MetricRule> = {}): MetricRule => ({
  id: 1,
  generation: 100,
  kind: 'count',
  field: null,
  labels: ['host'],
  resolutionMs: 60_000,
  retentionMs: 86_400_000 * 3650,
  maxSeries: 2,
  filter: parseQuery('severity:error'),
  ...over,
});

const batch = (from: number, n: number, host = (i: number) => `h${i % 3}`) =>
  Array.from({ length: n }, (_, k) => {
    const i = from + k;
    return event(`m${String(i).padStart(6, '0')}`, {
      ts: T + i * 1000,
      received_at: T + i * 1000,
      host: host(i),
      app: i % 2 ? 'pay' : 'web',
      severity: i % 4 === 0 ? 'info' : 'error',
      message: `event ${i}`,
    });
  });

describe('log metrics in the DuckDB store', () => {
  it('counts each append by bucket, stream set and label tuple, folds past max_series, keeps it across a reopen', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'logscope-metrics-'));
    dirs.push(dir);
    let store = await open(dir);
    await store.setStreamRules(rulesWithKey([{ id: 7, filter: parseQuery('app:pay') }]));
    await store.setMetricRules([rule()]);
    const events = [...batch(0, 100), ...batch(100, 80)];
    await store.append(events.slice(0, 100));
    await store.append(events.slice(100));
    const read = {
      scope: EVERY_EVENT,
      metric: 1,
      generation: 100,
      fromMs: T,
      toMs: T + 3_600_000,
      stepMs: 3_600_000,
      maxRows: 1_000,
    };
    const sum = (rows: Awaited<ReturnType<DuckDbEventStore['metricBuckets']>>) => {
      const out: Record<string, number> = {};
      for (const r of rows ?? [])
        out[`${r.streams}|${r.labels.join('/')}`] =
          (out[`${r.streams}|${r.labels.join('/')}`] ?? 0) + r.events;
      return out;
    };
    // The truth, from the events: errors, their set ("7" for app:pay, "" the built-in one), and
    // hosts h1 and h2 counted first (events 1 and 2; max_series 2), h0 folded into __other__.
    const truth: Record<string, number> = {};
    for (const e of events) {
      if (e.severity !== 'error') continue;
      const key = `${e.app === 'pay' ? '7' : ''}|${e.host === 'h0' ? '__other__' : e.host}`;
      truth[key] = (truth[key] ?? 0) + 1;
    }
    expect(sum(await store.metricBuckets(read))).toEqual(truth);
    // A read sums only the sets its scope reads (rollups/metric-store.ts setTest): stream 7's
    // readers set "7", the built-in stream's readers "", a reader of none nothing.
    const part = (set: string) =>
      Object.fromEntries(Object.entries(truth).filter(([k]) => k.startsWith(`${set}|`)));
    const pay = {
      key: 'pay',
      filter: parseQuery('app:pay'),
      streams: { rules: 'r', ids: [7], unclaimed: false },
    };
    const rest = {
      key: 'rest',
      filter: parseQuery('-app:pay'),
      streams: { rules: 'r', ids: [], unclaimed: true },
    };
    expect(sum(await store.metricBuckets({ ...read, scope: pay }))).toEqual(part('7'));
    expect(sum(await store.metricBuckets({ ...read, scope: rest }))).toEqual(part(''));
    expect(await store.metricBuckets({ ...read, scope: NO_EVENT })).toEqual([]);
    expect(await store.metricBuckets({ ...read, scope: pay, only: { ids: [], unclaimed: true } })).toEqual(
      [],
    );
    expect(sum(await store.metricBuckets({ ...read, only: { ids: [7], unclaimed: false } }))).toEqual(
      part('7'),
    );
    expect(new Set((await store.metricTotals(1, 100, pay))?.map((r) => r.streams))).toEqual(new Set(['7']));
    expect(new Set((await store.metricTotals(1, 100, rest))?.map((r) => r.streams))).toEqual(new Set(['']));
    // Stream 7 deleted (no rule names it): its set reads as the built-in stream's.
    await store.setStreamRules(rulesWithKey([]));
    expect(sum(await store.metricBuckets({ ...read, scope: rest }))).toEqual(
      sum(await store.metricBuckets(read)),
    );
    expect(await store.metricBuckets({ ...read, scope: pay })).toEqual([]);
    expect(await store.metricCounts(1, 100)).toEqual({ series: 2, dropped: 1 });
    // By the minute: 180 events a second apart over three minutes.
    const minutes = await store.metricBuckets({ ...read, stepMs: 60_000 });
    expect(new Set(minutes?.map((r) => r.stepMs))).toEqual(new Set([T, T + 60_000, T + 120_000]));
    await store.close();

    store = await open(dir);
    try {
      expect(sum(await store.metricBuckets(read))).toEqual(truth);
      expect(await store.metricCounts(1, 100)).toEqual({ series: 2, dropped: 1 });
      // The store counts only once it is given the metrics again (the feature does at start).
      await store.append(batch(180, 4));
      expect(sum(await store.metricBuckets(read))).toEqual(truth);
      await store.setStreamRules(rulesWithKey([{ id: 7, filter: parseQuery('app:pay') }]));
      await store.setMetricRules([rule()]);
      await store.append(batch(184, 4, () => 'h9'));
      const after = sum(await store.metricBuckets(read));
      // h9 is a new tuple past max_series: folded, and counted among the dropped.
      expect(after['7|__other__']).toBe((truth['7|__other__'] ?? 0) + 2);
      expect(await store.metricCounts(1, 100)).toEqual({ series: 2, dropped: 2 });
      // A reset (a new generation) prunes the old one; a deleted metric's rows go too.
      await store.setMetricRules([rule({ generation: 200 })]);
      expect(await store.metricBuckets(read)).toEqual([]);
      expect(await store.metricCounts(1, 100)).toEqual({ series: 0, dropped: 0 });
      await store.append(batch(300, 8));
      expect((await store.metricBuckets({ ...read, generation: 200 }))?.length).toBeGreaterThan(0);
      await store.setMetricRules([]);
      expect(await store.runSql('SELECT count(*)::INTEGER AS n FROM metric_buckets')).toEqual([{ n: 0 }]);
      expect(await store.runSql('SELECT count(*)::INTEGER AS n FROM metric_series')).toEqual([{ n: 0 }]);
    } finally {
      await store.close();
    }
  });

  it('upkeep: buckets past retention leave the series and stay in the totals; a key’s rows merge into one, figures unchanged', async () => {
    const store = await open(':memory:');
    const DAY = 86_400_000;
    try {
      const latency = rule({
        id: 2,
        kind: 'quantiles',
        field: 'bytes',
        labels: ['app'],
        maxSeries: 10,
        retentionMs: DAY,
        filter: parseQuery(''),
      });
      await store.setMetricRules([rule({ maxSeries: 10, retentionMs: DAY }), latency]);
      // Small appends (a row per key each), two days apart: the first day's pass retention.
      const withBytes = (from: number, n: number, shift: number) =>
        batch(from, n).map((e, k) => ({ ...e, ts: e.ts + shift, bytes: ((from + k) * 37) % 1000 }));
      for (let i = 0; i < 20; i++) {
        await store.append(withBytes(i * 9, 9, 0));
        await store.append(withBytes(i * 9, 9, 2 * DAY));
      }
      const read = (metric: number, fromMs: number) => ({
        scope: EVERY_EVENT,
        metric,
        generation: 100,
        fromMs,
        toMs: fromMs + 3_600_000,
        stepMs: 60_000,
        maxRows: 10_000,
      });
      const figures = async (metric: number, fromMs: number) =>
        (await store.metricBuckets(read(metric, fromMs)))
          ?.map((r) => {
            const sketch = r.sketches.reduce((a, b) => mergeSketch(a, decodeSketch(b)), newSketch());
            const q = [0.1, 0.5, 0.99].map((x) => (sketch.count ? sketchQuantile(sketch, x) : null));
            return JSON.stringify([r.stepMs, r.streams, r.labels, r.events, r.count, r.sum, r.min, r.max, q]);
          })
          .sort();
      const keys =
        'SELECT count(DISTINCT (metric, generation, bucket, streams, labels))::INTEGER AS n FROM metric_buckets';
      const rowCount = 'SELECT count(*)::INTEGER AS n FROM metric_buckets';
      const before = [await figures(1, T + 2 * DAY), await figures(2, T + 2 * DAY)];
      const totals = [
        await store.metricTotals(1, 100, EVERY_EVENT),
        await store.metricTotals(2, 100, EVERY_EVENT),
      ];
      const old = await figures(2, T);
      expect(old?.length).toBeGreaterThan(0);
      const [{ n: rowsBefore }] = (await store.runSql(rowCount, [])) as [{ n: number }];
      const [{ n: keysBefore }] = (await store.runSql(keys, [])) as [{ n: number }];
      expect(rowsBefore).toBeGreaterThan(keysBefore);

      const upkeep = await store.maintainMetrics(T + 2 * DAY + 3_600_000);
      expect(upkeep.expired).toBeGreaterThan(0);
      expect(upkeep.compacted).toBeGreaterThan(0);
      expect(upkeep.more).toBe(false);
      // One row a key; the recent day's figures as before, quantiles included.
      const [{ n: rowsAfter }] = (await store.runSql(rowCount, [])) as [{ n: number }];
      const [{ n: keysAfter }] = (await store.runSql(keys, [])) as [{ n: number }];
      expect(rowsAfter).toBe(keysAfter);
      expect([await figures(1, T + 2 * DAY), await figures(2, T + 2 * DAY)]).toEqual(before);
      // The first day left the series but not the totals (the Prometheus counters).
      expect(await figures(2, T)).toEqual([]);
      const sorted = (rows: Awaited<ReturnType<DuckDbEventStore['metricTotals']>>) =>
        rows?.map((r) => JSON.stringify(r)).sort();
      expect([
        sorted(await store.metricTotals(1, 100, EVERY_EVENT)),
        sorted(await store.metricTotals(2, 100, EVERY_EVENT)),
      ]).toEqual(totals.map(sorted));
      // Again: nothing to do. A deleted metric's past goes with its buckets.
      expect(await store.maintainMetrics(T + 2 * DAY + 3_600_000)).toEqual({
        expired: 0,
        compacted: 0,
        more: false,
      });
      await store.setMetricRules([]);
      expect(await store.runSql('SELECT count(*)::INTEGER AS n FROM metric_past', [])).toEqual([{ n: 0 }]);
    } finally {
      await store.close();
    }
  });

  it('upkeep: a series whose last bucket passed retention gives its place back (a new tuple gets its own series); its totals stay', async () => {
    const store = await open(':memory:');
    const DAY = 86_400_000;
    try {
      // One series at most: h1 takes it, two days ago.
      await store.setMetricRules([rule({ maxSeries: 1, retentionMs: DAY })]);
      const at = (i: number, host: string, shift: number) =>
        batch(i, 1, () => host).map((e) => ({ ...e, ts: T + shift + i }));
      await store.append([...at(1, 'h1', 0), ...at(2, 'h1', 0)]);
      await store.append(at(3, 'h2', 0));
      expect(await store.metricCounts(1, 100)).toEqual({ series: 1, dropped: 1 });
      // A day later h1 has a recent bucket too: it keeps its place past the upkeep.
      await store.append(at(5, 'h1', 2 * DAY));
      await store.maintainMetrics(T + 2 * DAY + 60_000);
      expect(await store.metricCounts(1, 100)).toEqual({ series: 1, dropped: 1 });
      // Once its last bucket passes retention too, its place is free: h3 gets a series of its own.
      await store.maintainMetrics(T + 4 * DAY);
      expect(await store.metricCounts(1, 100)).toEqual({ series: 0, dropped: 1 });
      expect(await store.runSql('SELECT count(*)::INTEGER AS n FROM metric_series WHERE own', [])).toEqual([
        { n: 0 },
      ]);
      await store.append(at(6, 'h3', 4 * DAY));
      const read = { scope: EVERY_EVENT, metric: 1, generation: 100, stepMs: DAY, maxRows: 100 };
      const recent = await store.metricBuckets({ ...read, fromMs: T + 4 * DAY - DAY, toMs: T + 5 * DAY });
      expect(recent?.map((r) => [r.labels, r.events])).toEqual([[['h3'], 1]]);
      expect(await store.metricCounts(1, 100)).toEqual({ series: 1, dropped: 1 });
      // The Prometheus totals still count h1's three events and the fold's one.
      const totals = Object.fromEntries(
        ((await store.metricTotals(1, 100, EVERY_EVENT)) ?? []).map((r) => [r.labels.join(), r.events]),
      );
      expect(totals).toEqual({ h1: 3, __other__: 1, h3: 1 });
    } finally {
      await store.close();
    }
  });

  it('backfills a window from the stored events, once, under the stream sets now; an overlapping window or a changed rule writes nothing', async () => {
    const store = await open(':memory:');
    try {
      await store.setStreamRules(rulesWithKey([{ id: 7, filter: parseQuery('app:pay') }]));
      const before = batch(0, 120);
      await store.append(before);
      const countingSince = Date.now() + 1;
      await new Promise((r) => setTimeout(r, 5));
      const r = rule({ maxSeries: 10 });
      await store.setMetricRules([r]);
      const after = batch(200, 10); // in the window too, but counted at ingest
      await store.append(after);
      const read = {
        scope: EVERY_EVENT,
        metric: 1,
        generation: 100,
        fromMs: T,
        toMs: T + 3_600_000,
        stepMs: 3_600_000,
        maxRows: 1_000,
      };
      const sum = async () => {
        const out: Record<string, number> = {};
        for (const row of (await store.metricBuckets(read)) ?? [])
          out[`${row.streams}|${row.labels.join('/')}`] =
            (out[`${row.streams}|${row.labels.join('/')}`] ?? 0) + row.events;
        return out;
      };
      const truth = (events: typeof before) => {
        const out: Record<string, number> = {};
        for (const e of events)
          if (e.severity === 'error') {
            const key = `${e.app === 'pay' ? '7' : ''}|${e.host}`;
            out[key] = (out[key] ?? 0) + 1;
          }
        return out;
      };
      expect(await sum()).toEqual(truth(after));
      const req = { rule: r, fromMs: T, toMs: T + 3_600_000, storedBefore: countingSince };
      const errorsBefore = before.filter((e) => e.severity === 'error').length;
      expect(await store.backfillMetric(req)).toEqual({ events: errorsBefore });
      expect(await sum()).toEqual(truth([...before, ...after]));
      expect(await store.metricBackfilled(1, 100)).toEqual([{ fromMs: T, toMs: T + 3_600_000 }]);
      // Again, or a window overlapping it: nothing written.
      expect(await store.backfillMetric(req)).toEqual({ overlaps: true });
      expect(await store.backfillMetric({ ...req, fromMs: T - 60_000, toMs: T + 60_000 })).toEqual({
        overlaps: true,
      });
      expect(await sum()).toEqual(truth([...before, ...after]));
      // A reset while a window was read: the old generation's window is not written.
      await store.setMetricRules([{ ...r, generation: 200 }]);
      expect(await store.backfillMetric({ ...req, fromMs: T - 3_600_000, toMs: T })).toEqual({ stale: true });
      expect(await store.metricBackfilled(1, 100)).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('dropped series past 100,000: estimated within 2 %, kept across a reopen (written by the upkeep, and at close)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'logscope-dropped-'));
    dirs.push(dir);
    const many = rule({ filter: parseQuery('*') });
    const hosts = (from: number, n: number) =>
      Array.from({ length: Math.ceil(n / 10_000) }, (_, part) =>
        batch(from + part * 10_000, Math.min(10_000, n - part * 10_000), (i) => `host-${i}`),
      );
    const within = (dropped: number, truth: number) =>
      expect(Math.abs(dropped / truth - 1), `${dropped} for ${truth}`).toBeLessThan(0.02);
    let store = await open(dir);
    try {
      await store.setMetricRules([many]);
      for (const part of hosts(0, 120_000)) await store.append(part);
      // Two hosts have series of their own; the rest are folded.
      within((await store.metricCounts(1, 100)).dropped, 120_000 - 2);
      await store.maintainMetrics(T + 3_600_000);
      for (const part of hosts(120_000, 30_000)) await store.append(part);
    } finally {
      await store.close();
    }
    // The last 30,000 were seen after the upkeep: written at close.
    store = await open(dir);
    try {
      await store.setMetricRules([many]);
      within((await store.metricCounts(1, 100)).dropped, 150_000 - 2);
    } finally {
      await store.close();
    }
  }, 120_000);

  it('an append that fails counts nothing and admits no series', async () => {
    const store = await open(':memory:');
    try {
      await store.setMetricRules([rule({ maxSeries: 1 })]);
      // A batch that cannot be stored: one event's time is out of DuckDB's range.
      const bad = batch(0, 3);
      (bad[1] as { ts: number }).ts = Number.NaN;
      await expect(store.append(bad)).rejects.toThrow();
      expect(await store.metricCounts(1, 100)).toEqual({ series: 0, dropped: 0 });
      await store.append(batch(10, 3, () => 'late'));
      expect(await store.metricCounts(1, 100)).toEqual({ series: 1, dropped: 0 });
    } finally {
      await store.close();
    }
  });
});
