import v8 from 'node:v8';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';
import { event, T0 } from '../../helpers/seed.js';
import { Client, is } from '../../helpers/ws-client.js';

// Held Search results were counted at about half their heap when their text was not
// Latin-1, and results of watched queries, which are never dropped, grew past
// queryResultsMemoryMb without limit.

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const MiB = 1024 * 1024;
const BUDGET_MB = 16;
const EVENTS = 2000;
const RANGE = { ts_from: T0 / 1000, ts_to: T0 / 1000 + 3600 };

describe(`query results memory on ${BACKEND}`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      LOGSCOPE_QUERY_RESULTS_MEMORY_MB: String(BUDGET_MB),
      LOGSCOPE_QUERY_LIVE_PER_USER: '50',
      // Each query's results must be held when it answers: a loaded machine took past the 1 s default.
      LOGSCOPE_QUERY_SYNC_MS: '30000',
    });
    // About 2.5 KB of heap an event, most of it a message V8 keeps as UTF-16.
    await t.rt.events.append(
      Array.from({ length: EVENTS }, (_, i) =>
        event({ ts: T0 + i * 1000, host: `h${i % 5}`, message: `${i} ${'жёлтый '.repeat(150)}` }),
      ),
    );
  });
  afterAll(() => t.close());

  /** A Search holding every event (its answer shows only `host`, so the answer is small). */
  const search = async (i: number) => {
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/query',
      payload: {
        type: 'Search',
        params: { time_range: RANGE, query: `NOT host:absent-${i}`, page_size: EVENTS, fields: ['host'] },
      },
    });
    return { status: res.statusCode, body: res.json() };
  };
  /**
   * Heap in use once garbage is collected. The event-store worker's last message stays
   * referenced until the next one arrives: a ping replaces it first.
   */
  const settledHeap = async () => {
    await t.rt.events.ping();
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };
  const remove = (id: string) => t.as(t.adminToken, { method: 'GET', url: `/api/query/${id}/remove` });

  // On the embedded store, whose rows arrive from its worker as plain objects. Rows decoded
  // from ClickHouse's JSON hold their text differently (measured 0.67 of the estimate's
  // heap there): left for the performance issue, which measures results memory on both.
  it.skipIf(EVENT_STORE === 'clickhouse')(
    'counts held Search results at their real size in the heap',
    async () => {
      const runner = t.rt.services.runner;
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) {
        const q = await search(i);
        expect(q.status).toBe(200);
        expect(q.body.results.total).toBe(EVENTS);
        ids.push(q.body.query_id);
      }
      expect(runner.memory().evictions).toBe(0);
      const heldHeap = await settledHeap();
      const heldBytes = runner.memory().heldBytes;
      for (const id of ids) expect((await remove(id)).statusCode).toBe(200);
      const real = heldHeap - (await settledHeap());
      const accounted = heldBytes - runner.memory().heldBytes;
      // Measured: real ≈ 10 MB; counted before the fix ≈ 6 MB (one byte a character).
      expect(real).toBeGreaterThan(8 * MiB);
      expect(accounted / real).toBeGreaterThan(0.85);
      expect(accounted / real).toBeLessThan(1.5);
    },
  );

  it('refuses new live queries (503) while watched results fill queryResultsMemoryMb', async () => {
    const runner = t.rt.services.runner;
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const q = await search(100 + i);
      expect(q.status).toBe(200);
      ids.push(q.body.query_id);
    }
    // Finished results nobody watches are dropped to stay within the budget.
    expect(runner.memory().heldBytes).toBeLessThanOrEqual(BUDGET_MB * MiB);
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const c = await Client.open(`${address.replace('http', 'ws')}/ws/live-updates?token=${t.adminToken}`);
    let refused: [string, Record<string, unknown>] | undefined;
    let watched = 0;
    for (const id of ids) {
      c.send(['subscribe', { query_id: id }]);
      const answer = await c.next((m) => m[0] === 'subscribed' || m[0] === 'error');
      if (answer[0] === 'error') {
        refused = answer;
        break;
      }
      watched++;
    }
    // Watched results are never dropped: the ones admitted filled the budget, no more came.
    expect(refused?.[1]).toMatchObject({ command: 'subscribe' });
    expect(String(refused?.[1].detail)).toMatch(/fill the memory kept for query results/);
    expect(watched).toBeGreaterThanOrEqual(2);
    const held = runner.memory().heldBytes;
    expect(held).toBeGreaterThanOrEqual(BUDGET_MB * MiB);
    expect(held).toBeLessThanOrEqual(BUDGET_MB * MiB + held / watched);
    const refusedPost = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/query',
      payload: { type: 'TopN', params: { time_range: RANGE, field: 'host' } },
    });
    expect(refusedPost.statusCode).toBe(503);
    expect(refusedPost.json()).toMatchObject({ code: 'out_of_memory' });
    expect(refusedPost.headers['retry-after']).toBe('5');
    // Watching less makes room again.
    c.send(['unsubscribe_all', {}]);
    await c.next(is('unsubscribed'));
    const admitted = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/query',
      payload: { type: 'TopN', params: { time_range: RANGE, field: 'host' } },
    });
    expect(admitted.statusCode).toBe(200);
    c.ws.close();
  });
});
