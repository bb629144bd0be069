import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NormalisedEvent } from '../../src/core/event.js';
import type { DuckDbEventStore } from '../../src/event-store/duckdb/duckdb-event-store.js';
import { KEYED_PAGE_ROWS, searchPageSql, searchRowsSql } from '../../src/event-store/duckdb/duckdb-plans.js';
import type { SearchPlan, SortTerm } from '../../src/event-store/query-plan.js';
import { SYSTEM_SCOPE } from '../../src/event-store/read-scope.js';
import { and, cond, type FilterNode, not, TRUE } from '../../src/filter/ast.js';
import { compilePredicate, type EventLike } from '../../src/filter/evaluate.js';
import { eventComparator } from '../../src/filter/sort.js';
import { appendEvents, event, openFilterStore } from './filter-store.js';

/**
 * A Search page read by its keys first (duckdb-plans.ts `searchPageSql`: the keys, then
 * the rows holding them within their time span) is the page one statement gives, and the
 * page the JavaScript evaluation gives: for filters, sorts (columns, extra fields, NULLs,
 * many events sharing a time), offsets and limits.
 */
const BASE = Date.UTC(2024, 4, 1);
const HOSTS = ['web-1', 'web-2', 'db-1', null] as const;
const METHODS = ['GET', 'POST', 'DELETE'] as const;

function events(): NormalisedEvent[] {
  const out: NormalisedEvent[] = [];
  let seed = 7;
  const r = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  for (let i = 0; i < 600; i++) {
    // 40 distinct times over a day: pages end inside runs of equal times.
    const ts = BASE + Math.floor(r() * 40) * 2_160_000 + (r() < 0.5 ? 0 : 1);
    const fields: Record<string, string> = {};
    if (r() < 0.6) fields['http.method'] = METHODS[Math.floor(r() * METHODS.length)] as string;
    out.push(
      event(`01KP${String(i).padStart(6, '0')}`, {
        ts,
        host: HOSTS[Math.floor(r() * HOSTS.length)] ?? null,
        status: r() < 0.2 ? null : ([200, 304, 404, 500][Math.floor(r() * 4)] ?? null),
        bytes: r() < 0.1 ? null : Math.floor(r() * 5000),
        message: `request ${i % 17}`,
        fields,
      }),
    );
  }
  return out;
}

const FILTERS: FilterNode[] = [
  TRUE,
  cond('status', 'gte', 400),
  and(cond('host', 'eq', 'web-2'), cond('status', 'gte', 300)),
  not(cond('host', 'eq', 'web-1')),
  cond('http.method', 'eq', 'POST'),
  cond('status', 'eq', 999),
];
const SORTS: SortTerm[][] = [
  [{ field: 'ts', desc: true }],
  [{ field: 'ts', desc: false }],
  [{ field: 'status', desc: false }],
  [
    { field: 'host', desc: true },
    { field: 'bytes', desc: false },
  ],
  [{ field: 'http.method', desc: false }],
];

describe('DuckDB: a Search page read by its keys', () => {
  let store: DuckDbEventStore;
  let stored: EventLike[];
  beforeAll(async () => {
    store = await openFilterStore();
    stored = await appendEvents(store, events());
  });
  afterAll(() => store.close());

  const planOf = (filter: FilterNode, sort: SortTerm[], limit: number, offset: number): SearchPlan => ({
    kind: 'search',
    scope: SYSTEM_SCOPE,
    filter,
    range: { fromMs: BASE + 3_600_000, toMs: BASE + 80_000_000 },
    sort,
    limit,
    offset,
    count: false,
  });

  it('gives the page one statement gives and the JavaScript evaluation gives', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...FILTERS),
        fc.constantFrom(...SORTS),
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 0, max: 200 }),
        async (filter, sort, limit, offset) => {
          const plan = planOf(filter, sort, limit, offset);
          // The keyed form is the one being tested here.
          expect(searchPageSql(plan).followedBy).toBeDefined();
          const keyed = (await store.execute(plan)).events.map((e) => e.ev_id);
          const one = searchRowsSql(plan, { columnOf: store.extras.columnOf });
          const single = (await store.runSql(one.sql, one.params.values)).map((r) => String(r.ev_id));
          const matches = compilePredicate(filter);
          const expected = stored
            .filter((e) => Number(e.ts) >= plan.range.fromMs && Number(e.ts) < plan.range.toMs && matches(e))
            .sort(eventComparator(sort))
            .slice(offset, offset + limit)
            .map((e) => e.ev_id);
          expect(keyed).toEqual(expected);
          expect(single).toEqual(expected);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('reads the events whole, as one statement does', async () => {
    const plan = planOf(TRUE, [{ field: 'ts', desc: true }], 30, 5);
    const keyed = (await store.execute(plan)).events;
    const one = searchRowsSql(plan, { columnOf: store.extras.columnOf });
    const byId = new Map(stored.map((e) => [e.ev_id, e]));
    expect(keyed).toHaveLength(30);
    for (const e of keyed) expect(e).toMatchObject(byId.get(e.ev_id) as object);
    expect(keyed.map((e) => e.ev_id)).toEqual(
      (await store.runSql(one.sql, one.params.values)).map((r) => String(r.ev_id)),
    );
  });

  it('reads a page past its keys limit, under the word index or testing a word, in one statement', () => {
    const big = planOf(TRUE, [{ field: 'ts', desc: true }], KEYED_PAGE_ROWS + 1, 0);
    expect(searchPageSql(big).followedBy).toBeUndefined();
    const narrowed = searchPageSql(planOf(TRUE, [{ field: 'ts', desc: true }], 10, 0), {
      words: [{ fromMs: BASE, toMs: BASE + 1000 }],
    });
    expect(narrowed.followedBy).toBeUndefined();
    // A word of the message, the index's ranges declined: the keys' span would be tested again.
    const word = planOf(cond('message', 'contains', 'needle'), [{ field: 'ts', desc: true }], 10, 0);
    expect(searchPageSql(word, { wordTest: true }).followedBy).toBeUndefined();
    expect(searchPageSql(word).followedBy).toBeDefined();
  });
});
