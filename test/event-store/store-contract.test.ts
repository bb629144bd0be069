import fc from 'fast-check';
import { ulid } from 'ulidx';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NormalisedEvent, StoredEvent } from '../../src/core/event.js';
import type { EventStore } from '../../src/event-store/event-store.js';
import type {
  LastNPlan,
  QueryPlan,
  SearchPlan,
  SummaryPlan,
  TimelinePlan,
  TopNPlan,
} from '../../src/event-store/query-plan.js';
import { SYSTEM_SCOPE } from '../../src/event-store/read-scope.js';
import { cond, type FilterNode } from '../../src/filter/ast.js';
import { compilePredicate } from '../../src/filter/evaluate.js';
import { eventsArb, filter } from '../helpers/filter-arbitraries.js';
import { event } from './filter-store.js';
import { STORES, type StoreUnderTest } from './stores.js';

/**
 * The event-store contract, the same tests on every store (DuckDB; ClickHouse when the
 * tests have one): appends read back exactly, every plan kind, streams, retention, stats,
 * stopping. The expected answers are computed here in JavaScript from the events.
 */

const DAY = 86_400_000;
const T0 = Date.UTC(2024, 4, 1);
const ALL = { fromMs: -1e15, toMs: 1e15 };

const receivedAt = (i: number) => T0 + Math.floor(i / 20) * DAY + (i % 20) * 3_600_000 + 500;

/** 60 events over three days: hosts, severities, statuses, bytes and extra fields that repeat. */
const EVENTS: NormalisedEvent[] = Array.from({ length: 60 }, (_, i) =>
  event(ulid(receivedAt(i)), {
    ts: T0 + Math.floor(i / 20) * DAY + (i % 20) * 3_600_000 + i,
    received_at: receivedAt(i),
    host: i % 7 === 0 ? null : `h${i % 4}`,
    app: ['sshd', 'nginx', 'cron'][i % 3] as string,
    severity: (['error', 'info', 'warning', 'debug', 'critical'] as const)[i % 5] as 'error',
    message:
      i % 9 === 0
        ? null
        : `${i === 1 ? '\uFEFF' : ''}request ${i} from "client" \\ ${i % 2 ? 'Ok' : 'FAILED'} ✓`,
    status: i % 6 === 0 ? null : ([200, 404, 500][i % 3] as number),
    bytes: i % 5 === 0 ? null : i * 100,
    src_ip: i % 4 === 0 ? null : `10.0.${i % 3}.${i}`,
    fields:
      i % 8 === 0
        ? {}
        : {
            k: `v${i % 3}`,
            n: String(i % 4),
            // A field named like Object.prototype's accessor is data like any other.
            ...(i % 10 === 0 ? { odd: "it's\n\u0000", ['__proto__']: 'p' } : {}),
          },
  }),
);

const within = (e: NormalisedEvent, p: { range: { fromMs: number; toMs: number } }) =>
  e.ts >= p.range.fromMs && e.ts < p.range.toMs;

function value(e: NormalisedEvent, field: string): string | number | null {
  const v = (e as unknown as Record<string, unknown>)[field];
  if (v !== undefined) return v as string | number | null;
  return e.fields[field] ?? null;
}

function countBy(events: readonly NormalisedEvent[], field: string): Map<string | number, NormalisedEvent[]> {
  const m = new Map<string | number, NormalisedEvent[]>();
  for (const e of events) {
    const v = value(e, field);
    if (v === null) continue;
    m.set(v, [...(m.get(v) ?? []), e]);
  }
  return m;
}

const cmp = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0);

describe.each(STORES.filter((s) => s.run))('$name: the event-store contract', (kind) => {
  let t: StoreUnderTest;
  let store: EventStore;
  let storedAt: number;

  beforeAll(async () => {
    t = await kind.open();
    store = t.store;
    // Two appends at once: both acknowledged, neither lost.
    const [a, b] = await Promise.all([store.append(EVENTS.slice(0, 30)), store.append(EVENTS.slice(30))]);
    storedAt = Math.max(a.storedAt, b.storedAt);
  }, 60_000);

  afterAll(async () => {
    await t?.close();
  });

  it('reads every event back as it was appended, with its stored_at', async () => {
    for (const e of EVENTS) {
      const got = (await store.getById(e.ev_id, SYSTEM_SCOPE)) as StoredEvent;
      expect(got).not.toBeNull();
      const { stored_at, ...rest } = got;
      expect(rest).toEqual(e);
      expect(stored_at).toBeGreaterThan(0);
      expect(stored_at).toBeLessThanOrEqual(storedAt);
    }
    expect(await store.getById('01HZZZZZZZZZZZZZZZZZZZZZZZ', SYSTEM_SCOPE)).toBeNull();
    expect(await store.getById('not a ulid', SYSTEM_SCOPE)).toBeNull();
  });

  it('searches: range, filter, sort, pages and the total', async () => {
    const plan: SearchPlan = {
      kind: 'search',
      scope: SYSTEM_SCOPE,
      filter: cond('status', 'eq', 404),
      range: { fromMs: T0, toMs: T0 + 2 * DAY },
      sort: [{ field: 'ts', desc: true }],
      limit: 5,
      offset: 3,
      count: true,
    };
    const matching = EVENTS.filter((e) => within(e, plan) && e.status === 404).sort((a, b) => b.ts - a.ts);
    const r = await store.execute(plan);
    expect(r.total).toBe(matching.length);
    expect(r.events.map((e) => e.ev_id)).toEqual(matching.slice(3, 8).map((e) => e.ev_id));

    const bySeverity = await store.execute({
      ...plan,
      filter: { kind: 'true' },
      range: ALL,
      sort: [
        { field: 'severity', desc: true },
        { field: 'bytes', desc: false },
      ],
      limit: 100,
      offset: 0,
    });
    expect(bySeverity.total).toBe(EVENTS.length);
    expect(bySeverity.events[0]?.severity).toBe('critical');
    expect(bySeverity.events.at(-1)?.severity).toBe('debug');
  });

  it('counts the top values of a column and of an extra field, with the total that has them', async () => {
    for (const field of ['host', 'k', 'status']) {
      const plan: TopNPlan = {
        kind: 'topn',
        scope: SYSTEM_SCOPE,
        field,
        n: 2,
        filter: { kind: 'true' },
        range: ALL,
      };
      const groups = [...countBy(EVENTS, field)].sort((a, b) => b[1].length - a[1].length || cmp(a[0], b[0]));
      const r = await store.execute(plan);
      expect(r.total, field).toBe(groups.reduce((s, [, es]) => s + es.length, 0));
      expect(r.items, field).toEqual(groups.slice(0, 2).map(([v, es]) => ({ value: v, count: es.length })));
    }
  });

  it('lists the values seen last, with first and last seen', async () => {
    const plan: LastNPlan = {
      kind: 'lastn',
      scope: SYSTEM_SCOPE,
      field: 'app',
      n: 3,
      filter: cond('host', 'exists'),
      range: ALL,
    };
    const matching = EVENTS.filter((e) => e.host !== null);
    const r = await store.execute(plan);
    const expected = [...countBy(matching, 'app')]
      .map(([v, es]) => ({
        value: v,
        lastSeen: Math.max(...es.map((e) => e.ts)),
        firstSeen: Math.min(...es.map((e) => e.ts)),
        count: es.length,
      }))
      .sort((a, b) => b.lastSeen - a.lastSeen);
    expect(r.items).toEqual(expected);
  });

  it('summarises groups with every metric, and the totals over all groups', async () => {
    const plan: SummaryPlan = {
      kind: 'summary',
      scope: SYSTEM_SCOPE,
      groupBy: ['app'],
      metrics: [
        { op: 'count' },
        { op: 'sum', field: 'bytes' },
        { op: 'avg', field: 'bytes' },
        { op: 'min', field: 'status' },
        { op: 'max', field: 'n' },
        { op: 'count_distinct', field: 'host' },
        { op: 'p50', field: 'bytes' },
        { op: 'p90', field: 'bytes' },
      ],
      n: 2,
      filter: { kind: 'true' },
      range: ALL,
    };
    const r = await store.execute(plan);
    const bytes = (es: NormalisedEvent[]) => es.flatMap((e) => (e.bytes === null ? [] : [e.bytes]));
    const quantile = (xs: number[], q: number) => {
      const s = [...xs].sort((a, b) => a - b);
      const pos = q * (s.length - 1);
      const lo = Math.floor(pos);
      const hi = Math.ceil(pos);
      return (s[lo] as number) + (pos - lo) * ((s[hi] as number) - (s[lo] as number));
    };
    const metrics = (es: NormalisedEvent[]) => ({
      count: es.length,
      sum_bytes: bytes(es).reduce((a, b) => a + b, 0),
      avg_bytes: bytes(es).reduce((a, b) => a + b, 0) / bytes(es).length,
      min_status: Math.min(...es.flatMap((e) => (e.status === null ? [] : [e.status]))),
      max_n: Math.max(...es.flatMap((e) => (e.fields.n === undefined ? [] : [Number(e.fields.n)]))),
      count_distinct_host: new Set(es.flatMap((e) => (e.host === null ? [] : [e.host]))).size,
      p50_bytes: quantile(bytes(es), 0.5),
      p90_bytes: quantile(bytes(es), 0.9),
    });
    expect(r.totals.count).toBe(EVENTS.length);
    for (const [k, v] of Object.entries(metrics(EVENTS))) expect(r.totals[k], k).toBeCloseTo(v, 9);
    expect(r.details).toHaveLength(2);
    const groups = countBy(EVENTS, 'app');
    for (const d of r.details) {
      const es = groups.get(d.group.app as string) as NormalisedEvent[];
      for (const [k, v] of Object.entries(metrics(es)))
        expect(d.metrics[k], `${d.group.app} ${k}`).toBeCloseTo(v, 9);
    }
  });

  it('draws a timeline, split by a field into its top series and other', async () => {
    const plan: TimelinePlan = {
      kind: 'timeline',
      scope: SYSTEM_SCOPE,
      intervalMs: DAY,
      splitBy: 'host',
      series: 2,
      filter: { kind: 'true' },
      range: { fromMs: T0, toMs: T0 + 3 * DAY },
    };
    const r = await store.execute(plan);
    const top = [...countBy(EVENTS, 'host')]
      .sort((a, b) => b[1].length - a[1].length || cmp(a[0], b[0]))
      .slice(0, 2)
      .map(([v]) => String(v));
    expect(r.buckets.map((b) => b.startMs)).toEqual([T0, T0 + DAY, T0 + 2 * DAY]);
    for (const b of r.buckets) {
      const es = EVENTS.filter((e) => e.ts >= b.startMs && e.ts < b.startMs + DAY);
      expect(b.count).toBe(es.length);
      const series: Record<string, number> = {};
      for (const e of es) {
        const key = e.host !== null && top.includes(e.host) ? e.host : 'other';
        series[key] = (series[key] ?? 0) + 1;
      }
      expect(b.series).toEqual(series);
    }
  });

  it('streams every match in order', async () => {
    const plan: SearchPlan = {
      kind: 'search',
      scope: SYSTEM_SCOPE,
      filter: cond('message', 'contains', 'ok'),
      range: ALL,
      sort: [{ field: 'ts', desc: false }],
      limit: 1_000,
      offset: 0,
      count: false,
    };
    const got: string[] = [];
    for await (const e of store.stream(plan)) got.push(e.ev_id);
    const p = compilePredicate(plan.filter);
    expect(got).toEqual(EVENTS.filter((e) => p({ ...e, stored_at: 0 })).map((e) => e.ev_id));
    // A reader that stops early ends the statement.
    for await (const _ of store.stream(plan)) break;
  });

  it('refuses a plan whose signal was aborted, as an AbortError', async () => {
    const plan: QueryPlan = {
      kind: 'topn',
      scope: SYSTEM_SCOPE,
      field: 'host',
      n: 5,
      filter: { kind: 'true' },
      range: ALL,
    };
    await expect(store.execute(plan, { signal: AbortSignal.abort() })).rejects.toMatchObject({
      name: 'AbortError',
    });
  });

  it('refuses a stream whose signal was aborted before its first read, as an AbortError', async () => {
    const plan: SearchPlan = {
      kind: 'search',
      scope: SYSTEM_SCOPE,
      filter: { kind: 'true' },
      range: ALL,
      sort: [{ field: 'ts', desc: false }],
      limit: 1_000,
      offset: 0,
      count: false,
    };
    const got: string[] = [];
    const read = async () => {
      for await (const e of store.stream(plan, { signal: AbortSignal.abort() })) got.push(e.ev_id);
    };
    await expect(read()).rejects.toMatchObject({ name: 'AbortError' });
    expect(got).toEqual([]);
  });

  it('answers stats, and retention deletes the days before the cut-off', async () => {
    const before = await store.stats();
    expect(before.events).toBe(EVENTS.length);
    expect(before.oldestTs).toBe(Math.min(...EVENTS.map((e) => e.ts)));
    expect(before.newestTs).toBe(Math.max(...EVENTS.map((e) => e.ts)));
    // A cut-off on a day boundary: whole days go on every store.
    expect(await store.deleteOlderThan(T0 + DAY)).toBe(20);
    expect((await store.stats()).events).toBe(40);
    expect(await store.getById(EVENTS[0]?.ev_id as string, SYSTEM_SCOPE)).toBeNull();
    expect(await store.getById(EVENTS[20]?.ev_id as string, SYSTEM_SCOPE)).not.toBeNull();
    await store.ping();
  });
});

// ---------------------------------------------------------------------------------------

const [reference, ...others] = STORES.filter((s) => s.run);

/**
 * `r` without `stored_at` (each store gives its own), its numbers replaced by `ref`'s
 * where they agree to 12 significant digits (floating sums and interpolations may differ
 * in the last bits between engines).
 */
function comparable(r: unknown, ref: unknown): unknown {
  if (typeof r === 'number' && typeof ref === 'number')
    return r === ref || Math.abs(r - ref) <= 1e-12 * Math.max(Math.abs(r), Math.abs(ref)) ? ref : r;
  if (Array.isArray(r)) return r.map((x, i) => comparable(x, Array.isArray(ref) ? ref[i] : undefined));
  if (r && typeof r === 'object') {
    const o: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(r))
      if (k !== 'stored_at') o[k] = comparable(v, (ref as Record<string, unknown> | null)?.[k]);
    return o;
  }
  return r;
}

/**
 * Every store gives DuckDB's answers: random events, random filters and plans of every
 * kind (the acceptance harness's cross-check, in the suite).
 */
describe.each(others)('$name answers as DuckDB does', (kind) => {
  let ref: StoreUnderTest;
  let t: StoreUnderTest;

  beforeAll(async () => {
    [ref, t] = await Promise.all([reference?.open() as Promise<StoreUnderTest>, kind.open()]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([ref?.close(), t?.close()]);
  });

  const plans = (f: FilterNode, prefix: string): QueryPlan[] => {
    const scoped: FilterNode = { kind: 'and', items: [cond('ev_id', 'startswith', prefix), f] };
    const base = { filter: scoped, range: ALL };
    return [
      {
        ...base,
        kind: 'search',
        scope: SYSTEM_SCOPE,
        sort: [{ field: 'ts', desc: true }],
        limit: 50,
        offset: 0,
        count: true,
      },
      { ...base, kind: 'topn', scope: SYSTEM_SCOPE, field: 'host', n: 3 },
      { ...base, kind: 'topn', scope: SYSTEM_SCOPE, field: 'k', n: 3 },
      { ...base, kind: 'topn', scope: SYSTEM_SCOPE, field: 'bytes', n: 3 },
      { ...base, kind: 'lastn', scope: SYSTEM_SCOPE, field: 'ts', n: 2 },
      { ...base, kind: 'lastn', scope: SYSTEM_SCOPE, field: 'severity', n: 3 },
      {
        ...base,
        kind: 'summary',
        scope: SYSTEM_SCOPE,
        groupBy: ['host', 'k', 'status'],
        metrics: [
          { op: 'count' },
          { op: 'sum', field: 'bytes' },
          { op: 'avg', field: 'status' },
          { op: 'max', field: 'ts' },
          { op: 'count_distinct', field: 'user' },
          { op: 'p99', field: 'bytes' },
        ],
        n: 4,
      },
      { ...base, kind: 'timeline', scope: SYSTEM_SCOPE, intervalMs: 3_600_000, series: 5 },
      { ...base, kind: 'timeline', scope: SYSTEM_SCOPE, intervalMs: 60_000, splitBy: 'status', series: 2 },
    ];
  };

  it('on random events and random filters, for every plan kind', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        eventsArb,
        fc.array(filter, { minLength: 1, maxLength: 3 }),
        async (events, filters) => {
          const prefix = `x${run++}-`;
          const scoped = events.map((e) => ({ ...e, ev_id: prefix + e.ev_id }));
          await Promise.all([ref.store.append(scoped), t.store.append(scoped)]);
          for (const f of filters) {
            if (kind.knownDifference?.(f)) continue;
            for (const plan of plans(f, prefix)) {
              const [want, got] = await Promise.all([ref.store.execute(plan), t.store.execute(plan)]);
              expect(comparable(got, want), `${plan.kind} ${JSON.stringify(f)}`).toEqual(
                comparable(want, want),
              );
            }
          }
        },
      ),
      { numRuns: 60 },
    );
  }, 180_000);
});
