import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changeScore } from '../../src/core/change-score.js';
import type { NormalisedEvent } from '../../src/core/event.js';
import type { ChangesResult, TimeWindow } from '../../src/event-store/query-plan.js';
import type { ReadScope } from '../../src/event-store/read-scope.js';
import { cond } from '../../src/filter/ast.js';
import { appendEvents, event } from './filter-store.js';
import { STORES, type StoreUnderTest } from './stores.js';

// The changes plan (Explain, docs/api/explain.md) on each event store against a JavaScript reading of
// the same events: both totals, every pattern's and examined value's counts in the focus
// window and the baseline, the score, the listed set and its order, and the newest samples
// of each listed pattern (the baseline's when gone); only what the read scope lets the
// caller read. Baselines before the focus (adjacent or a gap apart) and after it, of
// another length.

const T0 = Date.UTC(2024, 4, 1, 10);
const MIN = 60_000;
const FOCUS: TimeWindow = { fromMs: T0, toMs: T0 + 10 * MIN };
const BASELINES: TimeWindow[] = [
  { fromMs: T0 - 10 * MIN, toMs: T0 },
  { fromMs: T0 - 30 * MIN, toMs: T0 - 25 * MIN },
  { fromMs: T0 + 12 * MIN, toMs: T0 + 30 * MIN },
];
const PATTERNS = ['pa', 'pb', 'pc'];
const HOSTS = ['h1', 'h2', 'h3'];
const SCOPE: ReadScope = { key: 'test-h1-h2', filter: cond('host', 'in', ['h1', 'h2']) };
const FIELDS = ['host', 'status', 'tier'];

const eventsArb = fc.array(
  fc.record({
    // Minutes from 30 before the focus to 30 after it, so every baseline gets events.
    minute: fc.integer({ min: -30, max: 29 }),
    pattern: fc.option(fc.constantFrom(...PATTERNS), { nil: null, freq: 8 }),
    host: fc.constantFrom(...HOSTS),
    status: fc.option(fc.constantFrom(200, 404, 500), { nil: null }),
    tier: fc.option(fc.constantFrom('gold', 'free'), { nil: null }),
  }),
  { minLength: 1, maxLength: 80 },
);

interface Row {
  field: string | null;
  value: string | number;
  focusCount: number;
  baselineCount: number;
  score: number;
  samples?: string[];
}

/** What the plan must answer, read from the events in JavaScript. */
function expected(events: readonly NormalisedEvent[], baseline: TimeWindow, n: number, minScore: number) {
  const readable = events.filter((e) => e.host === 'h1' || e.host === 'h2');
  const within = (w: TimeWindow) => readable.filter((e) => e.ts >= w.fromMs && e.ts < w.toMs);
  const f = within(FOCUS);
  const b = within(baseline);
  const tf = (FOCUS.toMs - FOCUS.fromMs) / 1000;
  const tb = (baseline.toMs - baseline.fromMs) / 1000;
  const valueIn = (e: NormalisedEvent, field: string | null): string | number | null =>
    field === null
      ? e.pattern_id
      : field === 'host'
        ? e.host
        : field === 'status'
          ? e.status
          : (e.fields[field] ?? null);
  const rows: Row[] = [];
  for (const field of [null, ...FIELDS]) {
    const values = new Set([...f, ...b].map((e) => valueIn(e, field)).filter((v) => v !== null));
    for (const value of values) {
      const fc1 = f.filter((e) => valueIn(e, field) === value).length;
      const bc = b.filter((e) => valueIn(e, field) === value).length;
      if (fc1 === f.length && bc === b.length) continue;
      const score = changeScore(fc1, bc, tf, tb);
      if (score > 0 && score >= minScore)
        rows.push({ field, value: value as string | number, focusCount: fc1, baselineCount: bc, score });
    }
  }
  rows.sort(
    (x, y) =>
      y.score - x.score ||
      y.focusCount + y.baselineCount - (x.focusCount + x.baselineCount) ||
      (x.field === null ? 0 : 1) - (y.field === null ? 0 : 1) ||
      (x.field ?? '').localeCompare(y.field ?? '') ||
      (String(x.value) < String(y.value) ? -1 : String(x.value) > String(y.value) ? 1 : 0),
  );
  const listed = rows.slice(0, n);
  for (const r of listed) {
    if (r.field !== null) continue;
    const from = r.focusCount > 0 ? f : b;
    r.samples = from
      .filter((e) => e.pattern_id === r.value)
      .sort((x, y) => y.ts - x.ts || (x.ev_id < y.ev_id ? 1 : -1))
      .slice(0, 3)
      .map((e) => e.ev_id);
  }
  return { focusTotal: f.length, baselineTotal: b.length, changes: listed };
}

describe.each(STORES.filter((s) => s.run))('$name: the changes plan', (kind) => {
  let t: StoreUnderTest;
  let run = 0;
  beforeAll(async () => {
    t = await kind.open();
  });
  afterAll(async () => {
    await t?.close();
  }, 120_000);

  it('counts, scores, lists and samples as JavaScript reads the same events, within the read scope', async () => {
    await fc.assert(
      fc.asyncProperty(
        eventsArb,
        fc.constantFrom(...BASELINES),
        fc.integer({ min: 1, max: 12 }),
        fc.constantFrom(0, 0.5, 3),
        async (drawn, baseline, n, minScore) => {
          const prefix = `cp${run++}-`;
          const events = drawn.map((d, i) =>
            event(`${prefix}${String(i).padStart(3, '0')}`, {
              // Seconds apart within a minute, so samples have distinct times.
              ts: T0 + d.minute * MIN + (i % 60) * 1000,
              host: d.host,
              status: d.status,
              pattern_id: d.pattern === null ? null : `${prefix}${d.pattern}`,
              message: `m${i}`,
              fields: d.tier === null ? {} : { tier: d.tier },
            }),
          );
          await appendEvents(t.store, events);
          const result = (await t.store.execute({
            kind: 'changes',
            scope: SCOPE,
            filter: cond('ev_id', 'startswith', prefix),
            range: FOCUS,
            baseline,
            fields: FIELDS,
            n,
            minScore,
          })) as ChangesResult;
          const got = {
            focusTotal: result.focusTotal,
            baselineTotal: result.baselineTotal,
            changes: result.changes.map((c) => ({
              field: c.field,
              value: c.value,
              focusCount: c.focusCount,
              baselineCount: c.baselineCount,
              score: c.score,
              ...(c.samples ? { samples: c.samples.map((s) => s.evId) } : {}),
            })),
          };
          const want = expected(events, baseline, n, minScore);
          expect(got).toEqual({
            ...want,
            changes: want.changes.map((c) => ({ ...c, score: expect.closeTo(c.score, 9) })),
          });
          expect(result.fields).toEqual(FIELDS);
        },
      ),
      { numRuns: kind.name === 'clickhouse' ? 30 : 100 },
    );
  }, 300_000);

  it('keeps a field of 60,000 distinct values to its 100 most common of each window', async () => {
    const prefix = `cu${run++}-`;
    const events = Array.from({ length: 60_000 }, (_, i) =>
      event(`${prefix}${String(i).padStart(5, '0')}`, {
        // half in the focus, half in the baseline; every user once, but u-7 in 40 events
        ts: (i % 2 ? FOCUS.fromMs : (BASELINES[0] as TimeWindow).fromMs) + (i % 600) * 1000,
        host: 'h1',
        user: i < 40 && i % 2 ? 'u-7' : `u-${i}`,
      }),
    );
    for (let at = 0; at < events.length; at += 10_000)
      await appendEvents(t.store, events.slice(at, at + 10_000));
    const result = (await t.store.execute({
      kind: 'changes',
      scope: SCOPE,
      filter: cond('ev_id', 'startswith', prefix),
      range: FOCUS,
      baseline: BASELINES[0] as TimeWindow,
      fields: ['user'],
      n: 1000,
      minScore: 20,
    })) as ChangesResult;
    expect(result.focusTotal).toBe(30_000);
    // The 100 most common of each window (ties by value text), no more.
    expect(result.tested).toBeLessThanOrEqual(200);
    expect(result.changes.map((c) => [c.value, c.focusCount, c.baselineCount])).toEqual([['u-7', 20, 0]]);
  }, 120_000);

  it('examines by default the usual fields the focus window has, then those in 1 % of its events', async () => {
    const prefix = `cd${run++}-`;
    const events = Array.from({ length: 300 }, (_, i) =>
      event(`${prefix}${String(i).padStart(3, '0')}`, {
        ts: T0 + (i % 10) * MIN,
        host: i % 2 ? 'h1' : 'h2',
        app: 'shop',
        // in 2 of 300 (under 1 %): not examined; in 150: examined, after the usual ones.
        fields: { ...(i < 2 ? { rare: 'x' } : {}), ...(i % 2 ? { tier: 'gold' } : {}) },
      }),
    );
    await appendEvents(t.store, events);
    const result = (await t.store.execute({
      kind: 'changes',
      scope: SCOPE,
      filter: cond('ev_id', 'startswith', prefix),
      range: FOCUS,
      baseline: BASELINES[0] as TimeWindow,
      fields: null,
      n: 20,
      minScore: 20,
    })) as ChangesResult;
    expect(result.fields).toEqual(['host', 'app', 'tier']);
    expect(result.focusTotal).toBe(300);
  });

  it('decides the default fields over every event of the focus window, and a number field stays a number', async () => {
    const prefix = `cw${run++}-`;
    const at = (i: number, w: TimeWindow, of: number) =>
      w.fromMs + Math.floor(((w.toMs - w.fromMs) * i) / of);
    // 3,000 events in the focus: `zone` in its 300 oldest only (10 %, none among the newest
    // 2,000), `size` and `say"so` JSON numbers in its 150 newest (5 %), `rare` in 20 (under 1 %).
    const focus = Array.from({ length: 3000 }, (_, i) =>
      event(`${prefix}f${String(i).padStart(4, '0')}`, {
        ts: at(i, FOCUS, 3000),
        host: 'h1',
        app: 'shop',
        shape: i >= 2850 ? JSON.stringify({ t: { size: 'n', 'say"so': 'n' } }) : null,
        fields: {
          ...(i < 300 ? { zone: 'z1' } : {}),
          ...(i >= 2850 ? { size: '7', 'say"so': '7' } : {}),
          ...(i % 150 === 3 ? { rare: 'x' } : {}),
        },
      }),
    );
    const baseline = BASELINES[0] as TimeWindow;
    const before = Array.from({ length: 3000 }, (_, i) =>
      event(`${prefix}b${String(i).padStart(4, '0')}`, {
        ts: at(i, baseline, 3000),
        host: 'h1',
        app: 'shop',
      }),
    );
    for (const batch of [focus, before]) await appendEvents(t.store, batch);
    const result = (await t.store.execute({
      kind: 'changes',
      scope: SCOPE,
      filter: cond('ev_id', 'startswith', prefix),
      range: FOCUS,
      baseline,
      fields: null,
      n: 20,
      minScore: 20,
    })) as ChangesResult;
    expect(result.fields).toEqual(['host', 'app', 'zone', 'say"so', 'size']);
    const changed = result.changes.map((c) => [c.field, c.value, c.focusCount, c.baselineCount]);
    expect(changed).toEqual([
      ['zone', 'z1', 300, 0],
      ['say"so', 7, 150, 0],
      ['size', 7, 150, 0],
    ]);
  }, 60_000);

  it("takes each window's most common values among the values that window has", async () => {
    const prefix = `cv${run++}-`;
    const baseline = BASELINES[0] as TimeWindow;
    // The focus: 3 users. The baseline: 100 users twice each and 50 once, the 50 first by
    // text: none of them is among the focus window's values, nor the baseline's 100 most common.
    const users = [
      ...['a', 'b', 'c'].flatMap((u) => Array.from({ length: 5 }, () => ({ u, w: FOCUS }))),
      ...Array.from({ length: 100 }, (_, i) => [`v-${100 + i}`, `v-${100 + i}`]).flatMap((us) =>
        us.map((u) => ({ u, w: baseline })),
      ),
      ...Array.from({ length: 50 }, (_, i) => ({ u: `a-${String(i).padStart(2, '0')}`, w: baseline })),
    ];
    const events = users.map(({ u, w }, i) =>
      event(`${prefix}${String(i).padStart(3, '0')}`, { ts: w.fromMs + i * 1000, host: 'h1', user: u }),
    );
    await appendEvents(t.store, events);
    const result = (await t.store.execute({
      kind: 'changes',
      scope: SCOPE,
      filter: cond('ev_id', 'startswith', prefix),
      range: FOCUS,
      baseline,
      fields: ['user'],
      n: 1000,
      minScore: 0,
    })) as ChangesResult;
    expect(result.tested).toBe(103);
    const values = new Set(result.changes.map((c) => c.value));
    expect(values.has('a')).toBe(true);
    expect(values.has('v-150')).toBe(true);
    expect(values.has('a-00')).toBe(false);
  });
});
