import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NormalisedEvent } from '../../src/core/event.js';
import type { PatternsResult } from '../../src/event-store/query-plan.js';
import type { ReadScope } from '../../src/event-store/read-scope.js';
import { cond } from '../../src/filter/ast.js';
import { appendEvents, event } from './filter-store.js';
import { STORES, type StoreUnderTest } from './stores.js';

// The Patterns plan (docs/api/patterns.md) on each event store against a JavaScript reading of the same
// events: counts, first and last seen, the 20-bucket series, the newest 3 samples of each
// pattern by (time, ev_id) with many events sharing a time, and the counts of an earlier
// range; only what the read scope lets the caller read, so an unreadable event of the same
// pattern at the same time is never a sample.

const T0 = Date.UTC(2024, 4, 1, 10);
const RANGE = { fromMs: T0, toMs: T0 + 20 * 60_000 };
const EARLIER = { fromMs: T0 - 20 * 60_000, toMs: T0 };
const PATTERNS = ['pa', 'pb', 'pc', 'pd'];
const HOSTS = ['h1', 'h2', 'h3'];
const SCOPE: ReadScope = { key: 'test-h1-h2', filter: cond('host', 'in', ['h1', 'h2']) };

const eventsArb = fc.array(
  fc.record({
    // Minutes of the range, some in the earlier range, and two that many events share
    // (ties at a pattern's third newest time).
    slot: fc.oneof(fc.integer({ min: -6, max: 19 }), fc.constantFrom(7, 12)),
    pattern: fc.option(fc.constantFrom(...PATTERNS), { nil: null, freq: 8 }),
    host: fc.constantFrom(...HOSTS),
  }),
  { minLength: 1, maxLength: 60 },
);

type Expected = Pick<PatternsResult, 'total'> & {
  items: Array<{
    patternId: string;
    count: number;
    firstSeen: number;
    lastSeen: number;
    series: number[];
    samples: string[];
    previousCount: number;
  }>;
};

/** What the plan must answer, read from the events in JavaScript. */
function expected(events: readonly NormalisedEvent[], n: number): Expected {
  const readable = events.filter((e) => e.host === 'h1' || e.host === 'h2');
  const inRange = (e: NormalisedEvent, r: typeof RANGE) => e.ts >= r.fromMs && e.ts < r.toMs;
  const now = readable.filter((e) => e.pattern_id !== null && inRange(e, RANGE));
  const width = Math.ceil((RANGE.toMs - RANGE.fromMs) / 20);
  const ids = [...new Set(now.map((e) => e.pattern_id as string))];
  const items = ids.map((id) => {
    const own = now.filter((e) => e.pattern_id === id);
    const series = new Array<number>(20).fill(0);
    for (const e of own) {
      const b = Math.floor((e.ts - RANGE.fromMs) / width);
      series[b] = (series[b] ?? 0) + 1;
    }
    const newest = [...own].sort(
      (a, b) => b.ts - a.ts || (a.ev_id < b.ev_id ? 1 : a.ev_id > b.ev_id ? -1 : 0),
    );
    return {
      patternId: id,
      count: own.length,
      firstSeen: Math.min(...own.map((e) => e.ts)),
      lastSeen: Math.max(...own.map((e) => e.ts)),
      series,
      samples: newest.slice(0, 3).map((e) => e.ev_id),
      previousCount: readable.filter((e) => e.pattern_id === id && inRange(e, EARLIER)).length,
    };
  });
  items.sort((a, b) => b.count - a.count || (a.patternId < b.patternId ? -1 : 1));
  return { total: now.length, items: items.slice(0, n) };
}

describe.each(STORES.filter((s) => s.run))('$name: the Patterns plan', (kind) => {
  let t: StoreUnderTest;
  let run = 0;
  beforeAll(async () => {
    t = await kind.open();
  });
  afterAll(async () => {
    await t?.close();
  }, 120_000);

  it('counts, spans, series, newest samples (ties by ev_id) and earlier counts as JavaScript reads them', async () => {
    await fc.assert(
      fc.asyncProperty(eventsArb, fc.integer({ min: 1, max: 4 }), async (drawn, n) => {
        const prefix = `pp${run++}-`;
        const events = drawn.map((d, i) =>
          event(`${prefix}${String(i).padStart(3, '0')}`, {
            ts: T0 + d.slot * 60_000,
            host: d.host,
            pattern_id: d.pattern === null ? null : `${prefix}${d.pattern}`,
            message: `m${i}`,
          }),
        );
        await appendEvents(t.store, events);
        const result = (await t.store.execute({
          kind: 'patterns',
          scope: SCOPE,
          filter: cond('ev_id', 'startswith', prefix),
          range: RANGE,
          n,
          buckets: 20,
          compareTo: EARLIER,
        })) as PatternsResult;
        const got = {
          total: result.total,
          items: result.items.map((i) => ({
            patternId: i.patternId,
            count: i.count,
            firstSeen: i.firstSeen,
            lastSeen: i.lastSeen,
            series: i.series,
            samples: i.samples.map((s) => s.evId),
            previousCount: i.previousCount,
          })),
        };
        expect(got).toEqual(expected(events, n));
      }),
      { numRuns: kind.name === 'clickhouse' ? 40 : 120 },
    );
  }, 300_000);
});
