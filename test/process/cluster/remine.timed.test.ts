import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickHouseHttp } from '../../helpers/clickhouse.js';
import { type Cluster, call, clusterTest, type Node, startCluster } from '../../helpers/cluster.js';
import { eventually } from '../../helpers/eventually.js';

/**
 * Re-mining on a cluster of two `logscope serve` processes (docs/api/patterns.md#re-mining):
 * a job started on one node is read, refused a twin and stopped from the other; a job
 * whose node was killed (SIGKILL) shows failed ("interrupted") on the other once its
 * lease (30 s) has run out, and a new one may start there.
 */
describe.skipIf(!clusterTest.run)('re-mining on a cluster', () => {
  let cluster: Cluster;
  let a: Node;
  let b: Node;
  let token: string;
  /** Events with no pattern_id yet, as stored before patterns existed. */
  const ROWS = 60_000;
  const FROM = 1714557600; // 2024-05-01T10:00:00Z
  const range = { ts_from: FROM, ts_to: FROM + 3600 };
  type Job = { job_id: string; state: string; events_done: number; events_total: number; error?: string };
  const job = async (node: Node, id: string) =>
    (await call(node, token, 'GET', `/api/patterns/remine/${id}`)).json as Job;

  beforeAll(async () => {
    cluster = await startCluster(2);
    [a, b] = cluster.nodes as [Node, Node];
    token = cluster.token;
    await clickHouseHttp(
      `INSERT INTO ${cluster.database}.events_local (ev_id, ts, received_at, stored_at, app, message) SELECT concat('r', toString(100000000 + number)), ${FROM * 1000} + number * 50, ${FROM * 1000} + number * 50, ${FROM * 1000}, 'sshd', concat('Accepted password for u', toString(number % 97), ' from 10.0.', toString(number % 250), '.9 port ', toString(number)) FROM system.numbers LIMIT ${ROWS}`,
    );
  }, 180_000);

  afterAll(async () => {
    await cluster?.close();
  }, 60_000);

  it('answers for a job on every node, one at a time, and marks one whose node died interrupted', async () => {
    const started = await call(a, token, 'POST', '/api/patterns/remine', range);
    expect(started.status, started.text).toBe(202);
    const id = (started.json as Job).job_id;
    // Node b reads its progress and refuses a second job.
    await eventually(
      'progress seen on node b',
      async () => {
        const j = await job(b, id);
        return j.state === 'running' && j.events_done > 0 ? j : undefined;
      },
      { withinMs: 60_000, everyMs: 100 },
    );
    expect((await job(b, id)).events_total).toBe(ROWS);
    expect((await call(b, token, 'POST', '/api/patterns/remine', range)).status).toBe(409);
    a.child.kill('SIGKILL');
    await a.exited;
    const killedAt = Date.now();
    const end = await eventually(
      'the job of the killed node to show interrupted',
      async () => {
        const j = await job(b, id);
        return j.state === 'running' ? undefined : j;
      },
      { withinMs: 60_000, everyMs: 250 },
    );
    expect(end).toMatchObject({ state: 'failed', error: 'interrupted' });
    expect(end.events_done).toBeLessThan(ROWS);
    // Seen as dead once the lease it last renewed ran out: at most 30 s after the kill.
    expect(Date.now() - killedAt).toBeLessThan(40_000);
    // Node b runs the next one, to its end, and a DELETE of the ended job leaves it so.
    const next = await call(b, token, 'POST', '/api/patterns/remine', range);
    expect(next.status, next.text).toBe(202);
    const nextId = (next.json as Job).job_id;
    const done = await eventually(
      'the second job to end',
      async () => {
        const j = await job(b, nextId);
        return j.state === 'running' ? undefined : j;
      },
      { withinMs: 120_000, everyMs: 250 },
    );
    expect(done).toMatchObject({ state: 'done', events_done: ROWS, events_total: ROWS });
    const ids = (await clickHouseHttp(
      `SELECT count() AS n, uniqExact(pattern_id) AS k FROM ${cluster.database}.events WHERE pattern_id IS NOT NULL FORMAT JSONEachRow`,
    )) as Array<{ n: string | number; k: string | number }>;
    expect(Number(ids[0]?.n)).toBe(ROWS);
    expect(Number(ids[0]?.k)).toBe(1);
  }, 300_000);
});
