import { describe, expect, it } from 'vitest';
import { DistinctSketch } from '../../../src/event-store/rollups/distinct-sketch.js';
import type { MetricRule } from '../../../src/event-store/rollups/metric-rollups.js';
import { DROPPED_EXACT, SeriesBook } from '../../../src/event-store/rollups/series-book.js';
import { parseQuery } from '../../../src/syntax/parse-query.js';

// A log metric's dropped series (docs/api/log-metrics.md "Cardinality"): the distinct label
// tuples folded into __other__, exact up to 100,000, then within 2 %.

const rule: MetricRule = {
  id: 1,
  generation: 1,
  kind: 'count',
  field: null,
  labels: ['user'],
  resolutionMs: 60_000,
  retentionMs: 86_400_000,
  maxSeries: 10,
  filter: parseQuery('*'),
};

describe('dropped series past the exact count', () => {
  it('counts exactly up to 100,000 folded tuples, then estimates within 2 %, each tuple once however often seen', () => {
    const book = new SeriesBook(1_000_000);
    let folded = 0;
    const admit = (i: number) => {
      if (!book.admit(rule, [`user-${i}`, 'GET'])) folded++;
    };
    for (let i = 0; i < DROPPED_EXACT + 10; i++) admit(i);
    book.commit();
    expect(book.counts(1, 1)).toEqual({ series: 10, dropped: DROPPED_EXACT });
    for (const total of [150_000, 400_000, 1_000_000]) {
      for (let i = DROPPED_EXACT + 10; i < total + 10; i++) admit(i);
      // Seen again: no new tuple.
      for (let i = 0; i < 50_000; i++) admit((i * 7) % total);
      const { dropped } = book.counts(1, 1);
      expect(Math.abs(dropped / total - 1), `${dropped} for ${total}`).toBeLessThan(0.02);
    }
    expect(folded).toBeGreaterThan(1_000_000);
  });

  it('gives the changed sketch to write until written, and loads it back', () => {
    const book = new SeriesBook(1_000_000);
    for (let i = 0; i < DROPPED_EXACT + 5_000; i++) book.admit({ ...rule, maxSeries: 0 }, [`u${i}`]);
    const changed = book.changedSketches();
    expect(changed.map((s) => [s.metric, s.generation])).toEqual([[1, 1]]);
    expect(book.changedSketches()).toHaveLength(1);
    book.sketchesWritten(changed);
    expect(book.changedSketches()).toEqual([]);
    // Another book, as a store reopened: the folded tuples it keeps (the exact ones) and the sketch.
    const again = new SeriesBook(1_000_000);
    again.loadSketch(1, 1, changed[0]?.bytes as Uint8Array);
    expect(again.counts(1, 1).dropped).toBe(book.counts(1, 1).dropped);
    expect(DistinctSketch.from(new Uint8Array(10))).toBeNull();
  });
});
