import { ulid } from 'ulidx';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NormalisedEvent } from '../../src/core/event.js';
import { SYSTEM_SCOPE } from '../../src/event-store/read-scope.js';
import { cond, TRUE } from '../../src/filter/ast.js';
import { event } from './filter-store.js';
import { STORES, type StoreUnderTest } from './stores.js';

/**
 * `setPatternIds` (re-mining, docs/api/patterns.md) on every store: the listed events read
 * back with their new ids, by search and by pattern_id, and nothing else changes (the
 * other events, the events outside the range, the other columns).
 */
const T0 = Date.UTC(2024, 5, 1);
const ALL = { fromMs: -1e15, toMs: 1e15 };

const EVENTS: NormalisedEvent[] = Array.from({ length: 30 }, (_, i) =>
  event(ulid(T0 + i * 1000), {
    ts: T0 + i * 60_000,
    received_at: T0 + i * 1000,
    app: 'sshd',
    host: `h${i % 3}`,
    message: `line ${i}`,
    pattern_id: `old${i % 2}`,
    fields: { k: `v${i}` },
  }),
);

describe.each(STORES.filter((s) => s.run))('$name: setPatternIds', (kind) => {
  let s: StoreUnderTest;
  beforeAll(async () => {
    s = await kind.open();
    await s.store.append(EVENTS);
  });
  afterAll(() => s?.close());

  const read = async () => {
    const r = await s.store.execute({
      kind: 'search',
      scope: SYSTEM_SCOPE,
      filter: TRUE,
      range: ALL,
      sort: [{ field: 'ts', desc: false }],
      limit: 100,
      offset: 0,
      count: true,
    });
    return r.events;
  };

  it('gives the listed events their new ids, within the range, and changes nothing else', async () => {
    const before = await read();
    // Events 0-19 lie in the range; 25 is listed but outside it, so it keeps its id.
    const range = { fromMs: T0, toMs: T0 + 20 * 60_000 };
    const moved = [0, 3, 4, 19, 25].map((i) => EVENTS[i] as NormalisedEvent);
    await s.store.setPatternIds(range, [
      ...moved.map((e, j) => [e.ev_id, `new${j % 2}`] as const),
      // Thousands of ids: a ClickHouse statement longer than its default 256 KiB.
      ...Array.from({ length: 6000 }, (_, i) => [ulid(T0 - 1e9 + i), 'new9'] as const),
    ]);
    const after = await read();
    expect(after).toHaveLength(30);
    for (const [i, e] of after.entries()) {
      const j = [0, 3, 4, 19].indexOf(i);
      expect(e.pattern_id, `event ${i}`).toBe(j >= 0 ? `new${j % 2}` : `old${i % 2}`);
      const { pattern_id: _a, ...rest } = e;
      const { pattern_id: _b, ...was } = before[i] as typeof e;
      expect(rest).toEqual(was);
    }
    const found = await s.store.execute({
      kind: 'search',
      scope: SYSTEM_SCOPE,
      filter: cond('pattern_id', 'eq', 'new1'),
      range: ALL,
      sort: [{ field: 'ts', desc: false }],
      limit: 100,
      offset: 0,
      count: true,
    });
    expect(found.events.map((e) => e.message)).toEqual(['line 3', 'line 19']);
    expect(found.total).toBe(2);
    // Nothing to set is no statement and no error.
    await s.store.setPatternIds(range, []);
  });

  it('keeps the membership of a stream whose rule reads pattern_id (read by it on DuckDB)', async () => {
    const rule = cond('pattern_id', 'eq', 'moved');
    await s.store.setStreamRules({ key: 'r1', streams: [{ id: 1, filter: rule }] });
    const scope = { key: 's1', filter: rule, streams: { rules: 'r1', ids: [1], unclaimed: false } };
    const inStream = async () =>
      (
        await s.store.execute({
          kind: 'search',
          scope,
          filter: TRUE,
          range: ALL,
          sort: [{ field: 'ts', desc: false }],
          limit: 100,
          offset: 0,
          count: true,
        })
      ).events.map((e) => e.message);
    expect(await inStream()).toEqual([]);
    const e = EVENTS[7] as NormalisedEvent;
    await s.store.setPatternIds({ fromMs: e.ts, toMs: e.ts + 1 }, [[e.ev_id, 'moved']]);
    expect(await inStream()).toEqual(['line 7']);
  });
});
