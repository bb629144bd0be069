/**
 * A pattern_rate trigger on a cluster (docs/api/alerting.md): the holder of the
 * alert-notifier lease judges each window, so a surge whose events were taken in by
 * both nodes is counted whole and notified once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, call, clusterTest, type Node, startCluster } from '../../helpers/cluster.js';
import { receiver } from '../../helpers/webhook-receiver.js';

const W = 10_000;

describe.skipIf(!clusterTest.run)('pattern_rate on a cluster of two nodes', () => {
  let cluster: Cluster;
  let a: Node;
  let b: Node;
  let hook: Awaited<ReturnType<typeof receiver>>;

  beforeAll(async () => {
    cluster = await startCluster(2, { LOGSCOPE_PATTERN_RATE_SETTLE_SECONDS: '1' });
    [a, b] = cluster.nodes as [Node, Node];
    hook = await receiver();
  }, 120_000);
  afterAll(async () => {
    await cluster?.close();
    await hook?.close();
  }, 60_000);

  const ingest = async (node: Node, n: number, fromMs: number, seq: number) => {
    const lines = Array.from({ length: n }, (_, i) =>
      JSON.stringify({
        app: 'surge',
        message: `Connection closed by 10.0.0.${i % 250} port ${seq + i}`,
        timestamp: new Date(fromMs + Math.floor(((i + 0.5) * (W - 100)) / n)).toISOString(),
      }),
    );
    const res = await call(node, cluster.token, 'POST', '/api/ingest', lines.join('\n'), {
      'content-type': 'application/x-ndjson',
    });
    expect(res.status, res.text).toBe(200);
  };
  const until = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms - Date.now())));

  it('counts every node’s events of the window and notifies once, from one node', async () => {
    const channel = await call(a, cluster.token, 'POST', '/api/channels', {
      name: 'hook',
      type: 'webhook',
      config: { url: hook.url },
    });
    expect(channel.status, channel.text).toBe(201);
    const now = Date.now();
    let start = Math.floor(now / W) * W;
    if (now - start > 4000) {
      start += W;
      await until(start + 50);
    }
    const made = await call(b, cluster.token, 'POST', '/api/triggers', {
      name: 'cluster surge',
      query: 'app:surge',
      notify: [channel.json.id],
      condition: { type: 'pattern_rate', window_seconds: 10 },
    });
    expect(made.status, made.text).toBe(201);
    // The baseline and the surge, half taken in by each node: the store counts them all, one node judges.
    await ingest(a, 10, start - W, 0);
    await ingest(b, 10, start - W, 100);
    await ingest(a, 50, start, 1000);
    await ingest(b, 50, start, 2000);
    // k0 is judged a second after it ends; then a moment for a second notification that must not come.
    await until(start + W + 4000);
    expect(hook.got).toHaveLength(1);
    expect(JSON.parse((hook.got[0] as { body: string }).body)).toMatchObject({
      kind: 'fire',
      change: 'up',
      count: 100,
      baseline_count: 20,
      ratio: 5,
      trigger: { name: 'cluster surge' },
      window: { ts_from: start / 1000 },
    });
    const deliveries = await call(a, cluster.token, 'GET', `/api/deliveries?trigger_id=${made.json.id}`);
    expect(deliveries.json.count).toBe(1);
  }, 40_000);
});
