import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { countFlag, flag, fmt, percentile, startServer } from './lib.js';

/**
 * Time from the event that crosses a threshold to the webhook's arrival, under ingest.
 *
 * A threshold trigger (`gt 0` in 60 s, grouped by host) notifies a webhook receiver in this
 * process. Background clients ingest non-matching events at --rate events/s (default
 * 20,000; 1,000-line NDJSON requests) while one client sends --crossings single matching
 * events (default 1,000), each from a new host, so each is a crossing of its own group.
 * The latency is from the crossing request's send to the notification's arrival. "raw"
 * is the floor: the same JSON POSTed straight from here to the receiver.
 * Flags: --rate 20000, --crossings 1000, --per-second 50.
 */
export async function main(argv: string[]): Promise<void> {
  const rate = countFlag(argv, 'rate', 20_000);
  const crossings = countFlag(argv, 'crossings', 1000);
  const perSecond = flag(argv, 'per-second', 50);
  const arrived = new Map<string, number>();
  const hook = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      const host = (JSON.parse(body) as { group?: { host?: string } }).group?.host;
      if (host) arrived.set(host, performance.now());
      res.end('ok');
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  const hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/`;
  const server = await startServer();
  const headers = { authorization: `token ${server.token}`, 'content-type': 'application/json' };
  const api = async (method: string, p: string, body?: unknown) =>
    (await (await fetch(`${server.url}${p}`, { method, headers, body: JSON.stringify(body) })).json()) as {
      id: number;
    };
  try {
    const channel = await api('POST', '/api/channels', {
      name: 'bench',
      type: 'webhook',
      config: { url: hookUrl },
    });
    await api('POST', '/api/triggers', {
      name: 'crossing',
      query: 'crossword',
      condition: { type: 'threshold', window_seconds: 60, op: 'gt', value: 0, group_by: ['host'] },
      notify: [channel.id],
    });

    // Raw floor: the same POST straight to the receiver.
    const raw: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t0 = performance.now();
      await fetch(hookUrl, { method: 'POST', body: JSON.stringify({ group: { host: `raw-${i}` } }) });
      raw.push(performance.now() - t0);
    }

    let stop = false;
    let ingested = 0;
    const line = JSON.stringify({ app: 'api', host: 'bg', message: 'GET /health 200 in 3 ms' });
    const body = Array.from({ length: 1000 }, () => line).join('\n');
    const background = async () => {
      const started = performance.now();
      while (!stop) {
        const due = started + (ingested / rate) * 1000;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const res = await fetch(`${server.url}/api/ingest`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/x-ndjson' },
          body,
        });
        await res.arrayBuffer();
        ingested += 1000;
      }
    };
    const t0 = performance.now();
    const clients = [0, 1, 2, 3].map(background);
    await new Promise((r) => setTimeout(r, 1000));
    const sent = new Map<string, number>();
    for (let i = 0; i < crossings; i++) {
      const host = `h${i}`;
      const at = performance.now();
      sent.set(host, at);
      await fetch(`${server.url}/api/ingest`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ host, message: `crossword ${i}` }),
      }).then((r) => r.arrayBuffer());
      const next = at + 1000 / perSecond;
      const wait = next - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    const deadline = performance.now() + 30_000;
    while (arrived.size < crossings + 200 && performance.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    stop = true;
    await Promise.all(clients);
    const seconds = (performance.now() - t0) / 1000;
    const lat = [...sent].flatMap(([host, at]) => {
      const got = arrived.get(host);
      return got === undefined ? [] : [got - at];
    });
    lat.sort((a, b) => a - b);
    raw.sort((a, b) => a - b);
    const missing = crossings - lat.length;
    console.log(
      `alerting: ${crossings} crossings under ${fmt(ingested / seconds)} events/s of ingest (asked ${fmt(rate)})`,
    );
    console.log(`  notified            ${lat.length} (missing ${missing})`);
    console.log(
      `  crossing → webhook  p50 ${fmt(percentile(lat, 50), 1)} ms  p99 ${fmt(percentile(lat, 99), 1)} ms  max ${fmt(lat.at(-1) ?? 0, 1)} ms  (goal p99 ≤ 2,000 ms)`,
    );
    console.log(
      `  raw POST here → receiver  p50 ${fmt(percentile(raw, 50), 1)} ms  p99 ${fmt(percentile(raw, 99), 1)} ms`,
    );
    console.log(
      `  ratio p99 / raw p99  ${fmt(percentile(lat, 99) / Math.max(percentile(raw, 99), 0.001), 1)}`,
    );
  } finally {
    await server.stop();
    hook.close();
  }
}
