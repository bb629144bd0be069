import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/core/event.js';
import type { ReadScope } from '../../src/event-store/read-scope.js';
import { rulesWithKey } from '../../src/features/streams/membership.js';
import { scopeOf } from '../../src/features/streams/read-scopes.js';
import { and, cond, type FilterNode, not, or } from '../../src/filter/ast.js';
import { compilePredicate, type EventLike } from '../../src/filter/evaluate.js';
import { condition, eventsArb, filter } from '../helpers/filter-arbitraries.js';
import { appendEvents, jsSelects } from './filter-store.js';
import { STORES, type StoreUnderTest } from './stores.js';

const EVERYWHERE = { fromMs: -1e15, toMs: 1e15 };

/**
 * Zero leaks, on each store: with random streams (rules from the filter arbitraries, and
 * Default as what no rule takes), a random set of them readable and a random query, every
 * plan kind and the export stream return exactly what the JavaScript evaluator returns
 * over the events the caller may read: read by the scope's filter, or (DuckDB) by the
 * stream membership the store keeps once it is given the rules (ADR 0016).
 */
describe.each(STORES.filter((s) => s.run))('$name: reads see exactly their read scope', (kind) => {
  let t: StoreUnderTest;
  beforeAll(async () => {
    t = await kind.open();
  });
  afterAll(async () => {
    await t?.close();
  }, 120_000);

  const streamsArb = fc.array(condition, { minLength: 1, maxLength: 4 });
  it('on random streams, readable sets, queries and events', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        eventsArb,
        streamsArb,
        fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
        filter,
        fc.boolean(),
        async (events, rules, readable, query, keepMembership) => {
          const prefix = `a${run++}-`;
          // Streams as membership() makes them: each rule (ids 1…), and Default for the rest.
          const [first, ...rest] = rules as [FilterNode, ...FilterNode[]];
          const streams = [...rules, not(or(first, ...rest))];
          if ([...streams, query].some((f) => kind.knownDifference?.(f))) return;
          const streamRules = rulesWithKey(rules.map((filter, i) => ({ id: i + 1, filter })));
          const mine = streams.filter((_, i) => readable[i]);
          const scope: ReadScope = scopeOf(mine, mine.length === streams.length, {
            rules: streamRules.key,
            ids: rules.flatMap((_, i) => (readable[i] ? [i + 1] : [])),
            unclaimed: !!readable[rules.length],
          });
          // Half the events stored before the store is given the rules (their membership
          // is written over them, in SQL), half after (written as they are appended).
          const named = events.map((e) => ({ ...e, ev_id: prefix + e.ev_id }));
          const half = Math.floor(named.length / 2);
          const stored = await appendEvents(t.store, named.slice(0, half));
          if (keepMembership) await t.store.setStreamRules(streamRules);
          stored.push(...(await appendEvents(t.store, named.slice(half))));
          const filterOf = and(cond('ev_id', 'startswith', prefix), query);
          const visible = scope.filter ? and(scope.filter, query) : query;
          const expected = jsSelects(stored, visible);
          const ids = (es: readonly StoredEvent[]) =>
            es.map((e) => e.ev_id).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
          const base = { scope, filter: filterOf, range: EVERYWHERE };
          const search = await t.store.execute({
            ...base,
            kind: 'search',
            sort: [],
            limit: 100,
            offset: 0,
            count: true,
          });
          const why = JSON.stringify({ scope: scope.filter, query });
          expect(ids(search.events), why).toEqual(expected);
          expect(search.total, why).toBe(expected.length);
          const streamed: StoredEvent[] = [];
          for await (const e of t.store.stream({
            ...base,
            kind: 'search',
            sort: [],
            limit: 100,
            offset: 0,
            count: false,
          }))
            streamed.push(e);
          expect(ids(streamed), why).toEqual(expected);
          // Aggregations count the same events.
          const seen = stored.filter(compilePredicate(visible)) as EventLike[];
          const topn = await t.store.execute({ ...base, kind: 'topn', field: 'host', n: 100 });
          expect(topn.total, why).toBe(seen.filter((e) => e.host !== null && e.host !== undefined).length);
          const summary = await t.store.execute({
            ...base,
            kind: 'summary',
            groupBy: [],
            metrics: [{ op: 'count' }],
            n: 10,
          });
          expect(Number(summary.totals.count ?? summary.details[0]?.metrics.count ?? 0), why).toBe(
            seen.length,
          );
          const timeline = await t.store.execute({
            ...base,
            kind: 'timeline',
            intervalMs: 86_400_000 * 365,
            series: 5,
          });
          expect(
            timeline.buckets.reduce((n, b) => n + b.count, 0),
            why,
          ).toBe(seen.length);
        },
      ),
      { numRuns: 120 },
    );
  }, 180_000);
});
