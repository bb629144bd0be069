import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  IDLE_CHECKPOINT_MS,
  IDLE_CHECKPOINT_WAL_BYTES,
} from '../src/event-store/duckdb/duckdb-maintenance.js';

export function flag(argv: string[], name: string, fallback: number): number {
  const i = argv.indexOf(`--${name}`);
  if (i === -1) return fallback;
  const v = Number(argv[i + 1]);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} needs a positive number`);
  return v;
}

/** `--name N` allowing 0 (a count that can switch something off). */
export function countFlag(argv: string[], name: string, fallback: number): number {
  const i = argv.indexOf(`--${name}`);
  if (i === -1) return fallback;
  const v = Number(argv[i + 1]);
  if (!Number.isInteger(v) || v < 0) throw new Error(`--${name} needs a count (0 switches it off)`);
  return v;
}

/** `--name value` as text, or undefined when absent. */
export function textFlag(argv: string[], name: string): string | undefined {
  const i = argv.indexOf(`--${name}`);
  if (i === -1) return undefined;
  const v = argv[i + 1];
  if (!v || v.startsWith('--')) throw new Error(`--${name} needs a value`);
  return v;
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

export const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

export interface BenchServer {
  url: string;
  token: string;
  dataDir: string;
  pid: number;
  /** Peak resident set of the server so far (VmHWM), bytes. */
  peakRss(): number;
  /** Resident set of the server now (VmRSS), bytes. */
  rss(): number;
  stop(): Promise<void>;
}

/**
 * A server's `GET /metrics` as sample name → value, for samples without labels. Scraping
 * also resets the event-loop delay histogram behind `logscope_nodejs_eventloop_lag_*`
 * (prom-client), so a scrape before and one after a phase give that phase's figures.
 */
export async function scrapeMetrics(server: Pick<BenchServer, 'url'>): Promise<Map<string, number>> {
  const res = await fetch(`${server.url}/metrics`);
  if (!res.ok) throw new Error(`/metrics answered ${res.status}`);
  const out = new Map<string, number>();
  for (const line of (await res.text()).split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*) (\S+)$/.exec(line);
    if (m) out.set(m[1] as string, Number(m[2]));
  }
  return out;
}

/** A `/proc/<pid>/status` figure given in kB (VmRSS, VmHWM…), in bytes. */
export function procStatus(pid: number, key: string): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
}

/**
 * CPU time (ms) a process has used, its main thread and all its threads apart (user +
 * system, from /proc): the main thread is the one whose id is the process's; the others
 * are worker threads, the engine's own and the runtime's helpers (GC, the libuv pool).
 */
export function cpuMs(pid: number): { main: number; all: number } {
  const perSecond = 100; // USER_HZ on Linux
  let main = 0;
  let all = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
    } catch {
      continue; // a thread that ended meanwhile
    }
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ms = ((Number(f[11]) + Number(f[12])) * 1000) / perSecond;
    all += ms;
    if (task === String(pid)) main = ms;
  }
  return { main, all };
}

let built = false;

/**
 * Compiles the server (and UI) as `npm start` does when a source changed, once per run:
 * benchmarks measure the build users run, not TypeScript compiled on the fly.
 */
export function buildOnce(): void {
  if (built) return;
  execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { stdio: 'inherit' });
  built = true;
}

/**
 * Waits until a server process answers `/api/health`; fails when it exits first or after
 * a minute, with the end of its output.
 */
export async function waitForHealth(
  url: string,
  child: ChildProcess,
  name: string,
  output: () => string,
): Promise<void> {
  const started = Date.now();
  for (;;) {
    try {
      if ((await fetch(`${url}/api/health`)).ok) return;
    } catch {
      // not up yet
    }
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${name} exited: ${output().slice(-500)}`);
    if (Date.now() - started > 60_000) throw new Error(`${name} did not start: ${output().slice(-500)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Node's flags for a server, as `npm start` and the systemd unit give them (the young
 * generation's size, the old generation's growth), then BENCH_SERVER_NODE_FLAGS (e.g. `--cpu-prof`).
 */
export function serverNodeFlags(): string[] {
  const extra = process.env.BENCH_SERVER_NODE_FLAGS ? process.env.BENCH_SERVER_NODE_FLAGS.split(' ') : [];
  return ['--max-semi-space-size=32', '--heap-growing-percent=50', ...extra];
}

/** Starts a real server process on a free port with a fresh data dir. */
export async function startServer(env: Record<string, string> = {}): Promise<BenchServer> {
  const dataDir = env.LOGSCOPE_DATA_DIR ?? mkdtempSync(path.join(tmpdir(), 'logscope-bench-'));
  const port = 18000 + Math.floor(Math.random() * 2000);
  buildOnce();
  const child = spawn(process.execPath, [...serverNodeFlags(), 'dist/cli/index.js', 'serve'], {
    env: {
      // As `npm start` and the systemd unit run it (fewer malloc arenas: less RSS).
      MALLOC_ARENA_MAX: '2',
      ...process.env,
      LOGSCOPE_PORT: String(port),
      LOGSCOPE_HOST: '127.0.0.1',
      LOGSCOPE_LOG_LEVEL: 'warn',
      LOGSCOPE_DATABASE_URL: '',
      ...env,
      LOGSCOPE_DATA_DIR: dataDir,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHealth(url, child, 'server', () => '');
  const token = readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
  const pid = child.pid as number;
  return {
    url,
    token,
    dataDir,
    pid,
    peakRss: () => procStatus(pid, 'VmHWM'),
    rss: () => procStatus(pid, 'VmRSS'),
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * Seconds until the data dir's WAL is under the size the store's idle checkpoint takes (or
 * gone), polled every 200 ms from when that checkpoint starts, for at most 5 minutes.
 */
export async function walSettled(dataDir: string): Promise<number> {
  const t0 = performance.now();
  const wal = path.join(dataDir, 'events.duckdb.wal');
  await new Promise((r) => setTimeout(r, IDLE_CHECKPOINT_MS + 500));
  while (performance.now() - t0 < 300_000) {
    if ((statSync(wal, { throwIfNoEntry: false })?.size ?? 0) < IDLE_CHECKPOINT_WAL_BYTES) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  return (performance.now() - t0) / 1000;
}

/** Bytes of a DuckDB file's write-ahead log (`<name>.wal` in `dir`), 0 when there is none. */
export const walBytes = (dir: string, name: string) => {
  const wal = path.join(dir, `${name}.wal`);
  return statSync(wal, { throwIfNoEntry: false })?.size ?? 0;
};

/** Prints a line at every tenth of the events. */
export function progressLine(label: string, total: number, t0: number, extra: () => string) {
  let next = 0.1;
  return (done: number) => {
    if (done < next * total) return;
    while (done >= next * total) next += 0.1;
    const s = (performance.now() - t0) / 1000;
    process.stderr.write(
      `  ${label}: ${fmt((done / total) * 100)} % (${fmt(done)} events, ${fmt(s, 1)} s, ${fmt(done / s)} events/s${extra()})\n`,
    );
  };
}

/** The loopback shards `scripts/ci/clickhouse.sh start` runs. */
const CI_CLICKHOUSE = 'clickhouse://default@127.0.0.1:18123,127.0.0.1:18124/logscope?cluster=logscope';

export interface BenchClickHouse {
  /** `eventStoreUrl` with the bench's own database. */
  url: string;
  database: string;
  /** Runs SQL on every listed server (DDL, drops). */
  onEach(sql: string): Promise<string[]>;
  /** Runs SQL on the first listed server only (reads, inserts into one shard). */
  onFirst(sql: string): Promise<string>;
}

/**
 * `--store clickhouse`: the ClickHouse to measure (`--clickhouse <url>`, else
 * LOGSCOPE_TEST_CLICKHOUSE_URL, else the loopback shards of scripts/ci/clickhouse.sh), with
 * the database `database`; undefined without `--store clickhouse`.
 */
export function benchClickHouse(argv: string[], database: string): BenchClickHouse | undefined {
  const store = textFlag(argv, 'store') ?? 'duckdb';
  if (store === 'duckdb') return undefined;
  if (store !== 'clickhouse') throw new Error('--store is duckdb or clickhouse');
  const base = textFlag(argv, 'clickhouse') ?? process.env.LOGSCOPE_TEST_CLICKHOUSE_URL ?? CI_CLICKHOUSE;
  const m = /^clickhouse:\/\/(?:([^@/]*)@)?([^/?]+)/.exec(base);
  if (!m) throw new Error(`not a clickhouse:// URL: ${base}`);
  const user = decodeURIComponent((m[1] ?? '').split(':')[0] || 'default');
  const hosts = (m[2] as string).split(',');
  const run = async (h: string, sql: string) => {
    const res = await fetch(`http://${h}/?user=${encodeURIComponent(user)}`, {
      method: 'POST',
      body: sql,
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`ClickHouse ${h}: ${text.slice(0, 300)}`);
    return text;
  };
  return {
    url: base.replace(/^(clickhouse:\/\/[^/]+)\/[^?]*/, `$1/${database}`),
    database,
    async onEach(sql) {
      const out: string[] = [];
      for (const h of hosts) out.push(await run(h, sql));
      return out;
    },
    onFirst: (sql) => run(hosts[0] as string, sql),
  };
}
