// ci: waits for the clock (the next cron minute): CI runs it beside the other timed files (scripts/ci/run-suite.sh).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, call, clusterTest, type Node, startCluster } from '../../helpers/cluster.js';
import { eventually } from '../../helpers/eventually.js';

/**
 * A cron slot on a cluster of two `logscope serve` processes (docs/api/schedules.md): both
 * nodes tick, one holds the scheduler lease and the slot is claimed in the store, so the
 * slot runs once, with one report and one audit record.
 */
describe.skipIf(!clusterTest.run)('a cron slot on a cluster', () => {
  let cluster: Cluster;
  let a: Node;
  let b: Node;
  let token: string;

  beforeAll(async () => {
    cluster = await startCluster(2);
    [a, b] = cluster.nodes as [Node, Node];
    token = cluster.token;
  }, 120_000);

  afterAll(async () => {
    await cluster?.close();
  }, 60_000);

  it('runs each slot on exactly one node', async () => {
    const search = await call(b, token, 'POST', '/api/saved-searches', { title: 'All', query: '' });
    const made = await call(b, token, 'POST', '/api/schedules', {
      name: 'Every minute',
      source: { saved_search_id: search.json.id },
      format: 'csv',
      time_range: { preset: 'last_1_hours' },
      cron: '* * * * *',
    });
    expect(made.status, made.text).toBe(201);
    const id = made.json.id as number;
    const due = Date.parse(made.json.next_run_at);
    const ran = await eventually(
      'the slot to run',
      async () => {
        const s = (await call(a, token, 'GET', `/api/schedules/${id}`)).json;
        return s.last_run && s.last_run.status !== 'running' ? s : undefined;
      },
      { withinMs: 75_000, everyMs: 250 },
    );
    expect(ran.last_run).toMatchObject({ trigger: 'cron', status: 'ok' });
    expect(Date.parse(ran.last_run.at)).toBeGreaterThanOrEqual(due);
    // A few ticks of both nodes later, still one run of that slot.
    await new Promise((r) => setTimeout(r, 3000));
    const reports = (await call(a, token, 'GET', '/api/reports')).json.results as Array<{
      schedule_id: number;
    }>;
    expect(reports.filter((r) => r.schedule_id === id)).toHaveLength(1);
    const audit = await eventually('the run audited', async () => {
      const page = (await call(b, token, 'GET', '/api/audit?action=schedule.run')).json;
      return page.count > 0 ? page : undefined;
    });
    expect(audit.count).toBe(1);
    expect((await call(b, token, 'GET', `/api/schedules/${id}`)).json.last_run.at).toBe(ran.last_run.at);
  }, 85_000);
});
