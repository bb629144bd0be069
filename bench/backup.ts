/**
 * `npm run bench -- backup [--events 1000000] [--rate 5000] [--seconds 20] [--clients 4]
 * [--batch 1000] [--idle 3]`: what online backups (docs/api/backups.md) cost ingest. One
 * fresh server (temp data dir, embedded stores, settings as shipped) takes `--events`
 * shipper events (bench/shipper-events.ts: NDJSON, in arrival order) as fast as it can, so
 * a backup has real work, and its WAL settles. Then the same steady ingest twice, `--rate`
 * events a second (request r sent when due, by the first free client), `--seconds` each:
 * A without a backup; B with backups back to back (`POST /api/admin/backups` into a fresh
 * folder outside the data dir, its job polled every 100 ms until it ends, then the next;
 * the one running when the load stops is waited for). Every request's acknowledgement time
 * is kept; an answer other than 2xx, or none, is a failure (not retried). The bound on
 * ingest during backups: p99(B) ≤ max(2 × p99(A), p99(A) + 25 ms), no failed request.
 *
 * Beside the raw engine: `--idle` backups with no load; then the server stops and raw
 * DuckDB opens its `events.duckdb` and copies the hot events as many times: `COPY (SELECT *
 * FROM events ORDER BY ts, ev_id) TO … (FORMAT parquet, COMPRESSION zstd)`. A backup's hot
 * copy is timed from its files: the first hot part's birth to the last one's mtime.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { ConfigSchema } from '../src/config/config-schema.js';
import { ingestThroughApi } from './ingest.js';
import {
  type BenchServer,
  countFlag,
  cpuMs,
  flag,
  fmt,
  percentile,
  scrapeMetrics,
  startServer,
  walSettled,
} from './lib.js';
import { requestReader, type ShipperFile, writeShipperFile } from './shipper-events.js';

/** The server's DuckDB memory limit (its default, or `LOGSCOPE_DUCKDB_MEMORY_LIMIT`), given to the raw engine too. */
const MEMORY_LIMIT =
  process.env.LOGSCOPE_DUCKDB_MEMORY_LIMIT ??
  String((ConfigSchema.properties.duckdbMemoryLimit as { default?: string }).default);
const POLL_MS = 100;

interface Ack {
  /** Sent, s into the phase. */
  at: number;
  ms: number;
}

export interface PacedLoad {
  acks: Ack[];
  latencies: number[]; // sorted, ms
  accepted: number;
  failures: Array<{ at: number; what: string }>;
  /** The most a request was sent after it was due (ms): the clients' lag behind the pace. */
  behindMs: number;
  seconds: number;
  /** The server's CPU over the phase (ms: all threads, the main thread) and its event-loop lag p99/max (ms). */
  cpu: { all: number; main: number };
  lag: { p99: number; max: number };
  peakRss: number; // VmHWM so far, bytes
  /** The ingest batcher's commits (the store's append, its write turn waited for included): mean ms. */
  commitMs: number;
}

export interface BackupRun {
  /** Asked, s into the phase. */
  at: number;
  /** The `POST`'s answer time (the instant is taken before the `202`), ms. */
  postMs: number;
  seconds: number;
  status: string;
  bytes: number;
  events: number;
  /** The hot parts' copy: from the first part's birth to the last part's mtime (s into the phase, and ms). */
  hot: { from: number; ms: number; bytes: number; parts: number } | null;
  error: string | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function call(server: BenchServer, method: string, url: string, body?: object) {
  const res = await fetch(`${server.url}${url}`, {
    method,
    headers: {
      authorization: `token ${server.token}`,
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/**
 * Requests `first`… of the file, one due every batch/rate seconds from now, each sent by the
 * first free client once due, for `seconds`.
 */
export async function pacedLoad(
  server: BenchServer,
  body: (r: number) => Buffer,
  first: number,
  o: {
    rate: number;
    seconds: number;
    batch: number;
    clients: number;
    label: string;
    /** Called with the phase's start (performance.now()) as the first request is due. */
    onStart?: (t0: number) => void;
  },
): Promise<PacedLoad> {
  const every = (o.batch / o.rate) * 1000;
  const requests = Math.floor((o.rate * o.seconds) / o.batch);
  const acks: Ack[] = [];
  const failures: PacedLoad['failures'] = [];
  let next = 0;
  let accepted = 0;
  let behindMs = 0;
  const before = await scrapeMetrics(server); // resets the event-loop delay histogram
  const cpu0 = cpuMs(server.pid);
  const t0 = performance.now();
  o.onStart?.(t0);
  const client = async () => {
    for (;;) {
      const r = next++;
      if (r >= requests) return;
      const due = t0 + r * every;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const sent = performance.now();
      behindMs = Math.max(behindMs, sent - due);
      const at = (sent - t0) / 1000;
      try {
        const res = await fetch(`${server.url}/api/ingest`, {
          method: 'POST',
          headers: { authorization: `token ${server.token}`, 'content-type': 'application/x-ndjson' },
          body: body(first + r),
        });
        const text = await res.text();
        const ms = performance.now() - sent;
        if (!res.ok) failures.push({ at, what: `${res.status} ${text.slice(0, 200)}` });
        else {
          accepted += (JSON.parse(text) as { accepted?: number }).accepted ?? 0;
          acks.push({ at, ms });
        }
      } catch (err) {
        failures.push({ at, what: (err as Error).message });
      }
      if (r % 20 === 0) process.stderr.write(`\r  ${o.label}: ${fmt(accepted)} events, ${fmt(at, 1)} s`);
    }
  };
  await Promise.all(Array.from({ length: o.clients }, client));
  const seconds = (performance.now() - t0) / 1000;
  const cpu1 = cpuMs(server.pid);
  const metrics = await scrapeMetrics(server);
  process.stderr.write('\n');
  const delta = (name: string) => (metrics.get(name) ?? Number.NaN) - (before.get(name) ?? Number.NaN);
  return {
    acks,
    latencies: acks.map((a) => a.ms).sort((a, b) => a - b),
    accepted,
    failures,
    behindMs,
    seconds,
    cpu: { all: cpu1.all - cpu0.all, main: cpu1.main - cpu0.main },
    lag: {
      p99: (metrics.get('logscope_nodejs_eventloop_lag_p99_seconds') ?? Number.NaN) * 1000,
      max: (metrics.get('logscope_nodejs_eventloop_lag_max_seconds') ?? Number.NaN) * 1000,
    },
    peakRss: server.peakRss(),
    commitMs: (delta('logscope_ingest_commit_seconds_total') * 1000) / delta('logscope_ingest_commits_total'),
  };
}

/** The hot parts' copy as the folder shows it (wall clock ms, birth of the first to mtime of the last). */
function hotCopy(dir: string): { from: number; to: number; bytes: number; parts: number } | null {
  const hot = path.join(dir, 'hot');
  let names: string[];
  try {
    names = readdirSync(hot).filter((n) => n.endsWith('.parquet'));
  } catch {
    return null;
  }
  if (!names.length) return null;
  const stats = names.map((n) => statSync(path.join(hot, n)));
  return {
    from: Math.min(...stats.map((s) => s.birthtimeMs || s.ctimeMs)),
    to: Math.max(...stats.map((s) => s.mtimeMs)),
    bytes: stats.reduce((n, s) => n + s.size, 0),
    parts: names.length,
  };
}

/**
 * One backup into `dir`, polled until it ends (`cancel`: cancelled as soon as it is
 * accepted, which leaves its instant and its metadata copy). `t0`: the phase's start.
 */
export async function oneBackup(server: BenchServer, dir: string, t0: number, cancel = false) {
  const asked = performance.now();
  const wall = Date.now() - asked; // performance.now() + wall = Date.now()
  const started = await call(server, 'POST', '/api/admin/backups', { path: dir });
  const postMs = performance.now() - asked;
  const at = (asked - t0) / 1000;
  const failed = (what: string, got: { status: number; json: unknown }) => ({
    status: what,
    error: `${got.status} ${JSON.stringify(got.json).slice(0, 300)}`,
  });
  let job: Record<string, unknown> = started.status === 202 ? started.json : failed('REFUSED', started);
  if (cancel && started.status === 202) await call(server, 'DELETE', `/api/admin/backups/${job.id}`);
  while (job.status === 'RUNNING') {
    await sleep(POLL_MS);
    const got = await call(server, 'GET', `/api/admin/backups/${started.json.id}`);
    job = got.status === 200 ? got.json : failed('UNKNOWN', got);
  }
  const seconds = (performance.now() - asked) / 1000;
  const counts = job.counts as { events: { hot: number; cold: number } } | null;
  const hot = hotCopy(dir);
  const run: BackupRun = {
    at,
    postMs,
    seconds,
    status: String(job.status),
    bytes: Number(job.bytes ?? 0),
    events: counts ? counts.events.hot + counts.events.cold : 0,
    hot: hot
      ? { from: (hot.from - wall - t0) / 1000, ms: hot.to - hot.from, bytes: hot.bytes, parts: hot.parts }
      : null,
    error: job.error ? (typeof job.error === 'string' ? job.error : JSON.stringify(job.error)) : null,
  };
  return run;
}

/** Backups one after another into fresh folders under `root` while `going()`; the last one is waited for. */
async function backToBack(
  server: BenchServer,
  root: string,
  t0: number,
  going: () => boolean,
): Promise<BackupRun[]> {
  const runs: BackupRun[] = [];
  while (going()) {
    const run = await oneBackup(server, path.join(root, `backup-${runs.length + 1}`), t0);
    runs.push(run);
    if (run.status !== 'DONE') await sleep(500);
  }
  return runs;
}

/**
 * B's acknowledgements by what ran meanwhile (the first that applies to the time from send to
 * answer): a backup's `POST` (its instant: the event store's write turn held while both
 * snapshots are pinned), its hot copy, the rest of its job (the metadata copy, the other
 * tables, hashing and syncing), or no backup.
 */
export function byOverlap(acks: Ack[], runs: BackupRun[]) {
  const overlaps = (a: Ack, from: number, to: number) => a.at < to && a.at + a.ms / 1000 > from;
  const classes: Array<[string, (a: Ack) => boolean]> = [
    ['a backup’s POST (the instant)', (a) => runs.some((r) => overlaps(a, r.at, r.at + r.postMs / 1000))],
    [
      'a hot copy',
      (a) => runs.some((r) => r.hot !== null && overlaps(a, r.hot.from, r.hot.from + r.hot.ms / 1000)),
    ],
    ['the rest of a backup', (a) => runs.some((r) => overlaps(a, r.at, r.at + r.seconds))],
    ['no backup', () => true],
  ];
  const out = classes.map(([name]) => ({ name, ms: [] as number[] }));
  for (const a of acks) out[classes.findIndex(([, test]) => test(a))]?.ms.push(a.ms);
  return out.map((c) => ({ ...c, ms: c.ms.sort((x, y) => x - y) }));
}

/** Raw DuckDB on the stopped server's events: the hot events' copy, `runs` times (ms), and its bytes. */
async function rawCopy(dataDir: string, work: string, runs: number) {
  const instance = await DuckDBInstance.create(path.join(dataDir, 'events.duckdb'), {
    access_mode: 'READ_ONLY',
    memory_limit: MEMORY_LIMIT,
  });
  const conn = await instance.connect();
  try {
    const rows = Number((await conn.runAndReadAll('SELECT count(*) AS n FROM events')).getRowObjects()[0]?.n);
    const times: number[] = [];
    let bytes = 0;
    for (let i = 0; i < runs; i++) {
      const file = path.join(work, `raw-${i}.parquet`);
      const t0 = performance.now();
      await conn.run(
        `COPY (SELECT * FROM events ORDER BY ts, ev_id) TO '${file}' (FORMAT parquet, COMPRESSION zstd)`,
      );
      times.push(performance.now() - t0);
      bytes = statSync(file).size;
      rmSync(file);
    }
    return { rows, times, bytes };
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

export async function main(argv: string[]) {
  const preload = flag(argv, 'events', 1_000_000);
  const rate = flag(argv, 'rate', 5000);
  const seconds = flag(argv, 'seconds', 20);
  const clients = flag(argv, 'clients', 4);
  const batch = flag(argv, 'batch', 1000);
  const idle = countFlag(argv, 'idle', 3);
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD']).toString().trim();
  const work = mkdtempSync(path.join(tmpdir(), 'logscope-bench-backup-'));
  const perPhase = Math.floor((rate * seconds) / batch);
  const preloadRequests = Math.ceil(preload / batch);
  const total = preloadRequests * batch + 2 * perPhase * batch;
  let server: BenchServer | null = null;
  try {
    const file: ShipperFile = writeShipperFile(
      path.join(work, 'events.ndjson'),
      total,
      batch,
      false,
      Date.now(),
    );
    const reader = requestReader(file);
    console.log(
      `backup bench at ${commit}: ${fmt(preloadRequests * batch)} shipper events preloaded, then ${fmt(rate)} events/s ` +
        `(${clients} clients × ${fmt(batch)} a request) for ${seconds} s without a backup (A) and ${seconds} s with backups back to back (B)`,
    );
    server = await startServer({ LOGSCOPE_DUCKDB_MEMORY_LIMIT: MEMORY_LIMIT });
    const s = server;
    const pre = await ingestThroughApi(
      s,
      (r) => reader.body(r),
      preloadRequests * batch,
      batch,
      clients,
      'preload',
    );
    const settle = await walSettled(s.dataDir);
    console.log(
      `preload: ${fmt(pre.accepted)} events at ${fmt(pre.accepted / pre.seconds)} events/s; WAL settled ${fmt(settle, 1)} s after`,
    );
    const body = (r: number) => reader.body(r);
    const o = { rate, seconds, batch, clients };
    const a = await pacedLoad(s, body, preloadRequests, { ...o, label: 'A, no backup' });
    await walSettled(s.dataDir);
    const root = mkdtempSync(path.join(work, 'b-'));
    let going = true;
    let backups: Promise<BackupRun[]> = Promise.resolve([]);
    const b = await pacedLoad(s, body, preloadRequests + perPhase, {
      ...o,
      label: 'B, backups',
      onStart: (t0) => {
        backups = backToBack(s, root, t0, () => going);
      },
    });
    going = false;
    const loadEnd = b.seconds;
    const runs = await backups;
    rmSync(root, { recursive: true, force: true });
    // Idle backups: the same store, nothing else running (beside the raw engine's copy).
    await walSettled(s.dataDir);
    const quiet: BackupRun[] = [];
    for (let i = 0; i < idle; i++) {
      const dir = path.join(work, `idle-${i}`);
      quiet.push(await oneBackup(s, dir, performance.now()));
      rmSync(dir, { recursive: true, force: true });
    }
    await s.stop();
    server = null;
    reader.close();
    const raw = idle ? await rawCopy(s.dataDir, work, idle) : null;
    rmSync(s.dataDir, { recursive: true, force: true });
    report({ commit, rate, seconds, a, b, runs, loadEnd, quiet, raw });
  } finally {
    if (server) {
      await server.stop();
      rmSync(server.dataDir, { recursive: true, force: true });
    }
    rmSync(work, { recursive: true, force: true });
  }
}

const mb = (bytes: number) => bytes / 1e6;
const median = (xs: number[]) =>
  percentile(
    [...xs].sort((x, y) => x - y),
    50,
  );

function report(o: {
  commit: string;
  rate: number;
  seconds: number;
  a: PacedLoad;
  b: PacedLoad;
  runs: BackupRun[];
  loadEnd: number;
  quiet: BackupRun[];
  raw: Awaited<ReturnType<typeof rawCopy>> | null;
}) {
  const { a, b, runs, quiet, raw } = o;
  const p = (l: PacedLoad, q: number) => percentile(l.latencies, q);
  const bound = Math.max(2 * p(a, 99), p(a, 99) + 25);
  const within = p(b, 99) <= bound;
  const done = runs.filter((r) => r.status === 'DONE');
  const bad = runs.filter((r) => r.status !== 'DONE');
  const bytes = done.reduce((n, r) => n + r.bytes, 0);
  const busy = done.reduce((n, r) => n + r.seconds, 0);
  const row = (cells: string[]) => console.log(`| ${cells.join(' | ')} |`);
  const perEvent = (l: PacedLoad, ms: number) => fmt((ms * 1000) / Math.max(1, l.accepted), 1);
  console.log(
    `\n| measure (${o.commit}, ${fmt(o.rate)} events/s, ${o.seconds} s each) | A: no backup | B: backups | B / A |`,
  );
  console.log('|---|---|---|---|');
  const both = (f: (l: PacedLoad) => string) => [f(a), f(b)];
  row(['requests acknowledged (failed)', ...both((l) => `${l.acks.length} (${l.failures.length})`), '']);
  for (const q of [50, 95, 99])
    row([`ack p${q} (ms)`, fmt(p(a, q), 1), fmt(p(b, q), 1), `${fmt(p(b, q) / p(a, q), 2)}×`]);
  row(['ack max (ms)', fmt(a.latencies.at(-1) ?? 0, 1), fmt(b.latencies.at(-1) ?? 0, 1), '']);
  row([
    "the store's commit, mean (ms)",
    fmt(a.commitMs, 1),
    fmt(b.commitMs, 1),
    `${fmt(b.commitMs / a.commitMs, 2)}×`,
  ]);
  row(['server peak RSS so far (MiB)', fmt(a.peakRss / 1048576), fmt(b.peakRss / 1048576), '']);
  row(['most behind the pace (ms)', fmt(a.behindMs, 1), fmt(b.behindMs, 1), '']);
  row(['event-loop lag p99 / max (ms)', ...both((l) => `${fmt(l.lag.p99, 1)} / ${fmt(l.lag.max, 1)}`), '']);
  row([
    'server CPU an event, all / main thread (µs)',
    ...both((l) => `${perEvent(l, l.cpu.all)} / ${perEvent(l, l.cpu.main)}`),
    `${fmt(b.cpu.all / a.cpu.all, 2)}×`,
  ]);
  console.log(
    `\np99(B) / p99(A) = ${fmt(p(b, 99) / p(a, 99), 2)}; bound max(2 × p99(A), p99(A) + 25 ms) = ${fmt(bound, 1)} ms: ` +
      `${within ? '✓ within' : '✗ NOT within'}; failed ingest requests in B: ${b.failures.length}${b.failures.length ? ' ✗' : ' ✓'}` +
      `; backups failed: ${bad.length}${bad.length ? ' ✗' : ' ✓'}`,
  );
  console.log(
    `backups in B: ${done.length} finished (the last ${fmt(Math.max(0, (runs.at(-1)?.at ?? 0) + (runs.at(-1)?.seconds ?? 0) - o.loadEnd), 1)} s after the load stopped), ` +
      `${fmt(mb(bytes), 1)} MB in ${fmt(busy, 1)} s: ${fmt(mb(bytes) / busy, 1)} MB/s`,
  );
  for (const [i, r] of runs.entries())
    console.log(
      `  ${i + 1}. at ${fmt(r.at, 1)} s: POST ${fmt(r.postMs, 1)} ms, ${r.status} in ${fmt(r.seconds, 2)} s, ${fmt(mb(r.bytes), 1)} MB, ` +
        `${fmt(r.events)} events${r.hot ? `; hot copy ${fmt(r.hot.from, 1)}–${fmt(r.hot.from + r.hot.ms / 1000, 1)} s (${r.hot.parts} parts, ${fmt(mb(r.hot.bytes), 1)} MB)` : ''}` +
        `${r.error ? `; ${r.error}` : ''}`,
    );
  console.log("B's acknowledgements by what overlapped them (n: p50 / p99 / max ms):");
  for (const c of byOverlap(b.acks, runs))
    if (c.ms.length)
      console.log(
        `  ${c.name}: ${c.ms.length}: ${fmt(percentile(c.ms, 50))} / ${fmt(percentile(c.ms, 99))} / ${fmt(c.ms.at(-1) ?? 0)}`,
      );
  for (const f of b.failures.slice(0, 10)) console.log(`  failed ingest at ${fmt(f.at, 1)} s: ${f.what}`);
  const slow = (l: PacedLoad) =>
    [...l.acks]
      .sort((x, y) => y.ms - x.ms)
      .slice(0, 8)
      .map((x) => `${fmt(x.at, 1)}: ${fmt(x.ms)}`)
      .join(', ');
  console.log(`slowest acknowledgements (s into the phase: ms), A: ${slow(a)}`);
  console.log(`                                                B: ${slow(b)}`);
  if (!raw || !quiet.length) return;
  const idleDone = quiet.filter((r) => r.status === 'DONE' && r.hot);
  const hotMs = idleDone.map((r) => r.hot?.ms ?? 0);
  const underLoad = done.filter((r) => r.hot).map((r) => r.hot?.ms ?? 0);
  console.log(`\n| beside the raw engine (${fmt(raw.rows)} hot events) | the backup | raw DuckDB | ratio |`);
  console.log('|---|---|---|---|');
  row([
    `hot events to Parquet, idle (ms; median of ${hotMs.length}: ${hotMs.map((x) => fmt(x)).join(', ')})`,
    fmt(median(hotMs)),
    `${fmt(median(raw.times))} (${raw.times.map((x) => fmt(x)).join(', ')})`,
    `${fmt(median(hotMs) / median(raw.times), 2)}×`,
  ]);
  row([
    'the same under the load of B (ms, median)',
    underLoad.length ? fmt(median(underLoad)) : '—',
    '',
    underLoad.length ? `${fmt(median(underLoad) / median(raw.times), 2)}×` : '',
  ]);
  row([
    'hot Parquet (MB)',
    fmt(mb(idleDone[0]?.hot?.bytes ?? 0), 1),
    fmt(mb(raw.bytes), 1),
    `${fmt((idleDone[0]?.hot?.bytes ?? 0) / raw.bytes, 2)}×`,
  ]);
  const whole = quiet.filter((r) => r.status === 'DONE');
  row([
    'whole backup, idle (s, median; MB/s)',
    `${fmt(median(whole.map((r) => r.seconds)), 2)}; ${fmt(mb(whole[0]?.bytes ?? 0) / median(whole.map((r) => r.seconds)), 1)} MB/s`,
    '',
    '',
  ]);
}
