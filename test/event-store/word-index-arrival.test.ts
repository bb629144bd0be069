import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prng } from '../../src/cli/demo-generator.js';
import type { NormalisedEvent } from '../../src/core/event.js';
import { DuckDbEventStore } from '../../src/event-store/duckdb/duckdb-event-store.js';
import type { WordIndex } from '../../src/event-store/duckdb/word-index.js';
import type { TimeWindow } from '../../src/event-store/query-plan.js';
import { SYSTEM_SCOPE } from '../../src/event-store/read-scope.js';
import { cond, type FilterNode } from '../../src/filter/ast.js';
import { event } from './filter-store.js';

// The word index for events as shippers send them (docs/adr/0004-word-index.md): small
// batches of random sizes, 2 % of the events late by up to an hour. A rare word — in one
// event in time, and in one of the late ones — is found through the index: the ranges it
// gives hold a small share of the window's events, not the whole window (a scan).

const T0 = Date.UTC(2024, 6, 1);
const HOUR = 3_600_000;
const EVENTS = 120_000;
/** An event every 72 ms: 2.4 hours, a block of 8,192 about 10 minutes. */
const STEP = 72;

describe('the word index for events in small batches, some late', () => {
  let store: DuckDbEventStore;
  const next = prng(57);
  const events: NormalisedEvent[] = [];
  const range: TimeWindow = { fromMs: T0 - HOUR, toMs: T0 + EVENTS * STEP + HOUR };

  beforeAll(async () => {
    store = await DuckDbEventStore.open({
      dataDir: ':memory:',
      memoryLimit: '512MB',
      checkpointThreshold: '16MB',
    });
    let late = 0;
    for (let i = 0; i < EVENTS; i++) {
      // 2 % late: its time up to an hour before the events it arrives with.
      const isLate = next() < 0.02;
      const ts = T0 + i * STEP - (isLate ? Math.floor(next() * HOUR) : 0);
      const word = i === 40_000 ? ' wolframite' : isLate && late++ === 300 ? ' scheelite' : '';
      events.push(
        event(`a${String(i).padStart(6, '0')}`, {
          ts,
          received_at: T0 + i * STEP,
          host: `h${i % 7}`,
          message: `GET /api/orders/${Math.floor(next() * 1e6)} took ${Math.floor(next() * 900)} ms${word}`,
        }),
      );
    }
    // In arrival order, in batches of 1 to 200 events.
    for (let at = 0; at < events.length; ) {
      const size = 1 + Math.floor(next() * 200);
      await store.append(events.slice(at, at + size));
      at += size;
    }
  }, 120_000);
  afterAll(() => store?.close());

  const count = async (filter: FilterNode) =>
    (
      await store.execute({
        kind: 'search',
        scope: SYSTEM_SCOPE,
        filter,
        range,
        sort: [],
        limit: 0,
        offset: 0,
        count: true,
      })
    ).total;
  /** The share of the window's events inside the ranges the index gives (all of them: a scan). */
  const share = (filter: FilterNode) => {
    const words = (store as unknown as { words: WordIndex }).words;
    const ranges = words.scan(filter, range) ?? [{ fromMs: range.fromMs, toMs: range.toMs - 1 }];
    const inside = events.filter((e) => ranges.some((r) => e.ts >= r.fromMs && e.ts <= r.toMs)).length;
    return inside / events.length;
  };

  it("keeps a block per late events' time bucket, not per batch: blocks hold thousands of events", () => {
    const words = (store as unknown as { words: WordIndex }).words;
    const { blocks } = words.size;
    // 120,000 events: ~15 blocks in order, and the late ones' buckets of 15 minutes over
    // the 3.4 hours they span (a block per late event and batch made ~2,000).
    expect(blocks).toBeLessThan(60);
    expect(EVENTS / blocks).toBeGreaterThan(2_000);
  });

  it.each([
    ['in time', 'wolframite'],
    ['late', 'scheelite'],
  ])(
    'finds a rare word in an event %s through the index, reading a small share of the window',
    async (_, word) => {
      for (const filter of [
        cond('message', 'contains', word),
        cond('message', 'contains', word.toUpperCase()),
      ]) {
        expect(await count(filter)).toBe(1);
        // Its block and at most the one before (batches a little out of order join the open block).
        expect(share(filter)).toBeLessThan(0.15);
        // The query's statistics say so: narrowed to its candidates' ranges.
        const { index } = await store.readReach(filter, SYSTEM_SCOPE, range);
        expect(index).toMatchObject({ path: 'narrowed', why: null });
        expect(index?.candidate_blocks).toBeGreaterThan(0);
        expect(index?.candidate_blocks).toBeLessThanOrEqual(3);
        expect(index?.blocks).toBe((store as unknown as { words: WordIndex }).words.size.blocks);
      }
    },
  );

  it("reads a candidate's rows where they were appended: its ranges carry the blocks' stored_at spans", async () => {
    const words = (store as unknown as { words: WordIndex }).words;
    const extent = async (
      w: { fromMs: number; toMs: number; stored?: { from: number; to: number } },
      stored: boolean,
    ) => {
      const [row] = await store.runSql(
        `SELECT count(*) AS n, max(rowid) - min(rowid) AS extent FROM events
         WHERE epoch_ms(ts) BETWEEN ${w.fromMs} AND ${w.toMs}${
           stored && w.stored ? ` AND epoch_ms(stored_at) BETWEEN ${w.stored.from} AND ${w.stored.to}` : ''
         }`,
      );
      return { n: Number(row?.n), extent: Number(row?.extent) };
    };
    const filter = cond('message', 'contains', 'wolframite');
    const ranges = words.scan(filter, range) ?? [];
    expect(ranges.length).toBeGreaterThan(0);
    for (const w of ranges) {
      expect(w.stored).toBeDefined();
      const byTime = await extent(w, false);
      const byPlace = await extent(w, true);
      // By time alone, the late events of the range's time, appended up to an hour later
      // (~50,000 rows on), stretch it; within its span, the rows of its blocks' appends.
      expect(byTime.extent).toBeGreaterThan(30_000);
      expect(byPlace.extent).toBeLessThan(3 * 8_192);
      expect(byPlace.n).toBeGreaterThan(0);
    }
    // And the answer is the same: the span holds every event of its blocks.
    expect(await count(filter)).toBe(1);
  });

  it('says in the statistics when a search was answered by the index alone, or scanned and why', async () => {
    const reach = async (filter: FilterNode) => (await store.readReach(filter, SYSTEM_SCOPE, range)).index;
    // A word no block holds: nothing read.
    expect(await count(cond('message', 'contains', 'molybdenite'))).toBe(0);
    expect(await reach(cond('message', 'contains', 'molybdenite'))).toMatchObject({
      path: 'index',
      candidate_blocks: 0,
      ranges: 0,
    });
    // In every block: the candidates' ranges would hold the window.
    expect(await reach(cond('message', 'contains', 'orders'))).toMatchObject({
      path: 'scan',
      why: 'too_many_candidates',
    });
    // Nothing the index keeps: a range of numbers.
    expect(await reach(cond('status', 'gt', 400))).toMatchObject({ path: 'scan', why: 'no_indexed_term' });
  });
});
