import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { StoredEvent } from '../../src/core/event.js';
import { AppError, storageFull } from '../../src/errors/errors.js';
import { DuckDbEventStore } from '../../src/event-store/duckdb/duckdb-event-store.js';
import type { QueryPlan, SearchPlan } from '../../src/event-store/query-plan.js';
import { SYSTEM_SCOPE } from '../../src/event-store/read-scope.js';
import { fromWire, toWire } from '../../src/event-store/worker/protocol.js';
import { WorkerEventStore } from '../../src/event-store/worker/worker-event-store.js';
import { TRUE } from '../../src/filter/ast.js';
import { parseQuery } from '../../src/syntax/parse-query.js';
import { event, T0 } from '../helpers/seed.js';

/**
 * The event store in its worker thread answers exactly as the DuckDB store in this thread
 * does, across the message boundary: results, streams, errors, the histogram.
 */
const opts = { dataDir: ':memory:', memoryLimit: '256MB', checkpointThreshold: '16MB' };
/** Each store stamps its own `stored_at`; everything else must be equal. */
const unstamped = (v: unknown): unknown =>
  JSON.parse(JSON.stringify(v, (key, value) => (key === 'stored_at' ? undefined : value)));
const range = { fromMs: T0, toMs: T0 + 100_000_000 };
/** Every event of `range`, oldest first, up to `limit`. */
const oldestFirst = (limit: number): SearchPlan => ({
  kind: 'search',
  scope: SYSTEM_SCOPE,
  filter: TRUE,
  range,
  sort: [{ field: 'ts', desc: false }],
  limit,
  offset: 0,
  count: false,
});
const events = Array.from({ length: 2500 }, (_, i) =>
  event({
    ts: T0 + i * 10_000,
    bytes: i,
    host: `web-${i % 7}`,
    message: i % 100 === 0 ? `needle${i} found` : `request ${i} served`,
    fields: { 'http.path': `/p/${i % 13}` },
  }),
);

describe('the event store in a worker thread', () => {
  let worker: WorkerEventStore;
  let inline: DuckDbEventStore;
  beforeAll(async () => {
    [worker, inline] = await Promise.all([
      WorkerEventStore.open({ kind: 'duckdb', options: { ...opts, streamWindowEvents: 300 } }),
      DuckDbEventStore.open({ ...opts, streamWindowEvents: 300 }),
    ]);
    await Promise.all([worker.append(events), inline.append(events)]);
  });
  afterAll(async () => {
    await worker.close();
    await inline.close();
  });

  const filter = parseQuery('needle OR host:web-3');
  const plans: QueryPlan[] = [
    {
      kind: 'search',
      scope: SYSTEM_SCOPE,
      filter,
      range,
      sort: [{ field: 'ts', desc: true }],
      limit: 50,
      offset: 5,
      count: true,
    },
    { kind: 'topn', scope: SYSTEM_SCOPE, filter: TRUE, range, field: 'http.path', n: 5 },
    { kind: 'lastn', scope: SYSTEM_SCOPE, filter, range, field: 'host', n: 3 },
    {
      kind: 'summary',
      scope: SYSTEM_SCOPE,
      filter: TRUE,
      range,
      groupBy: ['host'],
      metrics: [{ op: 'count' }, { op: 'avg', field: 'bytes' }, { op: 'p90', field: 'bytes' }],
      n: 10,
    },
    {
      kind: 'timeline',
      scope: SYSTEM_SCOPE,
      filter,
      range,
      intervalMs: 3_600_000,
      splitBy: 'host',
      series: 3,
    },
  ];

  it.each(plans.map((p) => [p.kind, p] as const))(
    'answers %s as the store in this thread does',
    async (_, plan) => {
      const [a, b] = await Promise.all([worker.execute(plan), inline.execute(plan)]);
      expect(unstamped(a)).toEqual(unstamped(b));
    },
  );

  it('streams more events than one message holds, in order, and stops early without leaking', async () => {
    const plan = oldestFirst(10_000);
    const all: number[] = [];
    for await (const e of worker.stream(plan)) all.push(e.bytes as number);
    expect(all).toEqual(events.map((e) => e.bytes));
    const firstFew: number[] = [];
    for await (const e of worker.stream(plan)) {
      firstFew.push(e.bytes as number);
      if (firstFew.length === 3) break;
    }
    expect(firstFew).toEqual([0, 1, 2]);
    const id = events[42]?.ev_id as string;
    expect(unstamped(await worker.getById(id, SYSTEM_SCOPE))).toEqual(
      unstamped(await inline.getById(id, SYSTEM_SCOPE)),
    );
  });

  it('streams wide events in messages of a bounded number of values', async () => {
    const store = await WorkerEventStore.open({ kind: 'duckdb', options: opts });
    try {
      const wide = Array.from({ length: 120 }, (_, i) =>
        event({
          ts: T0 + i * 1000,
          bytes: i,
          fields: Object.fromEntries(Array.from({ length: 999 }, (_, f) => [`f${f}`, `v${i}-${f}`])),
        }),
      );
      await store.append(wide);
      const plan = oldestFirst(1000);
      const asked = vi.spyOn(store as unknown as { stoppable: (...a: unknown[]) => unknown }, 'stoppable');
      const got: StoredEvent[] = [];
      for await (const e of store.stream(plan)) got.push(e);
      expect(got.map((e) => e.bytes)).toEqual(wide.map((e) => e.bytes));
      expect(got[7]?.fields).toEqual(wide[7]?.fields);
      // 120 events of about 1,000 values: at most 40 a message (40,000 values), so 3 or more
      // pages and the stream's opening, where one message of 1,000 events would hold them all.
      expect(asked.mock.calls.length).toBeGreaterThanOrEqual(4);
    } finally {
      await store.close();
    }
  });

  it('keeps the per-hour histogram in step with appends and deletes', async () => {
    expect(worker.estimateInRange(range.fromMs, range.toMs)).toBe(2500);
    expect(worker.estimateInRange(T0, T0 + 3_600_000)).toBe(inline.estimateInRange(T0, T0 + 3_600_000));
    const store = await WorkerEventStore.open({ kind: 'duckdb', options: opts });
    try {
      await store.append(events);
      expect(await store.deleteOlderThan(T0 + 1000 * 10_000)).toBe(1000);
      expect(store.estimateInRange(range.fromMs, range.toMs)).toBe(1500);
      expect((await store.stats()).events).toBe(1500);
    } finally {
      await store.close();
    }
  });

  it('stops a statement whose signal is aborted', async () => {
    const abort = new AbortController();
    abort.abort();
    await expect(worker.execute(plans[0] as QueryPlan, { signal: abort.signal })).rejects.toMatchObject({
      name: 'AbortError',
    });
  });

  it('hands over engine errors with their text and application errors as they were', async () => {
    await expect(worker.runSql('SELECT * FROM no_such_table')).rejects.toThrow(/no_such_table/);
    const back = fromWire(toWire(storageFull()));
    expect(back).toBeInstanceOf(AppError);
    expect(back).toMatchObject({ status: 507, code: 'storage_full', message: storageFull().message });
    const enospc = Object.assign(new Error('write failed'), { code: 'ENOSPC' });
    expect(fromWire(toWire(enospc))).toMatchObject({ code: 'ENOSPC', message: 'write failed' });
  });

  it('keeps the event loop free while a large batch is written', async () => {
    const store = await WorkerEventStore.open({ kind: 'duckdb', options: opts });
    const big = Array.from({ length: 4000 }, (_, i) => event({ ts: T0 + i, message: `m${i}` }));
    const delay = monitorEventLoopDelay({ resolution: 5 });
    try {
      delay.enable();
      const started = performance.now();
      for (let i = 0; i < 10; i++) await store.append(big);
      const took = performance.now() - started;
      delay.disable();
      // Writing 40,000 events takes hundreds of milliseconds; the loop here is blocked only
      // while a batch is copied into the message (a few milliseconds each).
      expect(took).toBeGreaterThan(100);
      expect(delay.max / 1e6).toBeLessThan(took / 4);
      expect((await store.stats()).events).toBe(40_000);
    } finally {
      await store.close();
    }
  });

  it('commits a batch of wide events sent in several parts as one batch, every field kept', async () => {
    const store = await WorkerEventStore.open({ kind: 'duckdb', options: opts });
    try {
      const fields = Object.fromEntries(Array.from({ length: 500 }, (_, f) => [`f${f}`, `v${f}`]));
      const wide = Array.from({ length: 300 }, (_, i) => event({ ts: T0 + i, message: `w${i}`, fields }));
      await store.append(wide);
      const rows = await store.runSql(
        'SELECT count(*) AS n, sum(cardinality(fields)) AS f, count(DISTINCT stored_at) AS s FROM events',
      );
      expect(rows[0]).toEqual({ n: 300n, f: 150_000n, s: 1n });
    } finally {
      await store.close();
    }
  });

  it('fails to open with the store error, and a closed store refuses work with 503', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'logscope-worker-'));
    const file = path.join(dir, 'not-a-dir');
    writeFileSync(file, 'x');
    try {
      await expect(
        WorkerEventStore.open({ kind: 'duckdb', options: { ...opts, dataDir: file } }),
      ).rejects.toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const store = await WorkerEventStore.open({ kind: 'duckdb', options: opts });
    await store.close();
    await expect(store.ping()).rejects.toMatchObject({ status: 503 });
  });

  it('closes while a query runs: the query is stopped and waited for before the thread ends', async () => {
    const store = await WorkerEventStore.open({ kind: 'duckdb', options: opts });
    const slow = store.runSql('SELECT count(*) AS n FROM range(100000000000)');
    const settled = slow.then(
      () => 'done',
      () => 'stopped',
    );
    await new Promise((r) => setTimeout(r, 300));
    const t0 = performance.now();
    await store.close();
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(await settled).toBe('stopped');
  });
});

describe('events crossing into the worker thread', () => {
  it('stores awkward text (quotes, control characters, lone surrogates, astral characters) as the store in this thread does', async () => {
    const odd = event({
      ts: T0 + 1,
      message: 'say "hi"\\ \u0000\u0007\n\t lone \ud800 end 😀 \u2028',
      user: '\udfff',
      fields: { 'we"ird\\key': 'x\ud83d', empty: '', '😀': '\u0001' },
      shape: null,
    });
    const [worker, inline] = await Promise.all([
      WorkerEventStore.open({ kind: 'duckdb', options: opts }),
      DuckDbEventStore.open(opts),
    ]);
    await Promise.all([worker.append([odd]), inline.append([odd])]);
    const [a, b] = await Promise.all([
      worker.getById(odd.ev_id, SYSTEM_SCOPE),
      inline.getById(odd.ev_id, SYSTEM_SCOPE),
    ]);
    expect(a?.message).toBe(b?.message);
    expect(a?.user).toBe(b?.user);
    expect(a?.fields).toEqual(b?.fields);
    expect(unstamped(a)).toEqual(unstamped(b));
    await Promise.all([worker.close(), inline.close()]);
  });
});
