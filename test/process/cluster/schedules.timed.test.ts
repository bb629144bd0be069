// ci: waits for the clock (a killed node's lease to expire): CI runs it beside the other timed files (scripts/ci/run-suite.sh).
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, call, clusterTest, type Node, startCluster } from '../../helpers/cluster.js';
import { eventually } from '../../helpers/eventually.js';

/**
 * A scheduled report's run on a cluster of two `logscope serve` processes
 * (docs/api/schedules.md): a run whose node is killed (SIGKILL) while it waits for its
 * delivery is finished by the other node, its report and delivery made once.
 */
describe.skipIf(!clusterTest.run)('scheduled runs on a cluster', () => {
  let cluster: Cluster;
  let a: Node;
  let b: Node;
  let token: string;
  /** The webhook holds its first request unanswered (the run waits on it); later ones get 200. */
  const held: ServerResponse[] = [];
  const bodies: string[] = [];
  const hook = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      bodies.push(body);
      if (bodies.length === 1) held.push(res);
      else res.end('ok');
    });
  });

  beforeAll(async () => {
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
    cluster = await startCluster(2);
    [a, b] = cluster.nodes as [Node, Node];
    token = cluster.token;
  }, 120_000);

  afterAll(async () => {
    for (const res of held) res.destroy();
    await new Promise<void>((r) => hook.close(() => r()));
    await cluster?.close();
  }, 60_000);

  it('finishes on the other node a run whose node died', async () => {
    const search = await call(a, token, 'POST', '/api/saved-searches', { title: 'All', query: '' });
    expect(search.status, search.text).toBe(201);
    const channel = await call(a, token, 'POST', '/api/channels', {
      name: 'hook',
      type: 'webhook',
      config: { url: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook` },
    });
    expect(channel.status, channel.text).toBe(201);
    const made = await call(a, token, 'POST', '/api/schedules', {
      name: 'Survives',
      source: { saved_search_id: search.json.id },
      format: 'csv',
      time_range: { preset: 'last_1_hours' },
      cron: '0 3 * * *',
      deliver_to: [channel.json.id],
    });
    expect(made.status, made.text).toBe(201);
    const id = made.json.id as number;
    const started = await call(a, token, 'POST', `/api/schedules/${id}/run`);
    expect(started.status, started.text).toBe(202);
    // Node a made the report and its delivery, and waits for the receiver: kill it then.
    await eventually('the delivery to reach the receiver', () => held.length > 0, { withinMs: 30_000 });
    await eventually('the run to record its delivery', async () => {
      const s = (await call(b, token, 'GET', `/api/schedules/${id}`)).json;
      return s.last_run.deliveries.length === 1;
    });
    a.child.kill('SIGKILL');
    await a.exited;
    const running = (await call(b, token, 'GET', `/api/schedules/${id}`)).json;
    expect(running.last_run.status).toBe('running');
    const reportId = running.last_run.report_id as number;
    expect(reportId).toBeGreaterThan(0);
    const done = await eventually(
      'node b to finish the run',
      async () => {
        const s = (await call(b, token, 'GET', `/api/schedules/${id}`)).json;
        return s.last_run.status === 'running' ? undefined : s;
      },
      { withinMs: 60_000, everyMs: 250 },
    );
    // The same run: its start, its report, its one delivery (no second one made).
    expect(done.last_run).toMatchObject({ at: running.last_run.at, trigger: 'manual', report_id: reportId });
    expect(done.last_run.deliveries).toHaveLength(1);
    expect(done.last_run.deliveries[0].delivery_id).toBe(running.last_run.deliveries[0].delivery_id);
    const reports = (await call(b, token, 'GET', '/api/reports')).json.results as Array<{
      schedule_id: number;
    }>;
    expect(reports.filter((r) => r.schedule_id === id)).toHaveLength(1);
    const deliveries = (await call(b, token, 'GET', `/api/deliveries?schedule_id=${id}`)).json;
    expect(deliveries.count).toBe(1);
    // Its file is whole, on the node that lives.
    const file = await call(b, token, 'GET', `/api/reports/${reportId}/file`);
    expect(file.status).toBe(200);
    expect(file.text.split('\n')[0]).toContain('message');
  }, 85_000);
});
