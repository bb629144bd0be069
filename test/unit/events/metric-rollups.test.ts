import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { emptyEvent, type NormalisedEvent } from '../../../src/core/event.js';
import { encodeShape } from '../../../src/core/record-shape.js';
import {
  bucketOf,
  type CountingRule,
  countingRule,
  LABEL_CHARS,
  labelText,
  type MetricRule,
  metricNumber,
  OTHER,
  RollupBatch,
} from '../../../src/event-store/rollups/metric-rollups.js';
import { DROPPED_EXACT, SeriesBook } from '../../../src/event-store/rollups/series-book.js';
import {
  decodeSketch,
  encodeSketch,
  mergeSketch,
  newSketch,
  SKETCH_ACCURACY,
  type Sketch,
  sketchQuantile,
} from '../../../src/event-store/rollups/sketch.js';
import { parseQuery } from '../../../src/syntax/parse-query.js';

// The counting core of log metrics (docs/api/log-metrics.md, "Counting at ingest"): what
// an event gives a metric, a batch's partial aggregates, the series book and the sketch.

const T0 = Date.UTC(2026, 10, 29, 12, 0, 0);

const ev = (
  extra: Partial<NormalisedEvent> = {},
  types: Record<string, 'n' | 'b' | 'j'> = {},
): NormalisedEvent => ({
  ...emptyEvent({ ev_id: 'e', ts: T0, received_at: T0 }),
  ...extra,
  shape: encodeShape(Object.keys(types).length ? { t: types } : {}),
});

describe('what an event gives a metric', () => {
  it('a number: numeric columns and fields sent as JSON numbers, never numeric text', () => {
    const e = ev(
      { status: 503, bytes: 1_234, fields: { 'http.ms': '12.5', text_ms: '12', flag: 'true', big: '1e400' } },
      { 'http.ms': 'n', flag: 'b', big: 'n' },
    );
    expect(metricNumber(e, 'status')).toBe(503);
    expect(metricNumber(e, 'bytes')).toBe(1_234);
    expect(metricNumber(e, 'http.ms')).toBe(12.5);
    expect(metricNumber(e, 'text_ms')).toBeNull(); // "12" as text
    expect(metricNumber(e, 'flag')).toBeNull();
    expect(metricNumber(e, 'big')).toBeNull(); // not finite
    expect(metricNumber(e, 'absent')).toBeNull();
    expect(metricNumber(ev(), 'src_port')).toBeNull();
    // A field named as an Object.prototype key is not one the event has.
    expect(metricNumber(ev(), 'constructor')).toBeNull();
  });

  it('a label: text as sent, numbers and JSON compact, "" when absent, cut to 200 characters', () => {
    const e = ev(
      {
        host: 'web-1',
        status: 200,
        fields: { n: '1.5', ok: 'false', list: '[1, "a"]', s: 'x'.repeat(300), emoji: '😀'.repeat(201) },
      },
      { n: 'n', ok: 'b', list: 'j' },
    );
    expect(labelText(e, 'host')).toBe('web-1');
    expect(labelText(e, 'status')).toBe('200');
    expect(labelText(e, 'app')).toBe('');
    expect(labelText(e, 'n')).toBe('1.5');
    expect(labelText(e, 'ok')).toBe('false');
    expect(labelText(e, 'list')).toBe('[1,"a"]');
    expect(labelText(e, 's')).toHaveLength(LABEL_CHARS);
    // Cut by code points: no half of a surrogate pair.
    expect(Array.from(labelText(e, 'emoji'))).toHaveLength(LABEL_CHARS);
    expect(labelText(e, 'emoji').endsWith('😀')).toBe(true);
    expect(labelText(e, 'missing')).toBe('');
  });

  it('a bucket aligned on Unix time, whatever the event’s age', () => {
    expect(bucketOf(T0 + 59_999, 60_000)).toBe(T0);
    expect(bucketOf(T0 + 60_000, 60_000)).toBe(T0 + 60_000);
    expect(bucketOf(T0 + 1_799_000, 900_000)).toBe(T0 + 900_000);
    expect(bucketOf(-1, 10_000)).toBe(-10_000);
  });
});

const rule = (over: Partial<MetricRule> & { query?: string } = {}): CountingRule => {
  const { query = '', ...rest } = over;
  return countingRule({
    id: 1,
    generation: 1,
    kind: 'count',
    field: null,
    labels: [],
    resolutionMs: 60_000,
    retentionMs: 86_400_000 * 3650,
    maxSeries: 10_000,
    filter: parseQuery(query),
    ...rest,
  });
};

describe('a batch’s partial aggregates', () => {
  it('counts matching events per bucket, stream set and label tuple; numbers where the field has one', () => {
    const book = new SeriesBook(1_000_000);
    const r = rule({ query: 'severity:error', kind: 'avg', field: 'ms', labels: ['host'] });
    const batch = new RollupBatch([r, rule({ id: 2 })], book);
    const e = (s: number, host: string, ms?: number, severity: NormalisedEvent['severity'] = 'error') =>
      ev(
        { ts: T0 + s * 1000, host, severity, fields: ms === undefined ? {} : { ms: String(ms) } },
        ms === undefined ? {} : { ms: 'n' },
      );
    batch.add(e(1, 'a', 10), '1');
    batch.add(e(2, 'a', 30), '1');
    batch.add(e(3, 'a'), '1'); // no number: an event, no value
    batch.add(e(4, 'a', 5), '1,2'); // another stream set
    batch.add(e(61, 'a', 7), '1'); // the next bucket
    batch.add(e(5, 'b', 1), '1');
    batch.add(e(6, 'a', 99, 'info'), '1'); // not matched by 1; counted by 2
    const rows = batch.take();
    const of = (metric: number, bucket: number, streams: string, host?: string) =>
      rows.find(
        (x) =>
          x.metric === metric &&
          x.bucketMs === bucket &&
          x.streams === streams &&
          (host === undefined || x.labels[0] === host),
      )?.agg;
    expect(of(1, T0, '1', 'a')).toMatchObject({ events: 3, count: 2, sum: 40, min: 10, max: 30 });
    expect(of(1, T0, '1,2', 'a')).toMatchObject({ events: 1, count: 1, sum: 5 });
    expect(of(1, T0 + 60_000, '1', 'a')).toMatchObject({ events: 1, sum: 7 });
    expect(of(1, T0, '1', 'b')).toMatchObject({ events: 1, sum: 1 });
    expect(of(2, T0, '1')).toMatchObject({ events: 5, count: 0, sum: 0, min: null });
    expect(of(2, T0, '1,2')).toMatchObject({ events: 1 });
    expect(rows.filter((x) => x.metric === 2).every((x) => x.labels.length === 0)).toBe(true);
    expect(batch.take()).toEqual([]);
  });

  it('folds tuples past max_series into __other__, counting the tuples folded', () => {
    const book = new SeriesBook(1_000_000);
    const r = rule({ labels: ['host', 'app'], maxSeries: 2 });
    const batch = new RollupBatch([r], book);
    for (const host of ['a', 'b', 'c', 'a', 'd', 'c']) batch.add(ev({ host, app: 'x' }), '1');
    const rows = batch.take();
    expect(rows.map((x) => [x.labels.join('/'), x.agg.events])).toEqual([
      ['a/x', 2],
      ['b/x', 1],
      [`${OTHER}/${OTHER}`, 3],
    ]);
    expect(book.counts(1, 1)).toEqual({ series: 2, dropped: 2 });
    expect(book.pending()).toHaveLength(4);
    book.commit();
    // A new generation (a reset) starts empty; the server-wide limit spans metrics.
    const small = new SeriesBook(3);
    const two = new RollupBatch([rule({ labels: ['host'] }), rule({ id: 2, labels: ['host'] })], small);
    for (const host of ['a', 'b']) two.add(ev({ host }), '1');
    expect(two.take().filter((x) => x.labels[0] === OTHER)).toHaveLength(1);
    expect([small.counts(1, 1), small.counts(2, 1)]).toEqual([
      { series: 2, dropped: 0 },
      { series: 1, dropped: 1 },
    ]);
  });

  it('a failed transaction forgets what its batch admitted; a loaded book keeps what the store keeps', () => {
    const book = new SeriesBook(10);
    book.load(1, 1, ['kept'], true);
    const r = rule({ labels: ['host'], maxSeries: 2 });
    const batch = new RollupBatch([r], book);
    batch.add(ev({ host: 'new' }), '1');
    expect(book.counts(1, 1)).toEqual({ series: 2, dropped: 0 });
    book.abort();
    expect(book.counts(1, 1)).toEqual({ series: 1, dropped: 0 });
    expect(book.admit(r, ['other'])).toBe(true);
    expect(book.admit(r, ['third'])).toBe(false);
    expect(book.admit(r, ['kept'])).toBe(true);
    book.load(2, 5, ['x'], true);
    // Metric 1 reset (generation 2), metric 2 deleted: their books go.
    book.retain([{ id: 1, generation: 2 }]);
    expect(book.counts(1, 1)).toEqual({ series: 0, dropped: 0 });
    expect(book.counts(2, 5)).toEqual({ series: 0, dropped: 0 });
    expect(book.admit({ ...r, generation: 2 }, ['a'])).toBe(true);
    expect(DROPPED_EXACT).toBe(100_000);
  });

  it('sums exactly for integers and within 1e-9 relative otherwise', () => {
    const batch = new RollupBatch([rule({ kind: 'sum', field: 'v' })], new SeriesBook(10));
    const values = [1e16, 1, -1e16, 0.1, 0.2, 0.3, 2 ** 52, 3];
    for (const v of values) batch.add(ev({ fields: { v: String(v) } }, { v: 'n' }), '1');
    const [row] = batch.take();
    const exact = 1 + 0.1 + 0.2 + 0.3 + 2 ** 52 + 3;
    expect(Math.abs((row?.agg.sum as number) - exact) / exact).toBeLessThan(1e-9);
  });
});

/** The bounds §26 gives quantile q of sorted values: lo·(1 − α) ≤ v ≤ hi·(1 + α), mirrored below 0. */
function withinBounds(sorted: readonly number[], q: number, v: number): boolean {
  const n = sorted.length;
  const lo = sorted[Math.floor(q * (n - 1))] as number;
  const hi = sorted[Math.ceil(q * n) - 1 < 0 ? 0 : Math.ceil(q * n) - 1] as number;
  const a = SKETCH_ACCURACY + 1e-12;
  const low = lo >= 0 ? lo * (1 - a) : lo * (1 + a);
  const high = hi >= 0 ? hi * (1 + a) : hi * (1 - a);
  return v >= Math.min(low, lo) && v <= Math.max(high, hi);
}

describe('a batch of many metrics (one query test, one key an event for rules alike)', () => {
  /** The batch as one rule at a time would count it: each its own test, labels, key and gate. */
  function reference(
    rules: readonly CountingRule[],
    maxSeries: number,
    events: readonly [NormalisedEvent, string][],
  ) {
    const book = new SeriesBook(1_000_000);
    const out = new Map<
      string,
      { events: number; count: number; sum: number; min: number | null; max: number | null }
    >();
    for (const [e, streams] of events)
      for (const r of rules) {
        if (!r.matches(e)) continue;
        let labels = r.labels.map((f) => labelText(e, f));
        if (labels.length > 0 && !book.admit({ ...r, maxSeries }, labels)) labels = r.labels.map(() => OTHER);
        const key = JSON.stringify([r.id, bucketOf(e.ts, r.resolutionMs), streams, labels]);
        const a = out.get(key) ?? { events: 0, count: 0, sum: 0, min: null, max: null };
        a.events++;
        const v = r.field === null ? null : metricNumber(e, r.field);
        if (v !== null) {
          a.count++;
          a.sum += v;
          a.min = a.min === null ? v : Math.min(a.min, v);
          a.max = a.max === null ? v : Math.max(a.max, v);
        }
        out.set(key, a);
      }
    return out;
  }

  it('counts what one rule at a time counts, whatever the rules share (queries, labels, order, resolution, a NUL in a value)', () => {
    const FIELDS = ['host', 'app', 'user', 'v'];
    const QUERIES = ['', 'app:a', 'NOT host:h1', 'v>2'];
    const ruleArb = fc.record({
      labels: fc.uniqueArray(fc.constantFrom(...FIELDS), { maxLength: 3 }),
      query: fc.constantFrom(...QUERIES),
      resolutionMs: fc.constantFrom(60_000, 120_000),
      kind: fc.constantFrom('count', 'sum') as fc.Arbitrary<'count' | 'sum'>,
    });
    const eventArb = fc.record({
      host: fc.constantFrom('h1', 'h2', 'h\u00002', ''),
      app: fc.constantFrom('a', 'b'),
      user: fc.constantFrom('u1', 'u2', 'u3', 'u\u0000'),
      v: fc.integer({ min: 0, max: 5 }),
      at: fc.integer({ min: 0, max: 400 }),
      streams: fc.constantFrom('', '1', '1,2'),
    });
    fc.assert(
      fc.property(
        fc.array(ruleArb, { minLength: 1, maxLength: 8 }),
        fc.array(eventArb, { maxLength: 60 }),
        fc.integer({ min: 1, max: 4 }),
        (specs, sent, maxSeries) => {
          const rules = specs.map((r, i) =>
            rule({ ...r, id: i + 1, field: r.kind === 'sum' ? 'v' : null, maxSeries }),
          );
          const events = sent.map(
            (x) =>
              [
                ev(
                  {
                    host: x.host,
                    app: x.app,
                    ts: T0 + x.at * 1000,
                    fields: { user: x.user, v: String(x.v) },
                  },
                  { v: 'n' },
                ),
                x.streams,
              ] as [NormalisedEvent, string],
          );
          const batch = new RollupBatch(rules, new SeriesBook(1_000_000));
          for (const [e, streams] of events) batch.add(e, streams);
          const got = new Map<
            string,
            { events: number; count: number; sum: number; min: number | null; max: number | null }
          >();
          for (const r of batch.take()) {
            const key = JSON.stringify([r.metric, r.bucketMs, r.streams, r.labels]);
            expect(got.has(key), key).toBe(false);
            const { events: n, count, sum, min, max } = r.agg;
            got.set(key, { events: n, count, sum, min, max });
          }
          expect(got).toEqual(reference(rules, maxSeries, events));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('the quantile sketch', () => {
  const value = fc.oneof(
    fc.double({ min: 1e-8, max: 1e9, noNaN: true }),
    fc.double({ min: -1e9, max: -1e-8, noNaN: true }),
    fc.constant(0),
    fc.integer({ min: -1000, max: 1000 }),
  );

  it('answers every quantile within 1 % relative, for any split merged and after its bytes (property)', () => {
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 400 }), fc.nat(400), (values, cut) => {
        const parts = [values.slice(0, cut % values.length), values.slice(cut % values.length)];
        const sketches = parts.map((p) => {
          const s = newSketch();
          for (const v of p) s.accept(v);
          return decodeSketch(encodeSketch(s));
        });
        const merged = sketches.reduce((into: Sketch, s) => mergeSketch(into, s), newSketch());
        const sorted = [...values].sort((a, b) => a - b);
        expect(merged.count).toBe(values.length);
        for (const q of [0, 0.01, 0.25, 0.5, 0.9, 0.99, 1]) {
          const v = sketchQuantile(merged, q) as number;
          expect(withinBounds(sorted, q, v), `q=${q} v=${v} of ${JSON.stringify(sorted)}`).toBe(true);
        }
      }),
      // CI's counterexample: the library's store merge lost the value 1 (key 0) merged in.
      { numRuns: 200, examples: [[[1e-8, 1e-8, 1], 1]] },
    );
  });

  it('holds 17 decades within its 2,048 bins; empty answers null; bad bytes are refused', () => {
    const s = newSketch();
    for (let d = -8; d <= 8; d++) for (const m of [1, 2, 5]) s.accept(m * 10 ** d);
    const sorted = [];
    for (let d = -8; d <= 8; d++) for (const m of [1, 2, 5]) sorted.push(m * 10 ** d);
    sorted.sort((a, b) => a - b);
    for (const q of [0, 0.5, 0.99, 1])
      expect(withinBounds(sorted, q, sketchQuantile(s, q) as number)).toBe(true);
    expect(encodeSketch(s).length).toBeLessThan(4_200);
    expect(sketchQuantile(newSketch(), 0.5)).toBeNull();
    expect(() => decodeSketch(Uint8Array.of(9))).toThrow(/version/);
    expect(() => decodeSketch(Uint8Array.of(1, 0, 2, 3))).toThrow(/end/);
  });
});
