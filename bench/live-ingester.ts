import { fileURLToPath } from 'node:url';

/**
 * The event stream of `npm run bench -- live`, and the ingest child process that sends it.
 *
 * Event i goes to host `h-<i mod hosts>`, so a widget filtering on one host matches exactly
 * 1/hosts of the stream. Every event carries `bench_sent_ms`: the wall-clock time its
 * request was sent, which is also its `timestamp`.
 */
export function eventLine(i: number, hosts: number, sentMs: number): string {
  return `{"timestamp":${sentMs},"bench_sent_ms":${sentMs},"host":"h-${i % hosts}","app":"app-${i % 20}","severity":"${SEVERITIES[i % SEVERITIES.length]}","status":${i % 10 === 0 ? 503 : 200},"bytes":${(i * 7919) % 100_000},"message":"GET /api/v1/items/${i % 5000} took ${i % 997} ms"}`;
}

export const SEVERITIES = ['info', 'info', 'info', 'notice', 'warning', 'error'];

interface Args {
  url: string;
  token: string;
  rate: number;
  seconds: number;
  hosts: number;
  batch: number;
  inflight: number;
}

/**
 * Open loop: every `batch / rate` seconds one NDJSON request of `batch` events, stamped
 * with the send time, whether or not earlier requests were answered (up to `inflight`
 * outstanding; a tick that finds them all busy is skipped and counted). A 503 (queue full)
 * drops its batch and is counted. Prints one JSON line with the figures on stdout.
 */
async function run(a: Args) {
  const tickMs = (a.batch / a.rate) * 1000;
  process.stdout.write('start\n');
  const t0 = performance.now();
  const startMs = Date.now();
  const perHost = new Array<number>(a.hosts).fill(0);
  let next = 0;
  let sent = 0;
  let accepted = 0;
  let rejected = 0;
  let skipped = 0;
  let busy = 0;
  const acks: number[] = [];
  const pending = new Set<Promise<void>>();
  const post = async (first: number, count: number) => {
    const sentMs = Date.now();
    const lines: string[] = [];
    for (let k = 0; k < count; k++) lines.push(eventLine(first + k, a.hosts, sentMs));
    const t = performance.now();
    const res = await fetch(`${a.url}/api/ingest`, {
      method: 'POST',
      headers: { authorization: `token ${a.token}`, 'content-type': 'application/x-ndjson' },
      body: `${lines.join('\n')}\n`,
    });
    const json = (await res.json()) as { accepted?: number };
    if (res.status === 503) {
      rejected += count;
      return;
    }
    if (!res.ok) throw new Error(`ingest answered ${res.status}: ${JSON.stringify(json).slice(0, 300)}`);
    acks.push(performance.now() - t);
    accepted += json.accepted ?? 0;
    for (let k = 0; k < count; k++) (perHost[(first + k) % a.hosts] as number)++;
  };
  for (let tick = 0; ; tick++) {
    const due = t0 + tick * tickMs;
    if (due - t0 >= a.seconds * 1000) break;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (busy >= a.inflight) {
      skipped += a.batch;
      continue;
    }
    const first = next;
    next += a.batch;
    sent += a.batch;
    busy++;
    const p: Promise<void> = post(first, a.batch).finally(() => {
      busy--;
      pending.delete(p);
    });
    pending.add(p);
  }
  await Promise.all(pending);
  const seconds = (performance.now() - t0) / 1000;
  acks.sort((x, y) => x - y);
  const pct = (p: number) => acks[Math.min(acks.length - 1, Math.floor((p / 100) * acks.length))] ?? 0;
  process.stdout.write(
    `${JSON.stringify({ startMs, seconds, sent, accepted, rejected, skipped, ackP50: pct(50), ackP99: pct(99), perHost })}\n`,
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [url, token, rate, seconds, hosts, batch, inflight] = process.argv.slice(2);
  await run({
    url: url as string,
    token: token as string,
    rate: Number(rate),
    seconds: Number(seconds),
    hosts: Number(hosts),
    batch: Number(batch),
    inflight: Number(inflight),
  });
}
