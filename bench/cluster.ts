import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import WebSocket from 'ws';
import type { NormalisedEvent } from '../src/core/event.js';
import { newUlid } from '../src/core/ids.js';
import { ClickHouseEventStore } from '../src/event-store/clickhouse/clickhouse-event-store.js';
import { topnSql } from '../src/event-store/clickhouse/clickhouse-plans.js';
import { SYSTEM_SCOPE } from '../src/event-store/read-scope.js';
import { normaliseRecord } from '../src/ingest/normalise.js';
import { resolveTimeRange } from '../src/query/time-range.js';
import { QUERY_TYPE_DEFS } from '../src/query/types/index.js';
import { validateQuery } from '../src/query/validate.js';
import { type ApiIngest, demoPool, ingestThroughApi, ndjson, rawClickHouse } from './ingest.js';
import {
  type BenchClickHouse,
  type BenchServer,
  benchClickHouse,
  buildOnce,
  flag,
  fmt,
  percentile,
  procStatus,
  serverNodeFlags,
  textFlag,
  waitForHealth,
} from './lib.js';

/**
 * Cluster mode: `logscope serve` processes sharing PostgreSQL (metadata), ClickHouse
 * (events) and Redis (the bus). Each run has a PostgreSQL schema, a ClickHouse database and
 * a Redis channel of its own, dropped at the end; the nodes run the built server (`dist/`).
 *
 * Measured, each beside its reference from the same run:
 * 1. Ingest: N demo events as NDJSON requests of 1,000 from C concurrent clients, all to
 *    node 1 running alone, then split evenly over two nodes: events/s, ack latency, and the
 *    CPU (/proc utime+stime) of each node, of the ClickHouse servers, of this process and
 *    of the whole machine (/proc/stat), to tell where the bottleneck is. Reference: the same
 *    events inserted straight into ClickHouse by the official client (bench/ingest.ts), in a database of their own.
 * 2. No acknowledged event lost: clients on both nodes, node 2 killed with SIGKILL after
 *    --kill-after ms; its clients stop at their first error (a request that failed was never
 *    acknowledged). Every request carries its own tag (field `bench_req`), so ClickHouse,
 *    asked directly, tells how many events of each acknowledged request it holds.
 * 3. Takeover: a TopN over H rows inserted straight into one shard (seconds of ClickHouse
 *    work) and a CSV report of it, made on node 2, which is SIGKILLed 300 ms later; time from
 *    the kill until node 1 shows the query SUCCESS and the report READY (goal ≤ 10 s: a 3 s
 *    lease, adoption every second, then the computation again). Node 2 runs there with
 *    querySyncMs 0, so both requests answer at once and the kill lands mid-computation.
 *    References: the same pair on node 1 with nobody killed (time from the requests), the
 *    query alone there, and the ClickHouse SQL the server compiles for it run straight.
 * 4. Live updates across nodes: S websockets on node 1, subscribed to Q relative Search
 *    queries for `wsprobe`; one event `wsprobe <i>` ingested on node 2 every 300 ms, P
 *    times: per subscriber, time from sending the ingest request to the first widget-update
 *    showing it (goal p99 ≤ 1 s; none missing after 5 s). Reference: the same with the
 *    ingest on node 1 itself (same-node delivery).
 * They run in the order 1, 4, 2, 3 (node 2 is killed in 2, started again for 3).
 *
 * Flags: --events 400000, --clients 4 (at least 2), --batch 1000, --pool 100 (distinct
 * request bodies, generated up front), --raw-batch 20000 (rows per raw ClickHouse insert),
 * --kill-after 1500 (ms), --heavy-rows 4000000, --subscribers 500, --queries 10, --probes 20;
 * --clickhouse <url> (default LOGSCOPE_TEST_CLICKHOUSE_URL, else the loopback shards of
 * scripts/ci/clickhouse.sh), --pg <url> (default LOGSCOPE_TEST_DATABASE_URL, else
 * postgres://root@127.0.0.1:5432/test), --redis <url> (default LOGSCOPE_TEST_REDIS_URL,
 * else redis://127.0.0.1:6379/0).
 */

const CLK_TCK = 100; // Linux USER_HZ: /proc/<pid>/stat counts CPU time in 1/100 s
const GOAL_TAKEOVER_MS = 10_000;
const GOAL_P99_MS = 1000;
const PROBE_EVERY_MS = 300;
const PROBE_WAIT_MS = 5000;
const HEAVY_FROM = 1714557600; // 2024-05-01T10:00:00Z, seconds: far from the demo events

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface ClusterNode extends BenchServer {
  name: string;
  child: ChildProcess;
  exited: Promise<void>;
}

/** What the run started and made, for the clean-up. */
interface Resources {
  children: ChildProcess[];
  dirs: string[];
  sockets: WebSocket[];
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

/**
 * Starts a node (the built server) with a fresh data dir and `env`; `token` null: the
 * first node, which bootstraps the admin and writes its token into its data dir.
 */
async function startNode(
  name: string,
  env: Record<string, string>,
  token: string | null,
  res: Resources,
): Promise<ClusterNode> {
  buildOnce();
  const dataDir = mkdtempSync(path.join(tmpdir(), `logscope-bench-${name.replace(/\W/g, '')}-`));
  res.dirs.push(dataDir);
  const port = await freePort();
  const child = spawn(process.execPath, [...serverNodeFlags(), 'dist/cli/index.js', 'serve'], {
    env: { ...process.env, ...env, LOGSCOPE_DATA_DIR: dataDir, LOGSCOPE_PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  res.children.push(child);
  let output = '';
  const keep = (d: Buffer) => {
    output = (output + String(d)).slice(-2000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const url = `http://127.0.0.1:${port}`;
  await waitForHealth(url, child, name, () => output);
  const pid = child.pid as number;
  return {
    name,
    url,
    token: token ?? readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim(),
    dataDir,
    pid,
    child,
    exited,
    peakRss: () => procStatus(pid, 'VmHWM'),
    rss: () => procStatus(pid, 'VmRSS'),
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Kills a node with SIGKILL; resolves once it is gone. */
async function kill9(node: ClusterNode): Promise<number> {
  process.kill(node.pid, 'SIGKILL');
  const at = performance.now();
  await node.exited;
  return at;
}

/** CPU ticks (utime+stime) of a process; NaN once it is gone. */
function cpuTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]); // utime, stime (fields 14 and 15)
  } catch {
    return Number.NaN;
  }
}

/** The ClickHouse server processes on this machine (their CPU, if they run here). */
function clickHousePids(): number[] {
  try {
    return execFileSync('pgrep', ['-f', 'clickhouse-server'], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number)
      .filter((pid) => pid !== process.pid && Number.isFinite(cpuTicks(pid)));
  } catch {
    return [];
  }
}

/** CPU ticks the whole machine spent busy (not idle, not waiting for I/O), from /proc/stat. */
function machineBusyTicks(): number {
  const first = readFileSync('/proc/stat', 'utf8').split('\n')[0] as string;
  const f = first.trim().split(/\s+/).slice(1, 9).map(Number);
  return f.reduce((s, v) => s + v, 0) - (f[3] as number) - (f[4] as number);
}

interface CpuUse {
  wall: number;
  /** CPU seconds per label (ClickHouse summed over its servers; `bench` is this process). */
  cpu: Array<[string, number]>;
  /** CPU seconds of the whole machine, and of the processes not listed (other runs, PostgreSQL, Redis). */
  machine: number;
  others: number;
}

/** Starts counting CPU time of the labelled processes and of this one; the result stops it. */
function watchCpu(procs: Array<[string, number[]]>): () => CpuUse {
  const ticks = (pids: number[]) => pids.reduce((s, pid) => s + cpuTicks(pid), 0);
  const t0 = procs.map(([, pids]) => ticks(pids));
  const own0 = process.cpuUsage();
  const m0 = machineBusyTicks();
  const w0 = performance.now();
  return () => {
    const own = process.cpuUsage(own0);
    const cpu: Array<[string, number]> = [
      ...procs.map(([label, pids], i): [string, number] => [
        label,
        (ticks(pids) - (t0[i] as number)) / CLK_TCK,
      ]),
      ['bench', (own.user + own.system) / 1e6],
    ];
    const machine = (machineBusyTicks() - m0) / CLK_TCK;
    const listed = cpu.reduce((s, [, v]) => s + (Number.isFinite(v) ? v : 0), 0);
    return { wall: (performance.now() - w0) / 1000, cpu, machine, others: Math.max(0, machine - listed) };
  };
}

const cpuLine = (u: CpuUse) => {
  const pct = (s: number) => `${fmt(s, 1)} s (${fmt((s / u.wall) * 100)} %)`;
  return `CPU in ${fmt(u.wall, 1)} s: ${u.cpu
    .filter(([, s]) => Number.isFinite(s))
    .map(([label, s]) => `${label} ${pct(s)}`)
    .join(', ')}, other processes ${pct(u.others)}; whole machine ${pct(u.machine)} of 200 %`;
};

interface Answer<T> {
  status: number;
  json: T;
}

async function api<T>(
  node: Pick<BenchServer, 'url' | 'token'>,
  method: string,
  p: string,
  body?: unknown,
): Promise<Answer<T>> {
  const res = await fetch(`${node.url}${p}`, {
    method,
    headers: {
      authorization: `token ${node.token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await res.json()) as T;
  if (res.status >= 400)
    throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
  return { status: res.status, json };
}

/** Events in the cluster's table, read on the first shard through the distributed table. */
async function storedCount(ch: BenchClickHouse): Promise<number> {
  return Number((await ch.onFirst(`SELECT count() FROM ${ch.database}.events`)).trim());
}

interface IngestRun extends ApiIngest {
  rate: number;
  stored: number;
  use: CpuUse;
  peakRss: number[];
}

/** `total` events through the API, clients split evenly over `nodes` (events in proportion). */
async function ingestPhase(
  label: string,
  nodes: ClusterNode[],
  chPids: number[],
  ch: BenchClickHouse,
  bodies: string[],
  total: number,
  batch: number,
  clients: number,
): Promise<IngestRun> {
  const before = await storedCount(ch);
  const stop = watchCpu([...nodes.map((n): [string, number[]] => [n.name, [n.pid]]), ['ClickHouse', chPids]]);
  const share = nodes.map(
    (_, i) => Math.floor(clients / nodes.length) + (i < clients % nodes.length ? 1 : 0),
  );
  let left = total;
  const runs = await Promise.all(
    nodes.map((node, i) => {
      const events = i === nodes.length - 1 ? left : Math.round((total * (share[i] as number)) / clients);
      left -= events;
      // Each node's clients start at their own place in the pool.
      const at = Math.floor((i * bodies.length) / nodes.length);
      const turned = [...bodies.slice(at), ...bodies.slice(0, at)];
      return ingestThroughApi(node, turned, events, batch, share[i] as number, `${label}: ${node.name}`);
    }),
  );
  const use = stop();
  const accepted = runs.reduce((s, r) => s + r.accepted, 0);
  const latencies = runs.flatMap((r) => r.latencies).sort((a, b) => a - b);
  return {
    accepted,
    seconds: use.wall,
    latencies,
    slowest: runs
      .flatMap((r) => r.slowest)
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 16),
    rate: accepted / use.wall,
    stored: (await storedCount(ch)) - before,
    use,
    peakRss: nodes.map((n) => n.peakRss()),
  };
}

interface KillRun {
  acknowledged: number;
  ackedRequests: number;
  storedOfAcked: number;
  duplicates: number;
  perNode: number[];
  /** Requests cut by the kill (never acknowledged) and how many of their events were stored anyway. */
  cut: number;
  cutStored: number;
  seconds: number;
}

/**
 * Clients on both nodes for `killAfter` + 2 s; node 2 is SIGKILLed at `killAfter`, its
 * clients stop at their first error. Each request's events carry `bench_req: k<n>`.
 */
async function killMidIngest(
  nodes: [ClusterNode, ClusterNode],
  ch: BenchClickHouse,
  lines: string[][],
  clients: number,
  killAfter: number,
): Promise<KillRun> {
  const acked = new Map<number, number>();
  const cut: number[] = [];
  const perNode = [0, 0];
  let next = 0;
  let killed = false;
  const t0 = performance.now();
  const end = t0 + killAfter + 2000;
  const client = async (n: 0 | 1) => {
    const node = nodes[n];
    while (performance.now() < end) {
      const r = next++;
      const tag = `{"bench_req":"k${r}",`;
      const body = `${(lines[r % lines.length] as string[]).map((l) => tag + l.slice(1)).join('\n')}\n`;
      for (;;) {
        try {
          const res = await fetch(`${node.url}/api/ingest`, {
            method: 'POST',
            headers: { authorization: `token ${node.token}`, 'content-type': 'application/x-ndjson' },
            body,
          });
          const json = (await res.json()) as { accepted?: number };
          if (res.status === 503) {
            await sleep(50);
            continue;
          }
          if (!res.ok) throw new Error(`ingest answered ${res.status}: ${JSON.stringify(json)}`);
          acked.set(r, json.accepted ?? 0);
          perNode[n] = (perNode[n] as number) + (json.accepted ?? 0);
        } catch (err) {
          if (n === 0 || !killed) throw err;
          cut.push(r);
          return;
        }
        break;
      }
    }
  };
  const timer = setTimeout(() => {
    killed = true;
    process.kill(nodes[1].pid, 'SIGKILL');
  }, killAfter);
  try {
    const half = Math.ceil(clients / 2);
    await Promise.all(Array.from({ length: clients }, (_, i) => client(i < half ? 0 : 1)));
  } finally {
    clearTimeout(timer);
  }
  const seconds = (performance.now() - t0) / 1000;
  if (!killed) throw new Error('the run ended before the kill');
  await nodes[1].exited;
  const stored = new Map<string, number>();
  const text = await ch.onFirst(
    `SELECT fields.value[indexOf(fields.key, 'bench_req')] AS r, count() FROM ${ch.database}.events WHERE has(fields.key, 'bench_req') GROUP BY r FORMAT TabSeparated`,
  );
  for (const line of text.split('\n').filter(Boolean)) {
    const [r, n] = line.split('\t');
    stored.set(r as string, Number(n));
  }
  let acknowledged = 0;
  let storedOfAcked = 0;
  let duplicates = 0;
  for (const [r, n] of acked) {
    const s = stored.get(`k${r}`) ?? 0;
    acknowledged += n;
    storedOfAcked += Math.min(s, n);
    duplicates += Math.max(0, s - n);
  }
  return {
    acknowledged,
    ackedRequests: acked.size,
    storedOfAcked,
    duplicates,
    perNode,
    cut: cut.length,
    cutStored: cut.reduce((s, r) => s + (stored.get(`k${r}`) ?? 0), 0),
    seconds,
  };
}

interface Heavy {
  query: { type: string; params: Record<string, unknown> };
  /** The report's request; null: the query alone. */
  report: Record<string, unknown> | null;
}

interface PairRun {
  /** ms from the requests (reference) or from the kill until node 1 shows each done; NaN: never. */
  queryMs: number;
  reportMs: number;
  /** The same, from the requests. */
  queryFromStartMs: number;
  reportFromStartMs: number;
  /** What the creating node answered at first. */
  queryStatus: string;
  reportError: string | null;
  reportLines: number;
}

/**
 * The raw engine's share of the heavy query: the ClickHouse SQL the server compiles for it,
 * run straight on the cluster's table by the store's client; ms of each of `runs` runs.
 */
async function rawTopN(ch: BenchClickHouse, query: Heavy['query'], runs: number): Promise<number[]> {
  const v = validateQuery(query);
  const plan = QUERY_TYPE_DEFS[v.type].plan(
    v.params,
    v.filter,
    resolveTimeRange(v.params.time_range, Date.now()),
  );
  if (plan.kind !== 'topn') throw new Error(`expected a TopN plan, got ${plan.kind}`);
  const { sql, totals } = topnSql(`"${ch.database}"."events"`, { ...plan, scope: SYSTEM_SCOPE });
  const store = await ClickHouseEventStore.open({ url: ch.url });
  try {
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      await store.runSql(sql, totals);
      times.push(performance.now() - t0);
    }
    return times;
  } finally {
    await store.close();
  }
}

/**
 * The heavy query and its report made on `on`; with `victim` (= `on`), that node is
 * SIGKILLed 300 ms after both answered. Node 1 is polled every 100 ms until both are done.
 */
async function queryAndReport(
  on: ClusterNode,
  watch: ClusterNode,
  heavy: Heavy,
  victim: ClusterNode | null,
): Promise<PairRun> {
  const t0 = performance.now();
  const [q, r] = await Promise.all([
    api<{ query_id: string; status: string }>(on, 'POST', '/api/query', heavy.query),
    heavy.report ? api<{ id: number; status: string }>(on, 'POST', '/api/reports', heavy.report) : null,
  ]);
  const qid = q.json.query_id;
  const rid = r?.json.id;
  let from = t0;
  if (victim) {
    await sleep(300);
    from = await kill9(victim);
  }
  let queryAt = q.json.status === 'SUCCESS' && !victim ? performance.now() : Number.NaN;
  let reportAt = Number.NaN;
  let reportError: string | null = r ? null : 'no report';
  while (
    (Number.isNaN(queryAt) || (Number.isNaN(reportAt) && !reportError)) &&
    performance.now() - from < 30_000
  ) {
    if (Number.isNaN(queryAt)) {
      const got = await api<{ status: string }>(watch, 'GET', `/api/query/${qid}`);
      if (got.json.status === 'SUCCESS') queryAt = performance.now();
      else if (got.json.status === 'ERROR' || got.json.status === 'STOPPED')
        throw new Error(`the heavy query ended ${got.json.status}`);
    }
    if (Number.isNaN(reportAt) && !reportError) {
      const got = await api<{ status: string; error?: string | null }>(watch, 'GET', `/api/reports/${rid}`);
      if (got.json.status === 'READY') reportAt = performance.now();
      else if (got.json.status === 'ERROR') reportError = got.json.error ?? 'ERROR';
    }
    await sleep(100);
  }
  let reportLines = 0;
  if (r && !Number.isNaN(reportAt)) {
    const file = await fetch(`${watch.url}/api/reports/${rid}/file`, {
      headers: { authorization: `token ${watch.token}` },
    });
    reportLines = (await file.text()).split('\n').filter(Boolean).length;
  }
  return {
    queryMs: queryAt - from,
    reportMs: reportAt - from,
    queryFromStartMs: queryAt - t0,
    reportFromStartMs: reportAt - t0,
    queryStatus: q.json.status,
    reportError,
    reportLines,
  };
}

interface Subscriber {
  ws: WebSocket;
  /** Probes this subscriber has seen (by number). */
  seen: Set<number>;
  first: Promise<void>;
}

interface Probe {
  needle: Buffer;
  sent: number;
}

/** Subscribers on node 1 and what they measure: delivery of the probes of the current run. */
class LiveProbe {
  subs: Subscriber[] = [];
  /** The current run's probes by number; a sample is taken only within PROBE_WAIT_MS of the send. */
  active = new Map<number, Probe>();
  samples: number[] = [];

  constructor(private readonly sockets: WebSocket[]) {}

  async open(node: ClusterNode, queryIds: string[], count: number): Promise<number> {
    const url = `${node.url.replace('http', 'ws')}/ws/live-updates?token=${encodeURIComponent(node.token)}`;
    const t0 = performance.now();
    for (let i = 0; i < count; i += 100) {
      const made = await Promise.all(
        Array.from({ length: Math.min(100, count - i) }, (_, k) =>
          this.subscribe(url, queryIds[(i + k) % queryIds.length] as string),
        ),
      );
      this.subs.push(...made);
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(this.subs.map((s) => s.first)),
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error('not every subscriber got a first widget-update in 30 s')),
          30_000,
        );
      }),
    ]);
    clearTimeout(timer);
    return (performance.now() - t0) / 1000;
  }

  private subscribe(url: string, queryId: string): Promise<Subscriber> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      this.sockets.push(ws);
      let gotFirst: () => void = () => undefined;
      const sub: Subscriber = { ws, seen: new Set(), first: new Promise<void>((r) => (gotFirst = r)) };
      ws.on('error', reject);
      ws.on('message', (data: Buffer) => {
        if (data[2] === 0x77 /* ["widget-update" */) {
          gotFirst();
          this.onUpdate(sub, data);
        } else if (data[2] === 0x73 /* ["subscribed" */) resolve(sub);
        else if (data[2] === 0x65 /* ["error" */) reject(new Error(String(data)));
      });
      ws.once('open', () => ws.send(JSON.stringify(['subscribe', { query_id: queryId }])));
    });
  }

  private onUpdate(sub: Subscriber, data: Buffer) {
    if (!this.active.size) return;
    const now = performance.now();
    for (const [i, p] of this.active) {
      if (sub.seen.has(i) || now - p.sent > PROBE_WAIT_MS || !data.includes(p.needle)) continue;
      sub.seen.add(i);
      this.samples.push(now - p.sent);
    }
  }

  /**
   * `probes` events `wsprobe <first..>`, one every PROBE_EVERY_MS, ingested on `target`;
   * per (probe, subscriber) the delivery time, Infinity when none came within PROBE_WAIT_MS.
   */
  async run(target: ClusterNode, first: number, probes: number): Promise<number[]> {
    this.samples = [];
    this.active.clear();
    let lastSent = 0;
    for (let i = first; i < first + probes; i++) {
      const sent = performance.now();
      this.active.set(i, { needle: Buffer.from(`wsprobe ${i}"`), sent });
      lastSent = sent;
      const res = await fetch(`${target.url}/api/ingest`, {
        method: 'POST',
        headers: { authorization: `token ${target.token}`, 'content-type': 'application/x-ndjson' },
        body: `${JSON.stringify({ message: `wsprobe ${i}` })}\n`,
      });
      if (!res.ok) throw new Error(`probe ingest answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
      await sleep(Math.max(0, sent + PROBE_EVERY_MS - performance.now()));
    }
    const pairs = probes * this.subs.length;
    while (this.samples.length < pairs && performance.now() - lastSent < PROBE_WAIT_MS) await sleep(50);
    this.active.clear();
    const out = [...this.samples];
    while (out.length < pairs) out.push(Number.POSITIVE_INFINITY);
    return out.sort((a, b) => a - b);
  }
}

const ms = (v: number) =>
  Number.isFinite(v) ? `${fmt(v)} ms` : v > 0 ? `> ${fmt(PROBE_WAIT_MS / 1000)} s` : 'n/a';
const secs = (v: number) => (Number.isFinite(v) ? `${fmt(v / 1000, 1)} s` : 'never (30 s)');

export async function main(argv: string[]) {
  const total = flag(argv, 'events', 400_000);
  const clients = flag(argv, 'clients', 4);
  if (clients < 2) throw new Error('--clients needs at least 2 (they are split over two nodes)');
  const batch = flag(argv, 'batch', 1000);
  const poolSize = Math.min(flag(argv, 'pool', 100), Math.ceil(total / batch));
  const rawBatch = flag(argv, 'raw-batch', 20_000);
  const killAfter = flag(argv, 'kill-after', 1500);
  const heavyRows = flag(argv, 'heavy-rows', 4_000_000);
  const subscribers = flag(argv, 'subscribers', 500);
  const queryCount = Math.min(40, flag(argv, 'queries', 10));
  const probes = flag(argv, 'probes', 20);
  const pgUrl =
    textFlag(argv, 'pg') ?? (process.env.LOGSCOPE_TEST_DATABASE_URL || 'postgres://root@127.0.0.1:5432/test');
  const redisUrl =
    textFlag(argv, 'redis') ??
    (process.env.LOGSCOPE_TEST_REDIS_URL || process.env.LOGSCOPE_TEST_BUS_URL || 'redis://127.0.0.1:6379/0');

  const name = `b_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const chArgs = ['--store', 'clickhouse', ...argv];
  const ch = benchClickHouse(chArgs, name) as BenchClickHouse;
  const chRaw = benchClickHouse(chArgs, `${name}_raw`) as BenchClickHouse;
  console.log(
    `cluster bench: ${fmt(total)} events, ${clients} clients, ${fmt(batch)}/request, ${poolSize} distinct bodies; ` +
      `kill after ${fmt(killAfter)} ms; ${fmt(heavyRows)} heavy rows; ${fmt(subscribers)} subscribers over ${queryCount} queries, ${probes} probes`,
  );
  console.log(
    `PostgreSQL ${pgUrl.replace(/\/\/[^@/]*@/, '//')} (schema ${name}), ClickHouse ${ch.url.replace(/\/\/[^@/]*@/, '//')}, Redis ${redisUrl.replace(/\/\/[^@/]*@/, '//')} (channel ${name})`,
  );

  const res: Resources = { children: [], dirs: [], sockets: [] };
  let schemaMade = false;
  const cleanUp = async () => {
    for (const ws of res.sockets) ws.terminate();
    await Promise.all(
      res.children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGKILL');
        await gone;
      }),
    );
    const steps: Array<[string, () => Promise<unknown>]> = [
      ['ClickHouse database', () => ch.onEach(`DROP DATABASE IF EXISTS ${ch.database}`)],
      ['ClickHouse raw database', () => chRaw.onEach(`DROP DATABASE IF EXISTS ${chRaw.database}`)],
    ];
    if (schemaMade)
      steps.push([
        'PostgreSQL schema',
        async () => {
          const c = new pg.Client({ connectionString: pgUrl });
          await c.connect();
          try {
            await c.query(`drop schema if exists ${name} cascade`);
          } finally {
            await c.end();
          }
        },
      ]);
    for (const [what, step] of steps) {
      try {
        await step();
      } catch (err) {
        console.error(`clean-up: could not drop the ${what}: ${(err as Error).message}`);
      }
    }
    for (const dir of res.dirs) rmSync(dir, { recursive: true, force: true });
  };
  // Once, whichever asks first (Ctrl-C, or the end of the run).
  let cleaning: Promise<void> | null = null;
  const cleanup = () => {
    cleaning ??= cleanUp();
    return cleaning;
  };
  // Ctrl-C: no finally runs; clean up here.
  const onSigint = () => {
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSigint);

  try {
    const c = new pg.Client({ connectionString: pgUrl });
    await c.connect();
    try {
      await c.query(`create schema ${name}`);
      schemaMade = true;
    } finally {
      await c.end();
    }
    const sep = pgUrl.includes('?') ? '&' : '?';
    const shared: Record<string, string> = {
      LOGSCOPE_DATABASE_URL: `${pgUrl}${sep}options=${encodeURIComponent(`-c search_path=${name}`)}`,
      LOGSCOPE_EVENT_STORE_URL: ch.url,
      LOGSCOPE_BUS_URL: `${redisUrl}${redisUrl.includes('?') ? '&' : '?'}channel=${name}`,
      LOGSCOPE_HOST: '127.0.0.1',
      LOGSCOPE_LOG_LEVEL: 'warn',
      LOGSCOPE_SYSLOG_PORT: '0',
      LOGSCOPE_QUERY_LIVE_PER_USER: String(queryCount + 20),
    };
    const load0 = loadavg()[0] as number;
    const chPids = clickHousePids();

    const { records } = demoPool(batch, poolSize);
    const bodies = records.map(ndjson);
    const lines = bodies.map((b) => b.trimEnd().split('\n'));

    // --- 1. ingest: node 1 alone, then two nodes
    const n1 = await startNode('node 1', shared, null, res);
    const token = n1.token;
    const one = await ingestPhase('one node', [n1], chPids, ch, bodies, total, batch, clients);
    let n2 = await startNode('node 2', shared, token, res);
    const two = await ingestPhase('two nodes', [n1, n2], chPids, ch, bodies, total, batch, clients);
    const receivedAt = Date.now();
    const ctx = { receivedAt, intake: 'bench', newId: () => newUlid(receivedAt) };
    const poolEvents: NormalisedEvent[] = records.flat().map((r) => {
      const n = normaliseRecord(r, ctx);
      if (!n.ok) throw new Error(n.detail);
      return n.event;
    });
    const stopRaw = watchCpu([['ClickHouse', chPids]]);
    const raw = await rawClickHouse(chRaw, poolEvents, total, rawBatch);
    const rawUse = stopRaw();

    console.log('');
    console.log('1. ingest (demo events, NDJSON)');
    const ingestLine = (label: string, run: IngestRun, ref: string) => {
      console.log(
        `${label} ${fmt(run.rate)} events/s (${fmt(run.accepted)} in ${fmt(run.seconds, 1)} s; ${fmt(run.stored)} stored), ${ref}`,
      );
      console.log(
        `  ack p50 ${fmt(percentile(run.latencies, 50))} ms, p99 ${fmt(percentile(run.latencies, 99))} ms; peak RSS ${run.peakRss.map((b) => `${fmt(b / 1048576)} MiB`).join(' / ')}`,
      );
      console.log(`  ${cpuLine(run.use)}`);
    };
    ingestLine(
      'one node, all clients on it:  ',
      one,
      `ratio to raw ClickHouse ${fmt(one.rate / raw.rate, 2)}`,
    );
    ingestLine(
      'two nodes, clients split:      ',
      two,
      `two / one ${fmt(two.rate / one.rate, 2)}, ratio to raw ClickHouse ${fmt(two.rate / raw.rate, 2)}`,
    );
    console.log(
      `raw ClickHouse inserts:         ${fmt(raw.rate)} events/s (${fmt(total)} in ${fmt(raw.seconds, 1)} s, ${fmt(rawBatch)}-row JSONEachRow inserts from this process)`,
    );
    console.log(`  ${cpuLine(rawUse)}`);

    // --- 4. websocket delivery across nodes (both nodes up; before the kills)
    const queryIds: string[] = [];
    for (let q = 0; q < queryCount; q++) {
      const made = await api<{ query_id: string }>(n1, 'POST', '/api/query', {
        type: 'Search',
        params: { time_range: { preset: 'last_hour' }, query: 'wsprobe' },
      });
      queryIds.push(made.json.query_id);
    }
    const live = new LiveProbe(res.sockets);
    const subscribeSeconds = await live.open(n1, queryIds, subscribers);
    await sleep(1000);
    process.stderr.write(`  websockets: probes ingested on node 2\n`);
    const liveUse = watchCpu([
      ['node 1', [n1.pid]],
      ['node 2', [n2.pid]],
    ]);
    const cross = await live.run(n2, 1, probes);
    const crossUse = liveUse();
    await sleep(1000);
    process.stderr.write(`  websockets: probes ingested on node 1\n`);
    const same = await live.run(n1, 1 + probes, probes);
    for (const ws of res.sockets) ws.terminate();
    res.sockets.length = 0;
    const missed = (l: number[]) => l.filter((v) => !Number.isFinite(v)).length;

    // --- 2. SIGKILL of node 2 mid-ingest
    process.stderr.write(`  kill mid-ingest: node 2 killed after ${fmt(killAfter)} ms\n`);
    const killed = await killMidIngest([n1, n2], ch, lines, clients, killAfter);

    // --- 3. takeover of a running query and report
    const heavyRange = { ts_from: HEAVY_FROM, ts_to: HEAVY_FROM + Math.ceil(heavyRows / 1000) + 3600 };
    const heavyQuery = { type: 'TopN', params: { time_range: heavyRange, field: 'ev_id', n: 10 } };
    const heavy: Heavy = {
      query: heavyQuery,
      report: { title: 'heavy', ftype: 'csv', source: { kind: 'query', query: heavyQuery } },
    };
    const ins0 = performance.now();
    await ch.onFirst(
      `INSERT INTO ${ch.database}.events_local (ev_id, ts, received_at, stored_at, message) SELECT concat('h', toString(number)), ${HEAVY_FROM * 1000} + number, ${HEAVY_FROM * 1000} + number, ${HEAVY_FROM * 1000}, concat('heavy ', toString(number)) FROM system.numbers LIMIT ${heavyRows}`,
    );
    const insertSeconds = (performance.now() - ins0) / 1000;
    n2 = await startNode('node 2', { ...shared, LOGSCOPE_QUERY_SYNC_MS: '0' }, token, res);
    process.stderr.write(`  takeover: references (raw SQL; the query alone and with its report on node 1)\n`);
    const rawHeavy = await rawTopN(ch, heavyQuery, 2);
    const alone = await queryAndReport(n1, n1, { query: heavyQuery, report: null }, null);
    const ref = await queryAndReport(n1, n1, heavy, null);
    process.stderr.write(`  takeover: made on node 2, killed 300 ms later\n`);
    const take = await queryAndReport(n2, n1, heavy, n2);

    // --- report
    console.log('');
    console.log('2. SIGKILL of node 2 mid-ingest');
    console.log(
      `acknowledged: ${fmt(killed.acknowledged)} events in ${fmt(killed.ackedRequests)} requests (${fmt(killed.perNode[0] as number)} by node 1, ${fmt(killed.perNode[1] as number)} by node 2) in ${fmt(killed.seconds, 1)} s`,
    );
    console.log(
      `stored of acknowledged: ${fmt(killed.storedOfAcked)}; lost: ${fmt(killed.acknowledged - killed.storedOfAcked)} (goal 0)${killed.duplicates ? `; stored twice: ${fmt(killed.duplicates)}` : ''}`,
    );
    console.log(
      `requests cut by the kill (never acknowledged): ${killed.cut}, ${fmt(killed.cutStored)} of their events stored anyway`,
    );

    console.log('');
    console.log(
      `3. takeover after SIGKILL (TopN over ${fmt(heavyRows)} rows inserted in ${fmt(insertSeconds, 1)} s, and a CSV report of it)`,
    );
    console.log(
      `raw ClickHouse, the query's SQL run straight: ${rawHeavy.map((t) => secs(t)).join(', then ')}`,
    );
    console.log(
      `reference, node 1, nobody killed: the query alone SUCCESS in ${secs(alone.queryFromStartMs)} (${fmt(alone.queryFromStartMs / Math.min(...rawHeavy), 1)}× raw); with its report at once: query SUCCESS in ${secs(ref.queryFromStartMs)}, report READY in ${secs(ref.reportFromStartMs)} (${fmt(ref.reportLines)} lines)`,
    );
    console.log(
      `made on node 2 (query answered ${take.queryStatus}), killed 300 ms later: on node 1 query SUCCESS ${secs(take.queryMs)} after the kill, report ${take.reportError ? `ERROR (${take.reportError})` : `READY ${secs(take.reportMs)} after the kill (${fmt(take.reportLines)} lines)`}`,
    );
    console.log(
      `  from the requests: query ${secs(take.queryFromStartMs)}, report ${secs(take.reportFromStartMs)}: the kill cost ${secs(take.queryFromStartMs - ref.queryFromStartMs)} and ${secs(take.reportFromStartMs - ref.reportFromStartMs)} over the unkilled pair (${fmt(take.queryFromStartMs / ref.queryFromStartMs, 1)}×, ${fmt(take.reportFromStartMs / ref.reportFromStartMs, 1)}×)`,
    );

    console.log('');
    console.log(
      `4. live updates: ${fmt(live.subs.length)} websockets on node 1 over ${queryCount} Search queries (subscribed, first update in ${fmt(subscribeSeconds, 1)} s), ${probes} probes every ${PROBE_EVERY_MS} ms`,
    );
    const liveLine = (label: string, l: number[]) =>
      console.log(
        `${label} p50 ${ms(percentile(l, 50))}, p99 ${ms(percentile(l, 99))}, max ${ms(l.at(-1) ?? Number.NaN)} over ${fmt(l.length)} deliveries; ${fmt(missed(l))} never within ${fmt(PROBE_WAIT_MS / 1000)} s`,
      );
    liveLine('ingest on node 2 (across nodes):', cross);
    liveLine('ingest on node 1 (same node):   ', same);
    console.log(
      `  across / same node: p50 ${fmt(percentile(cross, 50) / percentile(same, 50), 2)}×, p99 ${fmt(percentile(cross, 99) / percentile(same, 99), 2)}×`,
    );
    console.log(`  ${cpuLine(crossUse)} (across-nodes run)`);

    // --- summary
    const crossP99 = percentile(cross, 99);
    const lost = killed.acknowledged - killed.storedOfAcked;
    const met = (ok: boolean) => (ok ? 'MET' : 'NOT MET');
    const rows: string[][] = [
      ['measure', 'figure', 'reference', 'ratio', 'goal'],
      [
        'ingest, one node',
        `${fmt(one.rate)} ev/s, ack p99 ${fmt(percentile(one.latencies, 99))} ms`,
        `raw ClickHouse ${fmt(raw.rate)} ev/s`,
        `${fmt(one.rate / raw.rate, 2)}`,
        '',
      ],
      [
        'ingest, two nodes',
        `${fmt(two.rate)} ev/s, ack p99 ${fmt(percentile(two.latencies, 99))} ms`,
        `one node ${fmt(one.rate)} ev/s`,
        `${fmt(two.rate / one.rate, 2)}`,
        '',
      ],
      [
        'acked events lost, kill -9 mid-ingest',
        `${fmt(lost)} of ${fmt(killed.acknowledged)}`,
        '',
        '',
        `0: ${met(lost === 0 && killed.acknowledged > 0)}`,
      ],
      [
        'query done after kill -9',
        secs(take.queryMs),
        `unkilled ${secs(ref.queryFromStartMs)}`,
        `${fmt(take.queryMs / ref.queryFromStartMs, 1)}`,
        `≤ 10 s: ${met(take.queryMs <= GOAL_TAKEOVER_MS)}`,
      ],
      [
        'report ready after kill -9',
        take.reportError ? 'ERROR' : secs(take.reportMs),
        `unkilled ${secs(ref.reportFromStartMs)}`,
        `${fmt(take.reportMs / ref.reportFromStartMs, 1)}`,
        `≤ 10 s: ${met(!take.reportError && take.reportMs <= GOAL_TAKEOVER_MS)}`,
      ],
      [
        'ws delivery across nodes',
        `p99 ${ms(crossP99)}, ${fmt(missed(cross))} missed`,
        `same node p99 ${ms(percentile(same, 99))}`,
        `${fmt(crossP99 / percentile(same, 99), 2)}`,
        `p99 ≤ 1 s: ${met(crossP99 <= GOAL_P99_MS && missed(cross) === 0)}`,
      ],
    ];
    const widths = (rows[0] as string[]).map((_, i) => Math.max(...rows.map((r) => (r[i] as string).length)));
    console.log('');
    console.log(
      `machine load average (1 min): ${fmt(load0, 1)} at the start, ${fmt(loadavg()[0] as number, 1)} at the end (2 cores, shared)`,
    );
    for (const r of rows)
      console.log(
        r
          .map((cell, i) => cell.padEnd(widths[i] as number))
          .join('  ')
          .trimEnd(),
      );
  } finally {
    process.off('SIGINT', onSigint);
    await cleanup();
  }
}
