import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { StartupError } from '../../../src/errors/startup.js';
import { openEventStore } from '../../../src/event-store/open-event-store.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { clickHouseTest, clickHouseTestDatabase, dropClickHouseDatabase } from '../../helpers/clickhouse.js';
import { Relay } from '../../helpers/relay.js';

/**
 * ClickHouse going away (issue: bad input): at start a clear message; later 503
 * store_unavailable, ingest refusing rather than acknowledging, and recovery by itself.
 * The outage is a TCP relay in front of the real server that the test cuts and restores.
 */
describe.skipIf(!clickHouseTest.run)('an unreachable ClickHouse event store', () => {
  const target = /^clickhouse:\/\/(?:[^@/]*@)?([^,/:]+):(\d+)/.exec(clickHouseTest.url);
  const [upstreamHost, upstreamPort] = [target?.[1] ?? '127.0.0.1', Number(target?.[2])];
  const relay = new Relay(upstreamHost, upstreamPort);
  let t: TestApp;
  let database: string;

  beforeAll(async () => {
    await relay.open();
    const port = relay.port;
    // One server through the relay, no cluster: a database of its own.
    database = clickHouseTestDatabase().database;
    t = await createTestApp({
      LOGSCOPE_EVENT_STORE_URL: `clickhouse://default@127.0.0.1:${port}/${database}`,
      LOGSCOPE_INGEST_BATCH_MS: '5',
    });
  }, 30_000);

  afterAll(async () => {
    await t?.close();
    await relay.cut();
    await dropClickHouseDatabase(database);
  });

  const ingest = (message: string) =>
    t.as(t.adminToken, { method: 'POST', url: '/api/ingest', payload: { message } });

  it('says at start which server cannot be reached, in one line', async () => {
    // As the server opens it: in the worker thread, the error crossing back as a StartupError.
    const config = loadConfig({
      env: {
        LOGSCOPE_DATA_DIR: t.dataDir,
        LOGSCOPE_EVENT_STORE_URL: 'clickhouse://default@127.0.0.1:1/logscope',
      },
    });
    const err = await openEventStore(config).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StartupError);
    expect((err as Error).message).toMatch(
      /^Cannot start: ClickHouse at http:\/\/127\.0\.0\.1:1 is unreachable \(connection refused\); check that it runs and eventStoreUrl/,
    );
  });

  it('answers 503 store_unavailable while it is away, acknowledges nothing, and recovers by itself', async () => {
    const before = await ingest('before the outage');
    expect(before.statusCode, before.body).toBe(200);
    const health = await t.app.inject({ method: 'GET', url: '/api/health' });
    expect(health.json().dependencies.events).toEqual({ kind: 'clickhouse', status: 'ok' });

    await relay.cut();
    const during = await ingest('during the outage');
    expect(during.statusCode, during.body).toBe(503);
    expect(during.json()).toMatchObject({ code: 'store_unavailable' });
    expect(during.body).not.toMatch(/ECONNREFUSED|DB::Exception/);
    expect(during.headers['retry-after']).toBe('5');
    const down = await t.app.inject({ method: 'GET', url: '/api/health' });
    expect(down.statusCode).toBe(503);
    expect(down.json().dependencies.events).toEqual({ kind: 'clickhouse', status: 'unavailable' });
    const read = await t.as(t.adminToken, { method: 'GET', url: '/api/events/01J00000000000000000000000' });
    expect(read.statusCode).toBe(503);
    expect(read.json().code).toBe('store_unavailable');

    await relay.open();
    const after = await ingest('after the outage');
    expect(after.statusCode, after.body).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/api/health' })).statusCode).toBe(200);
    // What was refused is not stored; what was acknowledged is.
    const stored = await t.rt.events.stats();
    expect(stored.events).toBe(2);
  });
});
