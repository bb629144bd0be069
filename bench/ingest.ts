import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createClient } from '@clickhouse/client';
import { demoGenerator } from '../src/cli/demo-generator.js';
import { parseClickHouseUrl } from '../src/config/clickhouse-url.js';
import type { NormalisedEvent } from '../src/core/event.js';
import { newEventId } from '../src/core/ids.js';
import { ClickHouseEventStore } from '../src/event-store/clickhouse/clickhouse-event-store.js';
import { insertRow } from '../src/event-store/clickhouse/clickhouse-schema.js';
import { DuckDbEventStore } from '../src/event-store/duckdb/duckdb-event-store.js';
import { normaliseRecord } from '../src/ingest/normalise.js';
import { columnBytes } from './column-bytes.js';
import {
  type BenchClickHouse,
  type BenchServer,
  benchClickHouse,
  countFlag,
  cpuMs,
  flag,
  fmt,
  percentile,
  scrapeMetrics,
  startServer,
} from './lib.js';

/**
 * Ingest throughput: N events as HTTP NDJSON in 1,000-event requests from 4 concurrent
 * clients, beside the raw DuckDB DataChunk appender loading the same events.
 * Flags: --events N (default 10,000,000), --clients 4, --batch 1000, --pool 500 (distinct
 * request bodies generated up front and sent in turn, so client-side JSON work does not
 * compete with the server for the two cores), --triggers 100 (a second API run with that many
 * enabled triggers; 0 skips it), --store clickhouse (adds the API on ClickHouse and raw
 * ClickHouse inserts; --clickhouse <url>, default the loopback shards of
 * scripts/ci/clickhouse.sh).
 */
/** 100 (or `count`) realistic triggers over the demo data: keyed, text, regex and CIDR ones. */
export function benchTriggers(count: number): Array<Record<string, unknown>> {
  const paths = [
    '/',
    '/login',
    '/admin',
    '/api/v1/orders',
    '/api/v1/users',
    '/api/v1/cart',
    '/.env',
    '/wp-login.php',
  ];
  const users = ['root', 'admin', 'oracle', 'test', 'alice', 'bob', 'mallory', 'ivan'];
  const apps = ['checkout', 'inventory', 'payments', 'search', 'notifications'];
  const ports = [22, 3306, 5432, 6379, 3389, 8080];
  const texts = [
    'Deadlock detected',
    'Out of memory',
    'Timeout after',
    'Connection refused',
    'Certificate verify failed',
    'wp-login.php',
    '.env',
    'invalid user',
    'NullPointerException',
    'unexpected token',
  ];
  const all: Array<Record<string, unknown>> = [
    ...paths.map((p) => ({ name: `5xx on ${p}`, query: `app:nginx AND status:>=500 AND http.path:"${p}"` })),
    ...paths.map((p) => ({
      name: `404 on ${p}`,
      filter: [
        ['app', 'eq', 'nginx'],
        ['status', 'eq', 404],
        ['http.path', 'eq', p],
      ],
    })),
    ...users.map((u) => ({ name: `failed login ${u}`, query: `user:${u} AND action:login_failure` })),
    ...users.map((u) => ({ name: `bastion ${u}`, query: `app:sshd AND user:${u} AND "from 10."` })),
    ...ports.map((p) => ({ name: `deny ${p}`, query: `app:firewall AND dst_port:${p} AND action:deny` })),
    ...ports.map((p) => ({ name: `internal ${p}`, query: `src_ip:10.0.0.0/8 AND dst_port:${p}` })),
    ...apps.map((a) => ({ name: `${a} critical`, query: `app:${a} AND severity:critical` })),
    ...apps.map((a) => ({ name: `${a} timeout`, query: `app:${a} AND "timeout"` })),
    ...texts.map((t) => ({ name: `text ${t}`, query: `"${t}"` })),
    { name: 'root or admin failures', query: 'message:/Failed password for (root|admin) from/' },
    { name: 'scanner agents', query: 'http.user_agent:/(?i)(sqlmap|nikto|masscan)/' },
    { name: 'big responses', query: 'bytes:>80000' },
    { name: 'slow requests', query: 'http.duration_ms:>1500' },
    ...[1, 2, 3, 4].map((h) => ({ name: `web-${h} errors`, query: `host:web-${h} AND severity:error` })),
    ...[1, 2].map((h) => ({
      name: `bastion-${h} failures`,
      query: `host:bastion-${h} AND action:login_failure`,
    })),
    ...users.map((u) => ({ name: `app user ${u}`, query: `user:${u} AND severity:error` })),
    ...apps.map((a) => ({ name: `${a} refused`, query: `app:${a} AND "refused"` })),
    ...['deny-22', 'deny-3389', 'deny-3306', 'deny-6379'].map((r) => ({
      name: `rule ${r}`,
      query: `rule:${r} AND app:firewall`,
    })),
  ];
  for (let i = 0; all.length < count; i++) all.push({ ...all[i % all.length], name: `copy ${i}` });
  return all.slice(0, count);
}

/** Creates `count` of {@link benchTriggers} on a server (all enabled). */
export async function addTriggers(server: BenchServer, count: number): Promise<void> {
  for (const t of benchTriggers(count)) {
    const res = await fetch(`${server.url}/api/triggers`, {
      method: 'POST',
      headers: { authorization: `token ${server.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(t),
    });
    if (res.status !== 201)
      throw new Error(`trigger ${JSON.stringify(t)}: ${res.status} ${await res.text()}`);
  }
}

/**
 * `poolSize` requests of `batch` demo records, their times spread evenly over the 24 hours
 * before `windowEnd` (now), so a run sending them in turn covers the day once per pass.
 */
export function demoPool(
  batch: number,
  poolSize: number,
): { records: Array<Array<Record<string, unknown>>>; windowEnd: number } {
  const gen = demoGenerator(42);
  const windowEnd = Date.now();
  const start = windowEnd - 86_400_000;
  const records: Array<Array<Record<string, unknown>>> = [];
  for (let b = 0; b < poolSize; b++) {
    records.push(
      Array.from({ length: batch }, (_, i) =>
        gen.next(start + Math.floor(((b * batch + i) / (poolSize * batch)) * 86_400_000)),
      ),
    );
  }
  return { records, windowEnd };
}

/** One NDJSON request body. */
export const ndjson = (records: Array<Record<string, unknown>>) =>
  `${records.map((r) => JSON.stringify(r)).join('\n')}\n`;

/** Bytes of the event store's files (`events.duckdb` and its WAL) in a data dir. */
export function storeBytes(dataDir: string): number {
  return readdirSync(dataDir)
    .filter((f) => f.startsWith('events.duckdb'))
    .reduce((s, f) => s + statSync(path.join(dataDir, f)).size, 0);
}

export interface ApiIngest {
  accepted: number;
  seconds: number;
  /** Time from sending a request to its acknowledgement (ms), sorted. */
  latencies: number[];
  /** The slowest acknowledgements (at most 16), slowest first: when sent (s into the load) and ms. */
  slowest: Array<{ at: number; ms: number }>;
}

/** Where and how requests are sent: `POST /api/ingest` NDJSON unless given (e.g. `_bulk`). */
export interface IntakeRequests {
  path: string;
  contentType: string;
  /** Events a `2xx` answer stored. */
  accepted(answer: unknown): number;
}

const NDJSON_INTAKE: IntakeRequests = {
  path: '/api/ingest',
  contentType: 'application/x-ndjson',
  accepted: (answer) => (answer as { accepted?: number }).accepted ?? 0,
};

/**
 * Sends `total` events to a running server's `POST /api/ingest` as `bodies` in turn (or
 * request r's body from `bodies(r)`), from `clients` concurrent clients (a `503` is retried
 * after 50 ms and counted in the latency). `options.intake` sends elsewhere (`_bulk`);
 * `options.progress` replaces the progress line (called after each request).
 */
export async function ingestThroughApi(
  server: BenchServer,
  bodies: string[] | ((r: number) => string | Uint8Array),
  total: number,
  batch: number,
  clients: number,
  label = 'api',
  options: { intake?: IntakeRequests; progress?: (accepted: number, request: number) => void } = {},
): Promise<ApiIngest> {
  const requests = Math.ceil(total / batch);
  const intake = options.intake ?? NDJSON_INTAKE;
  const bodyOf = typeof bodies === 'function' ? bodies : (r: number) => bodies[r % bodies.length] as string;
  let next = 0;
  let accepted = 0;
  const latencies: number[] = [];
  const slowest: ApiIngest['slowest'] = [];
  const t0 = performance.now();
  const client = async () => {
    for (;;) {
      const r = next++;
      if (r >= requests) return;
      const body = bodyOf(r);
      const sent = performance.now();
      for (;;) {
        const res = await fetch(`${server.url}${intake.path}`, {
          method: 'POST',
          headers: { authorization: `token ${server.token}`, 'content-type': intake.contentType },
          body,
        });
        const json = (await res.json()) as unknown;
        if (res.status === 503) {
          await new Promise((ok) => setTimeout(ok, 50));
          continue;
        }
        if (!res.ok) throw new Error(`ingest answered ${res.status}: ${JSON.stringify(json).slice(0, 500)}`);
        accepted += intake.accepted(json);
        break;
      }
      const ms = performance.now() - sent;
      latencies.push(ms);
      if (slowest.length < 16 || ms > (slowest.at(-1)?.ms ?? 0)) {
        slowest.push({ at: (sent - t0) / 1000, ms });
        slowest.sort((a, b) => b.ms - a.ms);
        slowest.length = Math.min(slowest.length, 16);
      }
      if (options.progress) options.progress(accepted, r);
      else if (r % 500 === 0) process.stderr.write(`\r  ${label}: ${fmt(accepted)} events`);
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  const seconds = (performance.now() - t0) / 1000;
  if (!options.progress) process.stderr.write('\n');
  latencies.sort((a, b) => a - b);
  return { accepted, seconds, latencies, slowest };
}

interface ApiRun extends ApiIngest {
  rate: number;
  /** The server's event-loop lag while it ingested (s): p99 and max, from /metrics. */
  lag: { p99: number; max: number };
  peakRss: number;
  bytesOnDisk: number;
  stopSeconds: number;
  /** Where the DuckDB store's bytes go, per table and column (none on ClickHouse). */
  columns: Awaited<ReturnType<typeof columnBytes>>;
  /** The server's CPU time while it ingested, per event (µs): its main thread, and all threads. */
  cpu: { main: number; all: number };
}

/**
 * Ingests `total` events through the HTTP API of a fresh server with `triggers` enabled;
 * with `ch`, the server keeps its events in that ClickHouse (a fresh database).
 */
async function runApi(
  bodies: string[],
  total: number,
  batch: number,
  clients: number,
  triggers: number,
  ch?: BenchClickHouse,
  env: Record<string, string> = {},
): Promise<ApiRun> {
  if (ch) await ch.onEach(`DROP DATABASE IF EXISTS ${ch.database}`);
  const server = await startServer({ ...(ch ? { LOGSCOPE_EVENT_STORE_URL: ch.url } : {}), ...env });
  await addTriggers(server, triggers);
  const label = `api${ch ? ' on ClickHouse' : ''} (${triggers} triggers${env.LOGSCOPE_PATTERN_MINING ? ', no mining' : ''})`;
  // A scrape resets the server's event-loop delay histogram: the next covers the ingest.
  await scrapeMetrics(server);
  const cpu0 = cpuMs(server.pid);
  const run = await ingestThroughApi(server, bodies, total, batch, clients, label);
  const cpu1 = cpuMs(server.pid);
  const cpu = {
    main: ((cpu1.main - cpu0.main) * 1000) / run.accepted,
    all: ((cpu1.all - cpu0.all) * 1000) / run.accepted,
  };
  const metrics = await scrapeMetrics(server);
  const lag = {
    p99: metrics.get('logscope_nodejs_eventloop_lag_p99_seconds') ?? Number.NaN,
    max: metrics.get('logscope_nodejs_eventloop_lag_max_seconds') ?? Number.NaN,
  };
  const peakRss = server.peakRss();
  // Stopping waits for the trigger matches still being recorded.
  const t1 = performance.now();
  await server.stop();
  const stopSeconds = (performance.now() - t1) / 1000;
  const bytesOnDisk = ch ? await clickHouseBytes(ch) : storeBytes(server.dataDir);
  const columns = ch
    ? []
    : await columnBytes(path.join(server.dataDir, 'events.duckdb'), ['events', 'word_blocks']);
  rmSync(server.dataDir, { recursive: true, force: true });
  if (ch) await ch.onEach(`DROP DATABASE IF EXISTS ${ch.database}`);
  return { ...run, rate: run.accepted / run.seconds, lag, peakRss, bytesOnDisk, stopSeconds, columns, cpu };
}

/** Bytes of the bench database's active parts on every server. */
async function clickHouseBytes(ch: BenchClickHouse): Promise<number> {
  const each = await ch.onEach(
    `SELECT sum(bytes_on_disk) FROM system.parts WHERE database = '${ch.database}' AND active`,
  );
  return each.reduce((s, text) => s + Number(text.trim() || 0), 0);
}

/**
 * The raw engine on ClickHouse: the same normalised events inserted by the official client
 * in `rawBatch`-row inserts (JSONEachRow, synchronous on the shards) into the table the
 * store creates; events/s and bytes per event.
 */
export async function rawClickHouse(
  ch: BenchClickHouse,
  events: NormalisedEvent[],
  total: number,
  rawBatch: number,
): Promise<{ rate: number; seconds: number; bytesPerEvent: number }> {
  await ch.onEach(`DROP DATABASE IF EXISTS ${ch.database}`);
  const store = await ClickHouseEventStore.open({ url: ch.url });
  await store.close();
  const target = parseClickHouseUrl(ch.url);
  const client = createClient({ url: target.hosts[0], username: target.username, password: target.password });
  const t0 = performance.now();
  for (let done = 0; done < total; ) {
    const n = Math.min(rawBatch, total - done);
    const from = done % events.length;
    const slice = events.slice(from, from + n);
    const storedAt = Date.now();
    await client.insert({
      table: `${target.database}.events`,
      values: slice.map((e) => insertRow(e, storedAt)),
      format: 'JSONEachRow',
      ...(target.cluster ? { clickhouse_settings: { insert_distributed_sync: 1 } } : {}),
    });
    done += slice.length;
    if ((done / rawBatch) % 25 === 0) process.stderr.write(`\r  raw ClickHouse: ${fmt(done)} events`);
  }
  const seconds = (performance.now() - t0) / 1000;
  process.stderr.write('\n');
  await client.close();
  const bytes = await clickHouseBytes(ch);
  await ch.onEach(`DROP DATABASE IF EXISTS ${ch.database}`);
  return { rate: total / seconds, seconds, bytesPerEvent: bytes / total };
}

export async function main(argv: string[]) {
  const total = flag(argv, 'events', 10_000_000);
  const clients = flag(argv, 'clients', 4);
  const batch = flag(argv, 'batch', 1000);
  const poolSize = Math.min(flag(argv, 'pool', 500), Math.ceil(total / batch));
  const ch = benchClickHouse(argv, 'bench_ingest');
  // On ClickHouse the measure is the store: triggers (the same work on either) are off unless asked.
  const triggerCount = countFlag(argv, 'triggers', ch ? 0 : 100);
  console.log(
    `ingest bench: ${fmt(total)} events, ${clients} clients, ${batch}/request, ${poolSize} distinct bodies`,
  );

  const { records: poolRecords } = demoPool(batch, poolSize);
  const bodies = poolRecords.map(ndjson);
  const avgBody = bodies.reduce((s, b) => s + b.length, 0) / bodies.length;
  console.log(`average record: ${fmt(avgBody / batch)} bytes of JSON`);

  // --- end to end through the API, without triggers and with them
  const plain = await runApi(bodies, total, batch, clients, 0);
  // The same without pattern mining (docs/api/patterns.md: its cost is measured beside it).
  const unmined = await runApi(bodies, total, batch, clients, 0, undefined, {
    LOGSCOPE_PATTERN_MINING: 'false',
  });
  const triggered = triggerCount > 0 ? await runApi(bodies, total, batch, clients, triggerCount) : null;
  const onClickHouse = ch ? await runApi(bodies, total, batch, clients, 0, ch) : null;

  // --- the raw engine: the same events, normalised up front, appended in 20,000-row batches
  const rawDir = mkdtempSync(path.join(tmpdir(), 'logscope-bench-raw-'));
  const store = await DuckDbEventStore.open({
    dataDir: rawDir,
    memoryLimit: '512MB',
    checkpointThreshold: '256MB',
  });
  const receivedAt = Date.now();
  const ctx = { receivedAt, intake: 'bench', newId: () => newEventId(receivedAt) };
  const poolEvents: NormalisedEvent[] = poolRecords.flat().map((r) => {
    const n = normaliseRecord(r, ctx);
    if (!n.ok) throw new Error(n.detail);
    return n.event;
  });
  const rawBatch = 20_000;
  // The most a commit can hold through the API: each client waits for its acknowledgement
  // (durability first), so at most clients × batch events are ever pending. The raw
  // engine is also timed at that size, the floor for an API that acknowledges after commit.
  const pendingMax = clients * batch;
  const appendAll = async (target: DuckDbEventStore, size: number, label: string): Promise<number> => {
    const t1 = performance.now();
    for (let done = 0; done < total; ) {
      const n = Math.min(size, total - done);
      const from = done % poolEvents.length;
      const slice = poolEvents.slice(from, from + n);
      await target.append(slice);
      done += slice.length;
      if (done % 500_000 < size) process.stderr.write(`\r  ${label}: ${fmt(done)} events`);
    }
    process.stderr.write('\n');
    return (performance.now() - t1) / 1000;
  };
  const rawCpu0 = cpuMs(process.pid);
  const rawSeconds = await appendAll(store, rawBatch, 'raw');
  const rawCpu = ((cpuMs(process.pid).all - rawCpu0.all) * 1000) / total;
  await store.close();
  const smallDir = mkdtempSync(path.join(tmpdir(), 'logscope-bench-raw-'));
  const small = await DuckDbEventStore.open({
    dataDir: smallDir,
    memoryLimit: '512MB',
    checkpointThreshold: '256MB',
  });
  const rawSmallSeconds =
    pendingMax < rawBatch ? await appendAll(small, pendingMax, `raw, ${fmt(pendingMax)}-row appends`) : null;
  await small.close();
  rmSync(smallDir, { recursive: true, force: true });
  const rawCh = ch ? await rawClickHouse(ch, poolEvents, total, rawBatch) : null;
  const rawChSmall =
    ch && pendingMax < rawBatch ? await rawClickHouse(ch, poolEvents, total, pendingMax) : null;
  const rawBytes = storeBytes(rawDir);
  rmSync(rawDir, { recursive: true, force: true });

  const rawRate = total / rawSeconds;
  const report = (label: string, run: ApiRun) => {
    console.log(
      `${label} ${fmt(run.rate)} events/s (${fmt(run.accepted)} in ${fmt(run.seconds, 1)} s), ratio to raw ${fmt(run.rate / rawRate, 2)}`,
    );
    console.log(
      `  ack latency p50 ${fmt(percentile(run.latencies, 50))} ms, p99 ${fmt(percentile(run.latencies, 99))} ms; ` +
        `event-loop lag p99 ${fmt(run.lag.p99 * 1000, 1)} ms, max ${fmt(run.lag.max * 1000)} ms (goal p99 ≤ 50); ` +
        `${fmt(run.bytesOnDisk / run.accepted, 1)} bytes/event on disk; peak RSS ${fmt(run.peakRss / 1048576)} MiB; ` +
        `stop ${fmt(run.stopSeconds, 1)} s`,
    );
    console.log(
      `  CPU per event: ${fmt(run.cpu.all, 1)} µs in all threads, ${fmt(run.cpu.main, 1)} µs of them on the main thread (the raw appender: ${fmt(rawCpu, 1)} µs)`,
    );
  };
  console.log('');
  report('API, no triggers:              ', plain);
  const perEvent = (b: number) => fmt(b / plain.accepted, 2);
  console.log(
    `  bytes/event by column (the word index is word_blocks.bloom): ${plain.columns
      .filter((c) => c.bytes / plain.accepted >= 0.1)
      .map(
        (c) =>
          `${c.table === 'events' ? '' : `${c.table}.`}${c.column} ${perEvent(c.bytes)} (${c.compression})`,
      )
      .join(', ')}`,
  );
  report('API, no triggers, no mining:   ', unmined);
  console.log(
    `with mining / without:          ${fmt(plain.rate / unmined.rate, 3)} (goal >= 0.95); ${fmt((1 / plain.rate - 1 / unmined.rate) * 1e6, 2)} µs per event`,
  );
  if (triggered) {
    report(`API, ${triggerCount} enabled triggers:     `, triggered);
    console.log(`with triggers / without:        ${fmt(triggered.rate / plain.rate, 2)} (goal >= 0.80)`);
  }
  console.log(
    `raw DuckDB appender:            ${fmt(rawRate)} events/s (${fmt(total)} in ${fmt(rawSeconds, 1)} s; ${fmt(rawBytes / total, 1)} bytes/event)`,
  );
  if (rawSmallSeconds !== null)
    console.log(
      `raw DuckDB, ${fmt(pendingMax)}-row appends:    ${fmt(total / rawSmallSeconds)} events/s (the largest commit ${clients} clients × ${fmt(batch)} allow); API / this: ${fmt(plain.rate / (total / rawSmallSeconds), 2)}`,
    );
  if (onClickHouse && rawCh && ch) {
    console.log('');
    console.log(`ClickHouse (${ch.url.replace(/\/\/[^@/]*@/, '//')}):`);
    console.log(
      `API on ClickHouse:              ${fmt(onClickHouse.rate)} events/s (${fmt(onClickHouse.accepted)} in ${fmt(onClickHouse.seconds, 1)} s), ratio to raw ClickHouse ${fmt(onClickHouse.rate / rawCh.rate, 2)}, to the API on DuckDB ${fmt(onClickHouse.rate / plain.rate, 2)}`,
    );
    console.log(
      `  ack latency p50 ${fmt(percentile(onClickHouse.latencies, 50))} ms, p99 ${fmt(percentile(onClickHouse.latencies, 99))} ms; ` +
        `${fmt(onClickHouse.bytesOnDisk / onClickHouse.accepted, 1)} bytes/event on the shards; server peak RSS ${fmt(onClickHouse.peakRss / 1048576)} MiB`,
    );
    console.log(
      `raw ClickHouse inserts:         ${fmt(rawCh.rate)} events/s (${fmt(total)} in ${fmt(rawCh.seconds, 1)} s, ${fmt(rawBatch)}-row JSONEachRow inserts; ${fmt(rawCh.bytesPerEvent, 1)} bytes/event)`,
    );
    if (rawChSmall)
      console.log(
        `raw ClickHouse, ${fmt(pendingMax)}-row inserts: ${fmt(rawChSmall.rate)} events/s (the largest insert ${clients} clients × ${fmt(batch)} allow); API / this: ${fmt(onClickHouse.rate / rawChSmall.rate, 2)}`,
      );
  }
}
