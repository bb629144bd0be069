/**
 * `npm run bench -- log-metrics [--events 1000000] [--clients 4] [--batch 1000] [--runs 9] [--many 50]`:
 * what counting log metrics at ingest costs, and what reading them saves (issue 76).
 *
 * The shipper bench's events (bench/shipper-events.ts: NDJSON, 4 clients × 1,000, 2 % late)
 * sent to two fresh servers in turn: one without log metrics, one with three (errors a
 * minute by `app`; `bytes` summed by `host`; quantiles of `bytes`). Then, on the second,
 * each metric's series over the 24 hours at one-minute steps, beside the same answer from
 * raw DuckDB scanning the same events in a plain table (the rollups' point: a read that does
 * not grow with the events), and the same count through `POST /api/query` (a Timeline of
 * errors split by app, which scans). The reads come after the buckets' upkeep has merged
 * what ingest appended; a fourth metric by `trace_id` makes the Prometheus scrape hold its
 * 10,000 series (§26's goal: within 1 s).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigSchema } from '../src/config/config.js';
import { ingestThroughApi } from './ingest.js';
import { type BenchServer, flag, fmt, percentile, startServer } from './lib.js';
import { API_QUERY_ENV, rangeOf } from './query.js';
import { requestReader, type ShipperFile, writeShipperFile } from './shipper-events.js';
import { rawSide } from './shipper-raw.js';

const MEMORY_LIMIT =
  process.env.LOGSCOPE_DUCKDB_MEMORY_LIMIT ??
  String((ConfigSchema.properties.duckdbMemoryLimit as { default?: string }).default);

const METRICS = [
  { name: 'errors_by_app', query: 'severity:error', labels: ['app'] },
  { name: 'bytes_by_host', kind: 'sum', field: 'bytes', labels: ['host'] },
  { name: 'bytes_quantiles', kind: 'quantiles', field: 'bytes', quantiles: [0.5, 0.99] },
  // A label of unique values: max_series (10,000 by default) series and `__other__`, for the
  // Prometheus scrape of 10,000 series (§26: within 1 s). Its series are not read.
  { name: 'lines_by_trace', labels: ['trace_id'] },
];
const READ = ['errors_by_app', 'bytes_by_host', 'bytes_quantiles'];
/** The buckets' upkeep (merging each append's rows) every this many seconds; reads wait for one. */
const UPKEEP_SECONDS = 10;

/** The raw engine's answer to each metric's series: the same figures by minute, by scanning. */
const RAW_SERIES: Record<string, (w: string) => string> = {
  errors_by_app: (w) =>
    `SELECT time_bucket(INTERVAL 1 minute, ts) AS m, app, count(*) FROM events WHERE ${w} AND severity = 'error' GROUP BY ALL`,
  bytes_by_host: (w) =>
    `SELECT time_bucket(INTERVAL 1 minute, ts) AS m, host, count(*), sum(bytes) FROM events WHERE ${w} GROUP BY ALL`,
  bytes_quantiles: (w) =>
    `SELECT time_bucket(INTERVAL 1 minute, ts) AS m, count(*), quantile_cont(bytes, [0.5, 0.99]) FROM events WHERE ${w} GROUP BY ALL`,
};

async function api(server: BenchServer, method: string, url: string, body?: object): Promise<unknown> {
  const res = await fetch(`${server.url}${url}`, {
    method,
    headers: { authorization: `token ${server.token}`, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const json = (await res.json()) as unknown;
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function timed(runs: number, f: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < runs + 2; i++) {
    const t0 = performance.now();
    await f();
    if (i >= 2) out.push(performance.now() - t0);
  }
  return out.sort((a, b) => a - b);
}

/**
 * `--many N`: N metrics of 5 labels each (§26's ingest goal: 50 of them at least 0.8× the
 * events a second of none), kinds and queries in turn.
 */
function many(n: number): Array<Record<string, unknown>> {
  const labels = ['host', 'app', 'severity', 'user', 'status'];
  const queries = ['', 'severity:error', 'app:api OR app:web', 'NOT severity:debug', 'status>=400'];
  const kinds = [{ kind: 'count' }, { kind: 'sum', field: 'bytes' }, { kind: 'quantiles', field: 'bytes' }];
  return Array.from({ length: n }, (_, i) => ({
    name: `many_${i}`,
    query: queries[i % queries.length],
    labels: [...labels.slice(i % 5), ...labels.slice(0, i % 5)],
    ...kinds[i % kinds.length],
  }));
}

async function load(file: ShipperFile, clients: number, metrics: ReadonlyArray<Record<string, unknown>>) {
  const withMetrics = metrics.length > 0;
  const server = await startServer({
    ...API_QUERY_ENV,
    LOGSCOPE_DUCKDB_MEMORY_LIMIT: MEMORY_LIMIT,
    LOGSCOPE_RETENTION_INTERVAL_SECONDS: String(UPKEEP_SECONDS),
  });
  const ids: Record<string, number> = {};
  for (const m of metrics)
    ids[m.name as string] = ((await api(server, 'POST', '/api/log-metrics', m)) as { id: number }).id;
  const reader = requestReader(file);
  try {
    const ingest = await ingestThroughApi(
      server,
      (r) => reader.body(r),
      file.events,
      file.batch,
      clients,
      withMetrics ? 'with metrics' : 'without',
    );
    return { server, ids, ingest };
  } catch (err) {
    await server.stop();
    rmSync(server.dataDir, { recursive: true, force: true });
    throw err;
  } finally {
    reader.close();
  }
}

export async function main(argv: string[]) {
  const total = flag(argv, 'events', 1_000_000);
  const clients = flag(argv, 'clients', 4);
  const batch = flag(argv, 'batch', 1000);
  const runs = flag(argv, 'runs', 9);
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD']).toString().trim();
  const work = mkdtempSync(path.join(tmpdir(), 'logscope-bench-log-metrics-'));
  try {
    const windowEnd = Date.now();
    const file = writeShipperFile(path.join(work, 'events.ndjson'), total, batch, false, windowEnd);
    console.log(
      `log-metrics bench at ${commit}: ${fmt(total)} shipper events, ${clients} clients × ${fmt(batch)}`,
    );
    const plain = await load(file, clients, []);
    await plain.server.stop();
    rmSync(plain.server.dataDir, { recursive: true, force: true });
    const manyMetrics = flag(argv, 'many', 0);
    if (manyMetrics > 0) {
      const counted = await load(file, clients, many(manyMetrics));
      await counted.server.stop();
      rmSync(counted.server.dataDir, { recursive: true, force: true });
      const a = plain.ingest.accepted / plain.ingest.seconds;
      const b = counted.ingest.accepted / counted.ingest.seconds;
      console.log(
        `\n| measure (${fmt(total)} events, ${commit}) | ${manyMetrics} metrics of 5 labels | none | ratio |`,
      );
      console.log('|---|---|---|---|');
      console.log(`| ingest (events/s) | ${fmt(b)} | ${fmt(a)} | ${fmt(b / a, 2)}× (goal ≥ 0.8×) |`);
      console.log(
        `| ack p99 (ms) | ${fmt(percentile(counted.ingest.latencies, 99))} | ${fmt(percentile(plain.ingest.latencies, 99))} | |`,
      );
      return;
    }
    const counted = await load(file, clients, METRICS);
    const { ts_from, ts_to } = rangeOf(windowEnd);
    const from = Math.floor(ts_from / 60) * 60;
    const to = Math.ceil(ts_to / 60) * 60;
    const reads: Record<string, number[]> = {};
    let timeline: number[] = [];
    let scrape: number[] = [];
    let scraped = { bytes: 0, lines: 0 };
    let errors = 0;
    try {
      // Reads after an upkeep has merged what ingest appended (a row per append and key).
      await new Promise((r) => setTimeout(r, (UPKEEP_SECONDS + 5) * 1000));
      const prometheus = async () => {
        const res = await fetch(`${counted.server.url}/api/log-metrics/prometheus`, {
          headers: { authorization: `Bearer ${counted.server.token}` },
        });
        if (!res.ok) throw new Error(`scrape: ${res.status}`);
        return res.text();
      };
      scrape = await timed(runs, prometheus);
      const text = await prometheus();
      scraped = { bytes: text.length, lines: text.split('\n').filter((l) => l && !l.startsWith('#')).length };
      for (const m of METRICS.filter((x) => READ.includes(x.name))) {
        const url = `/api/log-metrics/${counted.ids[m.name]}/series?from=${from}&to=${to}&step=60&limit=10000`;
        reads[m.name] = await timed(runs, () => api(counted.server, 'GET', url));
        if (m.name === 'errors_by_app') {
          const answer = (await api(counted.server, 'GET', url)) as {
            series: Array<{ total: { events: number } }>;
          };
          errors = answer.series.reduce((n, s) => n + s.total.events, 0);
        }
      }
      timeline = await timed(runs, () =>
        api(counted.server, 'POST', '/api/query', {
          type: 'Timeline',
          params: {
            query: 'severity:error',
            time_range: { ts_from, ts_to },
            interval: '1m',
            split_by: 'app',
          },
        }),
      );
    } finally {
      await counted.server.stop();
      rmSync(counted.server.dataDir, { recursive: true, force: true });
    }
    const raw = await rawSide(
      file,
      METRICS.filter((m) => READ.includes(m.name)).map((m) => ({
        name: m.name,
        sql: (w: string) => [(RAW_SERIES[m.name] as (w: string) => string)(w)],
      })),
      {
        runs,
        fromMs: from * 1000,
        toMs: to * 1000,
        dir: work,
        memoryLimit: MEMORY_LIMIT,
        countSql: (w) => `SELECT count(*) AS n FROM events WHERE ${w} AND severity = 'error'`,
      },
    );
    const p50 = (xs: number[]) => percentile(xs, 50);
    const a = plain.ingest.accepted / plain.ingest.seconds;
    const b = counted.ingest.accepted / counted.ingest.seconds;
    console.log(`\n| measure (${fmt(total)} events, ${commit}) | with metrics | without / raw | ratio |`);
    console.log('|---|---|---|---|');
    console.log(`| ingest (events/s) | ${fmt(b)} | ${fmt(a)} without | ${fmt(b / a, 2)}× |`);
    console.log(
      `| ack p99 (ms) | ${fmt(percentile(counted.ingest.latencies, 99))} | ${fmt(percentile(plain.ingest.latencies, 99))} without | |`,
    );
    for (const m of METRICS.filter((x) => READ.includes(x.name))) {
      const rawTimes = [...(raw.times[m.name] ?? [])].sort((x, y) => x - y);
      const s = p50(reads[m.name] ?? []);
      console.log(
        `| ${m.name}: 24 h by minute (ms p50) | ${fmt(s, 1)} | ${fmt(p50(rawTimes), 1)} raw scan | ${fmt(s / p50(rawTimes), 2)}× |`,
      );
    }
    console.log(
      `| the same errors as a Timeline through /api/query (ms p50) | ${fmt(p50(timeline), 1)} | | |`,
    );
    console.log(
      `| Prometheus scrape, ${fmt(scraped.lines)} samples, ${fmt(scraped.bytes)} bytes (ms p50 / max) | ${fmt(p50(scrape), 1)} / ${fmt(scrape[scrape.length - 1] ?? 0, 1)} | 1,000 goal | |`,
    );
    console.log(`\nerrors counted by the metric: ${fmt(errors)}; in the raw table: ${fmt(raw.rareCount)}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
