import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { NormalisedEvent } from '../../../src/core/event.js';
import type { DuckDbEventStore } from '../../../src/event-store/duckdb/duckdb-event-store.js';
import type { QueryPlan, TimeWindow } from '../../../src/event-store/query-plan.js';
import { SYSTEM_SCOPE } from '../../../src/event-store/read-scope.js';
import { TRUE } from '../../../src/filter/ast.js';
import type { EventLike } from '../../../src/filter/evaluate.js';
import { QUERY_TYPE_DEFS } from '../../../src/query/types/index.js';
import type { CommonParamValues, QueryTypeDef } from '../../../src/query/types/query-type.js';
import { event, openFilterStore } from '../filter-store.js';

/**
 * Live folding (QueryTypeDef.fold): the results of the events stored so far plus the
 * events committed since, computed in memory, equal what the engine answers over all of
 * them, wherever the type says its fold is exact.
 */

const BASE = Date.UTC(2024, 4, 1, 10);
const WINDOW: TimeWindow = { fromMs: BASE - 3_600_000, toMs: BASE + 3_600_000 };
const HOSTS = ['web-1', 'web-2', 'db-1', 'Ärger', 'a b'];
const SEVERITIES = ['error', 'warning', 'info', 'debug'] as const;

const eventArb = fc.record({
  offset: fc.integer({ min: -3_500_000, max: 3_500_000 }),
  host: fc.option(fc.constantFrom(...HOSTS), { nil: null }),
  severity: fc.option(fc.constantFrom(...SEVERITIES), { nil: null }),
  status: fc.option(fc.constantFrom(200, 404, 500, 503), { nil: null }),
  bytes: fc.option(fc.integer({ min: 0, max: 100_000 }), { nil: null }),
  path: fc.option(fc.constantFrom('/a', '/b', '12', '7.5', 'x'), { nil: null }),
});
const batchArb = fc.array(eventArb, { minLength: 0, maxLength: 25 });

type Row = typeof eventArb extends fc.Arbitrary<infer T> ? T : never;

let seq = 0;
function toEvents(batch: Row[]): NormalisedEvent[] {
  return batch.map((b) =>
    event(`e${String(seq++).padStart(8, '0')}`, {
      ts: BASE + b.offset,
      host: b.host,
      severity: b.severity,
      status: b.status,
      bytes: b.bytes,
      fields: b.path === null ? {} : { path: b.path },
    }),
  );
}

type Case = { type: keyof typeof QUERY_TYPE_DEFS; params: Record<string, unknown> };

/** Params for which each type's fold is exact (lists long enough to hold every value). */
const EXACT: Case[] = [
  { type: 'TopN', params: { field: 'host', n: 100 } },
  { type: 'TopN', params: { field: 'status', n: 100 } },
  { type: 'TopN', params: { field: 'path', n: 100 } },
  { type: 'LastN', params: { field: 'severity', n: 100 } },
  { type: 'LastN', params: { field: 'path', n: 100 } },
  { type: 'Summary', params: { group_by: [], metrics: [{ op: 'count' }] } },
  {
    type: 'Summary',
    params: {
      group_by: [],
      metrics: [
        { op: 'count' },
        { op: 'count', field: 'path' },
        { op: 'sum', field: 'bytes' },
        { op: 'min', field: 'path' },
        { op: 'max', field: 'status' },
      ],
    },
  },
  {
    type: 'Summary',
    params: {
      group_by: ['severity', 'host'],
      metrics: [{ op: 'count' }, { op: 'sum', field: 'bytes' }, { op: 'max', field: 'ts' }],
      n: 1000,
    },
  },
  { type: 'Timeline', params: { interval: '5m' } },
  { type: 'Timeline', params: { interval: 'auto', split_by: 'severity' } },
];

let store: DuckDbEventStore | null = null;
afterEach(async () => {
  await store?.close();
  store = null;
});

function paramsOf(c: Case): CommonParamValues {
  return { time_range: { preset: 'last_hour' }, filter: [], query: '', ...c.params } as CommonParamValues;
}

async function evaluate(s: DuckDbEventStore, def: QueryTypeDef, params: CommonParamValues) {
  return s.execute({ ...def.plan(params, TRUE, WINDOW), scope: SYSTEM_SCOPE } as QueryPlan);
}

/** Summary sums may differ in the last bits by addition order. */
function normalise(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v), (_k, x) => (typeof x === 'number' ? Number(x.toPrecision(12)) : x));
}

describe('live folding equals a full evaluation', () => {
  for (const c of EXACT) {
    it(`${c.type} ${JSON.stringify(c.params)}`, async () => {
      const def = QUERY_TYPE_DEFS[c.type];
      const params = paramsOf(c);
      expect(def.fold?.accepts(params)).toBe(true);
      await fc.assert(
        fc.asyncProperty(
          batchArb,
          fc.array(batchArb, { minLength: 1, maxLength: 3 }),
          async (first, later) => {
            await store?.close();
            store = await openFilterStore();
            await store.append(toEvents(first));
            let results = await evaluate(store, def, params);
            for (const batch of later) {
              const events = toEvents(batch);
              if (events.length) await store.append(events);
              results = def.fold?.apply(
                results,
                events as unknown as EventLike[],
                params,
                WINDOW,
              ) as typeof results;
            }
            const full = await evaluate(store, def, params);
            expect(normalise(def.present(results, params, { window: WINDOW }))).toEqual(
              normalise(def.present(full, params, { window: WINDOW })),
            );
          },
        ),
        { numRuns: 15 },
      );
    });
  }

  it('TopN with a short full list: the total and listed counts stay exact, the list may lag', async () => {
    const def = QUERY_TYPE_DEFS.TopN;
    const params = paramsOf({ type: 'TopN', params: { field: 'host', n: 2 } });
    store = await openFilterStore();
    const mk = (host: string, k: number) =>
      Array.from({ length: k }, () => ({
        offset: 0,
        host,
        severity: null,
        status: null,
        bytes: null,
        path: null,
      }));
    await store.append(toEvents([...mk('web-1', 5), ...mk('web-2', 3), ...mk('db-1', 2)]));
    const before = await evaluate(store, def, params);
    const later = toEvents(mk('db-1', 2));
    await store.append(later);
    const folded = def.fold?.apply(before, later as unknown as EventLike[], params, WINDOW);
    // db-1 (now 4) has overtaken web-2 (3): the fold cannot know its earlier 2.
    expect(def.present(folded, params, { window: WINDOW })).toEqual({
      total: 12,
      items: [
        { value: 'web-1', count: 5, share: 5 / 12 },
        { value: 'web-2', count: 3, share: 3 / 12 },
      ],
      other: 4,
    });
    const full = def.present(await evaluate(store, def, params), params, { window: WINDOW }) as {
      items: Array<{ value: string }>;
    };
    expect(full.items.map((i) => i.value)).toEqual(['web-1', 'db-1']);
  });

  it('averages, distinct counts and percentiles do not fold', () => {
    const def = QUERY_TYPE_DEFS.Summary;
    for (const op of ['avg', 'count_distinct', 'p50']) {
      const params = paramsOf({
        type: 'Summary',
        params: { group_by: [], metrics: [{ op, field: 'bytes' }] },
      });
      expect(def.fold?.accepts(params)).toBe(false);
    }
    expect(QUERY_TYPE_DEFS.Search.fold).toBeUndefined();
  });
});
