import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClickHouseEventStore } from '../../src/event-store/clickhouse/clickhouse-event-store.js';
import { SYSTEM_SCOPE } from '../../src/event-store/read-scope.js';
import {
  clickHouseHttp,
  clickHouseTest,
  clickHouseTestDatabase,
  dropClickHouseDatabase,
} from '../helpers/clickhouse.js';

/**
 * Stopping a running ClickHouse statement: the store's promise rejects at once as an
 * AbortError and the server stops working on it (`KILL QUERY` by the statement's id).
 * The rows are made by the server itself (INSERT … SELECT from `system.numbers`), enough
 * for a TopN of a unique field to run for seconds.
 */
describe.skipIf(!clickHouseTest.run)('stopping a ClickHouse statement while it runs', () => {
  let store: ClickHouseEventStore;
  let database: string;
  let url: string;
  const ROWS = 6_000_000;

  beforeAll(async () => {
    const target = clickHouseTestDatabase();
    database = target.database;
    url = target.url;
    store = await ClickHouseEventStore.open({ url: target.url });
    await clickHouseHttp(
      `INSERT INTO ${database}.events_local (ev_id, ts, received_at, stored_at, message) SELECT toString(number), 1714557600000 + number, 1714557600000 + number, 1714557600000, concat('m ', toString(number)) FROM system.numbers LIMIT ${ROWS}`,
    );
  }, 120_000);

  afterAll(async () => {
    await store?.close();
    if (database) await dropClickHouseDatabase(database);
  });

  /** A TopN of a unique field over every row: seconds of work for the server. */
  const plan = {
    kind: 'topn' as const,
    field: 'ev_id',
    n: 10,
    filter: { kind: 'true' as const },
    range: { fromMs: -1e15, toMs: 1e15 },
    scope: SYSTEM_SCOPE,
  };

  /** The store's statements on the server that run and were not told to stop. */
  const running = async () =>
    (
      (await clickHouseHttp(
        `SELECT count() AS n FROM system.processes WHERE query LIKE '%${database}%' AND query NOT LIKE '%system.processes%' AND NOT is_cancelled FORMAT JSONEachRow`,
      )) as Array<{ n: string }>
    )[0]?.n;

  it('reports progress, rejects as AbortError at once and kills the query on the server', async () => {
    const abort = new AbortController();
    const progress: number[] = [];
    const result = store.execute(plan, { signal: abort.signal, onProgress: (f) => progress.push(f) });
    // The server's process list tells how far it got (polled every 200 ms).
    const until = Date.now() + 3_000;
    while (!progress.some((f) => f > 0) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(progress.some((f) => f > 0)).toBe(true);
    expect(progress.every((f) => f >= 0 && f <= 1)).toBe(true);
    // Still running on the server: the statement takes seconds.
    expect(await running()).not.toBe('0');
    const stopped = performance.now();
    abort.abort();
    await expect(result).rejects.toMatchObject({ name: 'AbortError' });
    expect(performance.now() - stopped).toBeLessThan(1_000);
    // The server is told to stop it (KILL QUERY … ASYNC): cancelled or gone within a
    // second or two. Closing the request alone leaves it running for seconds on 18.16.
    const deadline = Date.now() + 2_000;
    while ((await running()) !== '0' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await running()).toBe('0');
  }, 60_000);

  it("stops what another node's store left running under a tag (a take-over), and only that", async () => {
    const result = store.execute(plan, { tag: '01JOBOFADEADNODE' });
    const other = store.execute(plan, { tag: '01JOBOFADEADNODEX' });
    const deadline = Date.now() + 3_000;
    while ((await running()) !== '2' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await running()).toBe('2');
    // Another node (a store of its own) takes the job over: the tag's statement ends.
    const taker = await ClickHouseEventStore.open({ url });
    try {
      await taker.abandon('01JOBOFADEADNODE:');
    } finally {
      await taker.close();
    }
    await expect(result).rejects.toBeTruthy();
    // The other job's statement (its tag only starts alike) runs on to its answer.
    await expect(other).resolves.toMatchObject({ items: expect.any(Array) });
  }, 60_000);
});
