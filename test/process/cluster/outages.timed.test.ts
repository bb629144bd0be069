import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_DATABASE_URL, type TestApp } from '../../helpers/app.js';
import {
  type Cluster,
  call,
  clusterTest,
  type Node,
  REDIS_URL,
  startCluster,
} from '../../helpers/cluster.js';
import { Relay } from '../../helpers/relay.js';
import { Client, is, type Msg } from '../../helpers/ws-client.js';

/** Host and port of a URL; empty where the suite skips (the describe body still runs). */
const hostPort = (url: string, defaultPort: number): [string, number] => {
  if (!url) return ['127.0.0.1', defaultPort];
  const u = new URL(url);
  return [u.hostname, Number(u.port || defaultPort)];
};

/**
 * What a cluster node does when the bus or the metadata store goes away. Each outage is a
 * TCP relay in front of the real server that the test cuts and opens again.
 */
describe.skipIf(!clusterTest.run)('a cluster node when Redis goes away', () => {
  const relay = new Relay(...hostPort(REDIS_URL, 6379));
  let cluster: Cluster;
  let a: Node;
  let b: Node;

  beforeAll(async () => {
    await relay.open();
    cluster = await startCluster(1);
    a = cluster.nodes[0] as Node;
    // B reaches Redis only through the relay; it re-evaluates what it watches every 2 s.
    const busUrl = new URL(cluster.env.LOGSCOPE_BUS_URL as string);
    busUrl.host = `127.0.0.1:${relay.port}`;
    b = await cluster.start('node-b', {
      LOGSCOPE_BUS_URL: busUrl.toString(),
      LOGSCOPE_LIVE_REFRESH_MS: '2000',
    });
  }, 120_000);

  afterAll(async () => {
    await cluster?.close();
    await relay.cut();
  }, 60_000);

  it('warns in health, fails no request, and still delivers live updates by polling', async () => {
    const token = cluster.token;
    const made = await call(b, token, 'POST', '/api/query', {
      type: 'Search',
      params: { time_range: { preset: 'last_hour' }, query: 'nobus' },
    });
    expect(made.status).toBe(200);
    const ws = await Client.open(`${b.wsUrl}?token=${token}`);
    try {
      ws.send(['subscribe', { query_id: made.json.query_id }]);
      await ws.next(is('widget-update'));

      await relay.cut();
      let health = await call(b, token, 'GET', '/api/health');
      for (let i = 0; i < 50 && health.json.status !== 'degraded'; i++) {
        await new Promise((r) => setTimeout(r, 100));
        health = await call(b, token, 'GET', '/api/health');
      }
      expect(health.status).toBe(200);
      expect(health.json.status).toBe('degraded');
      expect(health.json.dependencies.bus).toEqual({ kind: 'redis', status: 'unavailable' });
      expect(health.json.warnings.join(' ')).toMatch(/polling/);

      // Every request still works on the node without the bus.
      const ingested = await call(a, token, 'POST', '/api/ingest', { message: 'nobus while redis is away' });
      expect(ingested.status).toBe(200);
      const q = await call(b, token, 'POST', '/api/query', {
        type: 'Search',
        params: { time_range: { preset: 'last_hour' }, query: 'nobus' },
      });
      expect(q.status).toBe(200);
      expect(q.json.results.total).toBe(1);
      // A's commit is not announced to B: B's own re-evaluation (every 2 s) finds it.
      const has = (m: Msg) =>
        m[0] === 'widget-update' && JSON.stringify(m[1].data).includes('nobus while redis is away');
      await ws.next(has, 5000);

      await relay.open();
      for (let i = 0; i < 100 && health.json.status !== 'ok'; i++) {
        await new Promise((r) => setTimeout(r, 100));
        health = await call(b, token, 'GET', '/api/health');
      }
      expect(health.json.status).toBe('ok');
    } finally {
      ws.ws.close();
    }
  }, 60_000);
});

describe.skipIf(!TEST_DATABASE_URL)('a server when PostgreSQL goes away', () => {
  const relay = new Relay(...hostPort(TEST_DATABASE_URL, 5432));
  let t: TestApp;

  beforeAll(async () => {
    await relay.open();
    const url = new URL(TEST_DATABASE_URL);
    url.host = `127.0.0.1:${relay.port}`;
    t = await createTestApp({ LOGSCOPE_DATABASE_URL: url.toString() });
  }, 60_000);

  afterAll(async () => {
    await relay.open();
    await t?.close();
    await relay.cut();
  });

  it('answers 503 store_unavailable, never the driver text, and recovers without a restart', async () => {
    const list = () => t.as(t.adminToken, { method: 'GET', url: '/api/dashboards' });
    expect((await list()).statusCode).toBe(200);
    await relay.cut();
    const during = await list();
    expect(during.statusCode, during.body).toBe(503);
    expect(during.json()).toMatchObject({ code: 'store_unavailable' });
    expect(during.headers['retry-after']).toBe('5');
    expect(during.body).not.toMatch(/ECONNREFUSED|terminated|pg/);
    const health = await t.app.inject({ method: 'GET', url: '/api/health' });
    expect(health.statusCode).toBe(503);
    expect(health.json().dependencies.metadata.status).toBe('unavailable');
    await relay.open();
    expect((await list()).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/api/health' })).statusCode).toBe(200);
  }, 60_000);
});
