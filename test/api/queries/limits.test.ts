import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DuckDbEventStore } from '../../../src/event-store/duckdb/duckdb-event-store.js';
import type { QueryPlan } from '../../../src/event-store/query-plan.js';
import { SYSTEM_SCOPE } from '../../../src/event-store/read-scope.js';
import { fromWire, toWire } from '../../../src/event-store/worker/protocol.js';
import { TRUE } from '../../../src/filter/ast.js';
import { BACKEND, createTestApp, TEST_BUS_URL, type TestApp } from '../../helpers/app.js';
import { reportFileKept } from '../../helpers/report-files.js';
import { event, HOUR, seedWeb, T0 } from '../../helpers/seed.js';

/** Issue 12, bounded resources: query result memory, live queries per user, reports. */
describe(`bounded queries and reports on ${BACKEND}`, () => {
  let t: TestApp;
  let bob: { id: number; token: string };
  beforeAll(async () => {
    t = await createTestApp({
      LOGSCOPE_QUERY_RESULTS_MEMORY_MB: '1',
      LOGSCOPE_QUERY_LIVE_PER_USER: '2',
      LOGSCOPE_QUERY_SLICE_EVENTS: '1000',
      LOGSCOPE_REPORTS_PER_USER: '1',
      LOGSCOPE_REPORTS_CONCURRENT: '2',
    });
    await seedWeb(t);
    // A second hour of 4,000 events: ranges over it are sliced (querySliceEvents 1000).
    await t.rt.events.append(
      Array.from({ length: 4000 }, (_, i) =>
        event({ ts: T0 + 3_600_000 + i * 900, host: `h${i % 7}`, message: `second hour ${i}`, bytes: i }),
      ),
    );
    bob = await t.user('bob');
  });
  afterAll(() => t.close());
  afterEach(() => vi.restoreAllMocks());

  const post = (payload: object, token = t.adminToken) =>
    t.as(token, { method: 'POST', url: '/api/query', payload });
  const get = (id: string, qs = '', token = t.adminToken) =>
    t.as(token, { method: 'GET', url: `/api/query/${id}${qs}` });
  const removeAll = async (ids: string[], token = t.adminToken) => {
    for (const id of ids) await t.as(token, { method: 'GET', url: `/api/query/${id}/remove` });
  };
  const SECOND_HOUR = { ts_from: HOUR.ts_to, ts_to: HOUR.ts_to + 3600 };

  it('keeps the results of all queries within the memory budget, recomputes evicted ones on read, releases on remove', async () => {
    const runner = t.rt.services.runner;
    const before = runner.memory();
    expect(before.budgetBytes).toBe(1048576);
    const ids: string[] = [];
    const firstPages: unknown[] = [];
    for (let i = 0; i < 8; i++) {
      // ~600 events each (≈ 350 KiB estimated): eight of them are far over 1 MiB.
      const res = await post({
        type: 'Search',
        params: { time_range: HOUR, page_size: 1000, sort: [i % 2 ? 'ts' : '-ts'], query: `NOT host:x${i}` },
      });
      expect(res.statusCode, res.body).toBe(200);
      ids.push(res.json().query_id);
      firstPages.push(res.json().results);
      expect(runner.memory().heldBytes).toBeLessThanOrEqual(1048576 + 400_000);
    }
    const after = runner.memory();
    expect(after.evictions).toBeGreaterThan(before.evictions);
    expect(after.heldBytes).toBeLessThanOrEqual(1048576);
    // The oldest query's results were dropped; a read computes them again, unchanged.
    expect(runner.peek(ids[0] as string)?.evicted).toBe(true);
    const again = await get(ids[0] as string);
    expect(again.statusCode).toBe(200);
    expect(again.json().status).toBe('SUCCESS');
    expect(again.json().results).toEqual(firstPages[0]);
    await removeAll(ids);
    expect(runner.memory().heldBytes).toBe(before.heldBytes);
  });

  it('fetches a deep Search page with OFFSET, not every earlier row, also across slices', async () => {
    const execute = vi.spyOn(t.rt.events, 'execute');
    // Unsliced (600 events in the range).
    const deep = await post({
      type: 'Search',
      params: { time_range: HOUR, sort: ['ts'], page: 3, page_size: 50 },
    });
    expect(deep.statusCode, deep.body).toBe(200);
    const plans = execute.mock.calls.map((c) => c[0] as QueryPlan).filter((p) => p.kind === 'search');
    expect(plans.every((p) => p.kind === 'search' && p.limit <= 50)).toBe(true);
    expect(plans.some((p) => p.kind === 'search' && p.offset === 100)).toBe(true);
    const all = await post({ type: 'Search', params: { time_range: HOUR, sort: ['ts'], page_size: 150 } });
    expect(deep.json().results).toMatchObject({ total: 600, page: 3, page_size: 50, offset: 100 });
    expect(deep.json().results.events).toEqual(all.json().results.events.slice(100, 150));
    // Re-paging the stored page and beyond still works.
    const next = await get(deep.json().query_id, '?page=4');
    expect(next.json().results.events).toEqual(
      (await get(all.json().query_id, '?page=4&page_size=50')).json().results.events,
    );
    expect((await get(deep.json().query_id, '?page=3')).json().results.events).toEqual(
      deep.json().results.events,
    );

    // Sliced: 4,000 events in 4 slices of ~1,000, newest first; page 3 × 700 spans two slices.
    execute.mockClear();
    for (const sort of ['-ts', 'ts']) {
      const sliced = await post({
        type: 'Search',
        params: { time_range: SECOND_HOUR, sort: [sort], page: 3, page_size: 700 },
      });
      expect(sliced.statusCode, sliced.body).toBe(200);
      const searchPlans = execute.mock.calls.map((c) => c[0] as QueryPlan).filter((p) => p.kind === 'search');
      expect(searchPlans.length).toBeGreaterThan(1);
      expect(searchPlans.every((p) => p.kind === 'search' && p.limit <= 700)).toBe(true);
      execute.mockClear();
      const whole = await post({
        type: 'Search',
        params: { time_range: SECOND_HOUR, sort: [sort], page_size: 2100 },
      });
      expect(sliced.json().results.total).toBe(4000);
      expect(sliced.json().results.events.map((e: { ev_id: string }) => e.ev_id)).toEqual(
        whole
          .json()
          .results.events.slice(1400, 2100)
          .map((e: { ev_id: string }) => e.ev_id),
      );
      await removeAll([sliced.json().query_id, whole.json().query_id]);
      execute.mockClear();
    }
    await removeAll([deep.json().query_id, all.json().query_id]);
  });

  it('refuses a user more live queries than queryLivePerUser with 429 and Retry-After', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const original = t.rt.events.execute.bind(t.rt.events);
    vi.spyOn(t.rt.events, 'execute').mockImplementation(async (plan, opts) => {
      await gate;
      return original(plan, opts);
    });
    const q = { type: 'TopN', params: { time_range: HOUR, field: 'host' } };
    const a = post(q);
    const b = post(q);
    // Both are running (the engine waits); a third is one too many.
    await vi.waitFor(() => expect(t.rt.services.runner.stats().IN_PROGRESS ?? 0).toBe(2));
    const third = await post(q);
    expect(third.statusCode, third.body).toBe(429);
    expect(third.headers['retry-after']).toBe('2');
    expect(third.json()).toMatchObject({ code: 'throttled' });
    expect(third.json().detail).toMatch(/at most 2/);
    // Another user is not affected.
    const bobs = post(q, bob.token);
    release();
    const [ra, rb, rbob] = await Promise.all([a, b, bobs]);
    for (const r of [ra, rb, rbob]) expect([200, 202]).toContain(r.statusCode);
    await vi.waitFor(() => expect(t.rt.services.runner.stats().IN_PROGRESS ?? 0).toBe(0));
    // Finished queries are not live: a new one is admitted again.
    const fourth = await post(q);
    expect(fourth.statusCode).toBe(200);
    await removeAll([ra.json().query_id, rb.json().query_id, fourth.json().query_id]);
    await removeAll([rbob.json().query_id], bob.token);
  });

  it('maps an engine out-of-memory failure to a clear error, never DuckDB text', async () => {
    const oom = () =>
      Promise.reject(
        new Error('Out of Memory Error: failed to allocate data of size 16.0 MiB (476.8 MiB/476.8 MiB used)'),
      );
    // The engine fails below the store's reads' withConnection (a DuckDB store in this
    // thread, so the failure can be injected there); the app's store, in its worker thread,
    // hands the runner what the worker sends: that error, across the thread boundary.
    const engine = await DuckDbEventStore.open({
      dataDir: ':memory:',
      memoryLimit: '64MB',
      checkpointThreshold: '16MB',
    });
    const reads = (engine as unknown as { reads: { rows: () => Promise<never> } }).reads;
    vi.spyOn(reads, 'rows').mockImplementation(oom);
    const plan: QueryPlan = {
      kind: 'topn',
      scope: SYSTEM_SCOPE,
      field: 'host',
      n: 10,
      filter: TRUE,
      range: { fromMs: 0, toMs: 1 },
    };
    const thrown = await engine.execute(plan).catch((err: unknown) => err);
    await engine.close();
    vi.spyOn(t.rt.events, 'execute').mockImplementation(() => Promise.reject(fromWire(toWire(thrown))));
    const res = await post({ type: 'TopN', params: { time_range: HOUR, field: 'host' } });
    expect(res.json().status).toBe('ERROR');
    expect(res.json().error).toMatch(/not enough memory/);
    expect(res.json().error).not.toMatch(/allocate|MiB used/);
    const rep = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/reports',
      payload: {
        ftype: 'csv',
        source: { kind: 'query', query: { type: 'TopN', params: { time_range: HOUR, field: 'host' } } },
      },
    });
    await t.rt.services.reports.idle();
    const r = (await t.as(t.adminToken, { method: 'GET', url: `/api/reports/${rep.json().id}` })).json();
    expect(r.status).toBe('ERROR');
    expect(r.error).toMatch(/not enough memory/);
    expect(r.error).not.toMatch(/allocate/);
    await removeAll([res.json().query_id]);
  });

  const report = (token: string, params: object = { time_range: HOUR }, ftype = 'csv') =>
    t.as(token, {
      method: 'POST',
      url: '/api/reports',
      payload: { ftype, source: { kind: 'query', query: { type: 'Search', params } } },
    });
  const reportOf = async (id: number) =>
    (await t.as(t.adminToken, { method: 'GET', url: `/api/reports/${id}` })).json();

  it('generates at most reportsPerUser reports of a user and reportsConcurrent in all; the rest wait PENDING', async () => {
    const carol = await t.user('carol');
    let running = 0;
    let most = 0;
    const perUser = new Map<number, number>();
    let mostOfOne = 0;
    const svc = t.rt.services.reports as unknown as {
      generate: (who: { userId: number }, row: unknown) => Promise<void>;
    };
    const original = svc.generate.bind(svc);
    vi.spyOn(svc, 'generate').mockImplementation(async (who, row) => {
      running++;
      most = Math.max(most, running);
      perUser.set(who.userId, (perUser.get(who.userId) ?? 0) + 1);
      mostOfOne = Math.max(mostOfOne, perUser.get(who.userId) ?? 0);
      await new Promise((r) => setTimeout(r, 150));
      try {
        return await original(who, row);
      } finally {
        running--;
        perUser.set(who.userId, (perUser.get(who.userId) ?? 1) - 1);
      }
    });
    const made = [];
    for (const token of [t.adminToken, t.adminToken, t.adminToken, bob.token, bob.token, carol.token])
      made.push((await report(token)).json());
    // Admin's second and third wait while the first runs.
    expect((await reportOf(made[1].id)).status).toBe('PENDING');
    await t.rt.services.reports.idle();
    for (const m of made) expect((await reportOf(m.id)).status).toBe('READY');
    expect(mostOfOne).toBe(1);
    expect(most).toBe(2);
  });

  it('ends a report over reportMaxBytes ERROR with a clear message and no file; notes a row cap', async () => {
    const reports = t.rt.services.reports as unknown as { opts: { maxBytes: number; maxRows: number } };
    const { maxBytes, maxRows } = reports.opts;
    reports.opts.maxBytes = 4096;
    try {
      const big = (await report(t.adminToken)).json();
      await t.rt.services.reports.idle();
      const r = await reportOf(big.id);
      expect(r.status).toBe('ERROR');
      expect(r.error).toMatch(/larger than 4 KiB \(reportMaxBytes\)/);
      // Nothing of it is kept: no file in the data dir, no pieces in the shared store (cluster).
      expect(await reportFileKept(t, big.id)).toBe(false);
    } finally {
      reports.opts.maxBytes = maxBytes;
    }
    reports.opts.maxRows = 10;
    try {
      const cut = (await report(t.adminToken, { time_range: HOUR }, 'json')).json();
      await t.rt.services.reports.idle();
      expect((await reportOf(cut.id)).status).toBe('READY');
      const file = await t.as(t.adminToken, { method: 'GET', url: `/api/reports/${cut.id}/file` });
      const doc = file.json();
      expect(doc.sections[0].rows).toHaveLength(10);
      expect(doc.sections[0].notes.join(' ')).toMatch(/first 10 of 600 matching events/);
    } finally {
      reports.opts.maxRows = maxRows;
    }
  });

  // A cluster keeps files in the shared store, and another node finishes the report (test/process/cluster).
  it.skipIf(TEST_BUS_URL)(
    'writes a report under a temporary name; a restart deletes what a crash left half-written',
    async () => {
      // A report stuck mid-way: the stream yields a few rows, then waits forever.
      let hold!: () => void;
      const held = new Promise<void>((r) => (hold = r));
      const original = t.rt.events.stream.bind(t.rt.events);
      vi.spyOn(t.rt.events, 'stream').mockImplementation(async function* (plan, opts) {
        let n = 0;
        for await (const e of original(plan, opts)) {
          yield e;
          if (++n === 20) await held;
        }
      });
      const made = (await report(t.adminToken)).json();
      const dir = path.join(t.dataDir, 'reports');
      await vi.waitFor(() => expect(readdirSync(dir)).toContain(`${made.id}.csv.part`));
      expect(existsSync(path.join(dir, `${made.id}.csv`))).toBe(false);
      // What a crashed process leaves: the partial file and the PENDING row (and an older
      // version's partial file under the final name). The next start cleans up.
      writeFileSync(path.join(dir, '999999.csv.part'), 'half');
      await t.rt.services.reports.recoverFromEarlierRun();
      expect(readdirSync(dir).filter((f) => f.endsWith('.part'))).toEqual([]);
      expect(existsSync(path.join(dir, `${made.id}.csv`))).toBe(false);
      const r = await reportOf(made.id);
      expect(r.status).toBe('ERROR');
      expect(r.error).toMatch(/server stopped/);
      hold();
      await t.rt.services.reports.idle();
      // Let the interrupted generation finish (it was marked ERROR already; its file is deleted with the report).
      await t.as(t.adminToken, { method: 'DELETE', url: `/api/reports/${made.id}` });
      expect(readdirSync(dir).filter((f) => f.startsWith(`${made.id}.`))).toEqual([]);
    },
  );
});
