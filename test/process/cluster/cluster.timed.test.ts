import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickHouseHttp } from '../../helpers/clickhouse.js';
import { type Cluster, call, clusterTest, type Node, startCluster } from '../../helpers/cluster.js';
import { eventually } from '../../helpers/eventually.js';
import { Client, closedWithin, is, type Msg } from '../../helpers/ws-client.js';

/**
 * Three `logscope serve` processes on PostgreSQL, Redis and the two-shard ClickHouse:
 * any node answers any request, live updates cross nodes, a rights change on one node
 * closes a socket on another, and work of a node killed with SIGKILL is finished by
 * another.
 */
/** A webhook receiver on loopback: what it got, with when. */
async function receiver() {
  const got: Array<{ at: number; body: string }> = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => {
      body += d.toString();
    });
    req.on('end', () => {
      got.push({ at: Date.now(), body });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    got,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe.skipIf(!clusterTest.run)('a cluster of three nodes', () => {
  let cluster: Cluster;
  let a: Node;
  let b: Node;
  let c: Node;
  let token: string;
  /** Rows the servers generate for queries that take a second or more. */
  const HEAVY_ROWS = 4_000_000;
  const HEAVY_FROM = 1714557600; // 2024-05-01T10:00:00Z, seconds
  const heavyRange = { ts_from: HEAVY_FROM, ts_to: HEAVY_FROM + 7200 };
  const heavyTopN = { type: 'TopN', params: { time_range: heavyRange, field: 'ev_id', n: 10 } };

  beforeAll(async () => {
    cluster = await startCluster(3, { LOGSCOPE_TOKEN_CACHE_SECONDS: '60' });
    [a, b, c] = cluster.nodes as [Node, Node, Node];
    token = cluster.token;
    const database = cluster.database;
    await clickHouseHttp(
      `INSERT INTO ${database}.events_local (ev_id, ts, received_at, stored_at, message) SELECT concat('h', toString(number)), ${HEAVY_FROM * 1000} + number, ${HEAVY_FROM * 1000} + number, ${HEAVY_FROM * 1000}, concat('heavy ', toString(number)) FROM system.numbers LIMIT ${HEAVY_ROWS}`,
    );
  }, 180_000);

  afterAll(async () => {
    await cluster?.close();
  }, 60_000);

  const ingest = (node: Node, messages: string[]) =>
    call(
      node,
      token,
      'POST',
      '/api/ingest',
      messages.map((message) => JSON.stringify({ message, host: node.name })).join('\n'),
      { 'content-type': 'application/x-ndjson' },
    );

  it('names the bus in health on every node', async () => {
    for (const node of [a, b, c]) {
      const health = await call(node, token, 'GET', '/api/health');
      expect(health.status).toBe(200);
      expect(health.json.dependencies).toEqual({
        metadata: { kind: 'postgres', status: 'ok' },
        events: { kind: 'clickhouse', status: 'ok' },
        bus: { kind: 'redis', status: 'ok' },
      });
    }
  });

  it('creates a query on A; B reads, exports and removes it; A then knows it is gone', async () => {
    expect((await ingest(a, ['cross one', 'cross two'])).status).toBe(200);
    expect((await ingest(c, ['cross three'])).status).toBe(200);
    const made = await call(a, token, 'POST', '/api/query', {
      type: 'Search',
      params: { time_range: { preset: 'last_hour' }, query: 'cross', sort: ['message'] },
    });
    expect(made.status).toBe(200);
    const id = made.json.query_id as string;
    const onA = made.json;
    const onB = await call(b, token, 'GET', `/api/query/${id}`);
    expect(onB.status).toBe(200);
    expect(onB.json.status).toBe('SUCCESS');
    expect(onB.json.results).toEqual(onA.results);
    expect(onB.json.results.events.map((e: { message: string }) => e.message)).toEqual([
      'cross one',
      'cross three',
      'cross two',
    ]);
    const exported = await call(b, token, 'GET', `/api/query/${id}/export?ftype=ndjson`);
    expect(exported.status).toBe(200);
    expect(exported.text.trim().split('\n').length).toBe(3);
    expect((await call(c, token, 'GET', `/api/query/${id}/remove`)).status).toBe(200);
    expect((await call(a, token, 'GET', `/api/query/${id}`)).status).toBe(404);
    expect((await call(b, token, 'GET', `/api/query/${id}`)).status).toBe(404);
  });

  it('stops on B a query that A computes', async () => {
    const made = await call(a, token, 'POST', '/api/query', heavyTopN);
    expect(made.status).toBe(202);
    const id = made.json.query_id as string;
    const started = Date.now();
    const stopped = await call(b, token, 'POST', `/api/query/${id}/stop`);
    expect(stopped.status).toBe(200);
    expect(stopped.json.status).toBe('STOPPED');
    expect(Date.now() - started).toBeLessThan(3000);
    // A's copy is the one it stopped; C reads the same.
    expect((await call(a, token, 'GET', `/api/query/${id}`)).json.status).toBe('STOPPED');
    expect((await call(c, token, 'GET', `/api/query/${id}`)).json.status).toBe('STOPPED');
  }, 30_000);

  it('delivers to a websocket on A the events ingested on B within a second', async () => {
    const made = await call(a, token, 'POST', '/api/query', {
      type: 'Search',
      params: { time_range: { preset: 'last_hour' }, query: 'wsnews' },
    });
    const id = made.json.query_id as string;
    const ws = await Client.open(`${a.wsUrl}?token=${token}`);
    try {
      ws.send(['subscribe', { query_id: id }]);
      await ws.next(is('subscribed'));
      await ws.next(is('widget-update'));
      const delays: number[] = [];
      for (let i = 0; i < 5; i++) {
        const sent = Date.now();
        expect((await ingest(b, [`wsnews ${i}`])).status).toBe(200);
        const has = (m: Msg) =>
          m[0] === 'widget-update' &&
          JSON.stringify((m[1].data as { results: unknown }).results).includes(`wsnews ${i}`);
        await ws.next(has, 3000);
        delays.push(Date.now() - sent);
      }
      expect(Math.max(...delays)).toBeLessThan(1000);
    } finally {
      ws.ws.close();
    }
  }, 30_000);

  it('closes a socket on A when its token is deleted on B (token cache of 60 s)', async () => {
    const user = await call(a, token, 'POST', '/api/users', {
      username: 'carl',
      password: 'carl-password-1',
      permissions: [],
    });
    expect(user.status).toBe(201);
    const made = await call(b, '', 'POST', '/api/auth/login', {
      username: 'carl',
      password: 'carl-password-1',
    });
    expect(made.status, made.text).toBe(200);
    const carl = made.json.secret_key as string;
    // Used on A first: A caches the identity for a minute.
    expect((await call(a, carl, 'GET', '/api/users/me')).status).toBe(200);
    const ws = await Client.open(`${a.wsUrl}?token=${carl}`);
    const del = await call(b, carl, 'DELETE', `/api/authtokens/${carl}`);
    expect(del.status).toBe(204);
    expect(await closedWithin(ws, 3000)).toBe(4401);
    expect((await call(a, carl, 'GET', '/api/users/me')).status).toBe(401);
  });

  it('matches a trigger made on B against events ingested on A and C, once each', async () => {
    const made = await call(b, token, 'POST', '/api/triggers', { name: 'cluster', query: 'trigword' });
    expect(made.status, made.text).toBe(201);
    await new Promise((r) => setTimeout(r, 300));
    expect((await ingest(a, ['trigword a1', 'trigword a2'])).status).toBe(200);
    expect((await ingest(c, ['trigword c1'])).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1000));
    const found = await call(b, token, 'POST', '/api/query', {
      type: 'Search',
      params: { time_range: { preset: 'last_hour' }, query: 'trigword' },
    });
    const events = found.json.results.events as Array<{ ev_id: string }>;
    expect(events.length).toBe(3);
    for (const e of events) {
      const matches = await call(c, token, 'GET', `/api/events/${e.ev_id}/triggers`);
      expect(matches.status).toBe(200);
      expect(JSON.stringify(matches.json).match(/"cluster"/g)?.length, matches.text).toBe(1);
    }
  });

  it('gives a kind of message one pattern_id whichever node takes it in', async () => {
    expect((await ingest(a, ['patternword user alice logged in from 10.0.0.1'])).status).toBe(200);
    // The template A made reaches B over the bus before B sees its kind.
    await new Promise((r) => setTimeout(r, 500));
    expect((await ingest(b, ['patternword user bob logged in from 10.0.0.2'])).status).toBe(200);
    expect((await ingest(c, ['patternword user carol logged in from 10.0.0.3'])).status).toBe(200);
    // Two names at one place are two templates until a third (docs/api/patterns.md): C's
    // merges B's into A's, and the event stored under B's id follows within seconds.
    const events = await eventually(
      'one pattern_id for the three events',
      async () => {
        const found = await call(c, token, 'POST', '/api/query', {
          type: 'Search',
          params: { time_range: { preset: 'last_hour' }, query: 'patternword' },
        });
        const list = found.json.results.events as Array<{ pattern_id: string | null }>;
        return list.length === 3 && new Set(list.map((e) => e.pattern_id)).size === 1 && list;
      },
      { withinMs: 15_000, everyMs: 250 },
    );
    expect(events[0]?.pattern_id).toBeTruthy();
  });

  it('applies a pipeline made on B to events ingested on A and C, until C disables it', async () => {
    const made = await call(b, token, 'POST', '/api/pipelines', {
      name: 'cluster tag',
      when: 'message:pipeword',
      steps: [{ set: { field: 'tagged_by', value: 'pipeline' } }],
    });
    expect(made.status, made.text).toBe(201);
    await new Promise((r) => setTimeout(r, 300));
    expect((await ingest(a, ['pipeword a1'])).status).toBe(200);
    expect((await ingest(c, ['pipeword c1'])).status).toBe(200);
    const off = await call(c, token, 'PATCH', `/api/pipelines/${made.json.id}`, { enabled: false });
    expect(off.status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    expect((await ingest(a, ['pipeword a2'])).status).toBe(200);
    const found = await call(b, token, 'POST', '/api/query', {
      type: 'Search',
      params: { time_range: { preset: 'last_hour' }, query: 'pipeword' },
    });
    const events = found.json.results.events as Array<{ message: string; tagged_by?: string }>;
    expect(Object.fromEntries(events.map((e) => [e.message, e.tagged_by ?? null]))).toEqual({
      'pipeword a1': 'pipeline',
      'pipeword c1': 'pipeline',
      'pipeword a2': null,
    });
  });

  it('counts a threshold over every node’s events and notifies once, from one node', async () => {
    const hook = await receiver();
    try {
      const channel = await call(a, token, 'POST', '/api/channels', {
        name: 'cluster hook',
        type: 'webhook',
        config: { url: hook.url },
      });
      expect(channel.status, channel.text).toBe(201);
      const made = await call(b, token, 'POST', '/api/triggers', {
        name: 'cluster burst',
        query: 'burstword',
        condition: { type: 'threshold', window_seconds: 60, op: 'gt', value: 3, group_by: [] },
        notify: [channel.json.id],
      });
      expect(made.status, made.text).toBe(201);
      await new Promise((r) => setTimeout(r, 500));
      // Two events on each of A and C: no node alone has more than 3.
      expect((await ingest(a, ['burstword a1', 'burstword a2'])).status).toBe(200);
      await new Promise((r) => setTimeout(r, 2500));
      expect(hook.got).toHaveLength(0);
      const crossed = Date.now();
      expect((await ingest(c, ['burstword c1', 'burstword c2'])).status).toBe(200);
      while (hook.got.length === 0 && Date.now() - crossed < 10_000)
        await new Promise((r) => setTimeout(r, 50));
      expect(hook.got.length).toBe(1);
      // Judged once every node's counts of the second are in (1.5 s), then sent.
      expect((hook.got[0] as { at: number }).at - crossed).toBeLessThan(3500);
      expect(JSON.parse((hook.got[0] as { body: string }).body)).toMatchObject({
        kind: 'fire',
        count: 4,
        trigger: { name: 'cluster burst' },
      });
      expect(
        new Set(
          JSON.parse((hook.got[0] as { body: string }).body).samples.map(
            (x: { message: string }) => x.message,
          ),
        ),
      ).toEqual(new Set(['burstword a1', 'burstword a2', 'burstword c1', 'burstword c2']));
      // Every node evaluated the crossing; only the notifier sent it.
      await new Promise((r) => setTimeout(r, 2000));
      expect(hook.got).toHaveLength(1);
      const deliveries = await call(c, token, 'GET', `/api/deliveries?trigger_id=${made.json.id}`);
      expect(deliveries.json.count).toBe(1);
      await call(b, token, 'DELETE', `/api/triggers/${made.json.id}`);
    } finally {
      await hook.close();
    }
  });

  it('shows on A the partial results of a sliced query that D computes', async () => {
    // D starts after the rows exist, so its histogram slices the range (500,000 a slice);
    // it answers POST at once.
    const d = await cluster.start('node-d', {
      LOGSCOPE_QUERY_SLICE_EVENTS: '500000',
      LOGSCOPE_QUERY_SYNC_MS: '0',
    });
    const made = await call(d, token, 'POST', '/api/query', {
      type: 'Timeline',
      params: { time_range: heavyRange, interval: '1m', query: 'message:/heavy [0-9]*7$/' },
    });
    expect(made.status).toBe(202);
    const id = made.json.query_id as string;
    const seen: Array<{ status: string; progress: number; buckets: number }> = [];
    for (const until = Date.now() + 30_000; Date.now() < until; ) {
      const q = await call(a, token, 'GET', `/api/query/${id}`);
      const buckets = JSON.stringify(q.json.results).match(/"count"/g)?.length ?? 0;
      seen.push({ status: q.json.status, progress: q.json.progress, buckets });
      if (q.json.status === 'SUCCESS') break;
      await new Promise((r) => setTimeout(r, 40));
    }
    const partial = seen.filter((s) => s.status === 'IN_PROGRESS' && s.progress > 0 && s.progress < 1);
    expect(partial.length, JSON.stringify(seen.slice(0, 20))).toBeGreaterThan(0);
    expect(partial.some((s) => s.buckets > 0)).toBe(true);
    expect(seen.at(-1)?.status).toBe('SUCCESS');
    // What A shows at the end is what D computed.
    const onD = await call(d, token, 'GET', `/api/query/${id}`);
    const onA = await call(a, token, 'GET', `/api/query/${id}`);
    expect(onA.json.results).toEqual(onD.json.results);
  }, 60_000);

  it('finishes on another node a query and a report whose node was killed', async () => {
    // What the query and the report cost the engine together on this machine, measured on a
    // live node: a take-over is detection (the 3 s lease and a 1 s adopt pass) plus computing
    // both again at once, so that is the bound, not a fixed figure a slower machine misses.
    // Twice that pair's time: the dead node's two statements may still run in the shared
    // ClickHouse for a moment (the taking node kills them first, `EventStore.abandon`, which
    // a ClickHouse store test checks by itself), and CI shares the machine's two cores with
    // three nodes. The bound was two solo times of the query alone, which the report alone
    // exceeds (it writes its file too): measured, the pair 7.6 s, a query alone about 2.4,
    // the take-over 10.2 s after the kill.
    const started = Date.now();
    const [solo, soloReport] = await Promise.all([
      call(a, token, 'POST', '/api/query', heavyTopN),
      call(a, token, 'POST', '/api/reports', {
        title: 'heavy solo',
        ftype: 'csv',
        source: { kind: 'query', query: heavyTopN },
      }),
    ]);
    expect(soloReport.status, soloReport.text).toBe(202);
    for (let done = 0; done < 2 && Date.now() - started < 30_000; ) {
      await new Promise((r) => setTimeout(r, 100));
      const q = (await call(a, token, 'GET', `/api/query/${solo.json.query_id}`)).json;
      const r = (await call(a, token, 'GET', `/api/reports/${soloReport.json.id}`)).json;
      done = Number(q.status === 'SUCCESS') + Number(r.status === 'READY');
    }
    const pairMs = Date.now() - started;
    const bound = 3000 + 1000 + 2 * pairMs + 1000;
    const made = await call(c, token, 'POST', '/api/query', heavyTopN);
    expect(made.status).toBe(202);
    const id = made.json.query_id as string;
    const report = await call(c, token, 'POST', '/api/reports', {
      title: 'heavy',
      ftype: 'csv',
      source: { kind: 'query', query: heavyTopN },
    });
    expect(report.status, report.text).toBe(202);
    await new Promise((r) => setTimeout(r, 300));
    c.child.kill('SIGKILL');
    await c.exited;
    const killed = Date.now();
    let queryDone = 0;
    let reportDone = 0;
    while ((!queryDone || !reportDone) && Date.now() - killed < Math.max(20_000, bound + 5000)) {
      if (!queryDone && (await call(a, token, 'GET', `/api/query/${id}`)).json.status === 'SUCCESS')
        queryDone = Date.now() - killed;
      if (
        !reportDone &&
        (await call(b, token, 'GET', `/api/reports/${report.json.id}`)).json.status === 'READY'
      )
        reportDone = Date.now() - killed;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(queryDone).toBeGreaterThan(0);
    expect(reportDone).toBeGreaterThan(0);
    expect(queryDone).toBeLessThan(bound);
    expect(reportDone).toBeLessThan(bound);
    const q = await call(b, token, 'GET', `/api/query/${id}`);
    expect(q.json.results.items?.length ?? q.json.results.values?.length ?? 10).toBe(10);
    const file = await call(a, token, 'GET', `/api/reports/${report.json.id}/file`);
    expect(file.status).toBe(200);
    expect(file.text.split('\n').filter(Boolean).length).toBeGreaterThan(5);
  }, 90_000);

  it('still notifies once the node that may have held the notifier lease is killed', async () => {
    // C was killed above; if it was the notifier, A or B takes its lease within 3 s.
    const hook = await receiver();
    try {
      const channel = await call(a, token, 'POST', '/api/channels', {
        name: 'after kill',
        type: 'webhook',
        config: { url: hook.url },
      });
      const made = await call(b, token, 'POST', '/api/triggers', {
        name: 'after kill',
        query: 'killword',
        condition: { type: 'match' },
        notify: [channel.json.id],
        cooldown_seconds: 0,
      });
      expect(made.status, made.text).toBe(201);
      await new Promise((r) => setTimeout(r, 500));
      expect((await ingest(a, ['killword a'])).status).toBe(200);
      expect((await ingest(b, ['killword b'])).status).toBe(200);
      const sent = Date.now();
      while (hook.got.length === 0 && Date.now() - sent < 10_000) await new Promise((r) => setTimeout(r, 50));
      expect(hook.got.length).toBeGreaterThan(0);
      await new Promise((r) => setTimeout(r, 1500));
      const counted = hook.got.reduce((n, h) => n + (JSON.parse(h.body) as { count: number }).count, 0);
      expect(counted).toBe(2);
    } finally {
      await hook.close();
    }
  });
});
