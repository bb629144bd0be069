import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { prng } from '../src/cli/demo-generator.js';
import { emptyEvent, type NormalisedEvent, type Severity, type StoredEvent } from '../src/core/event.js';
import { newEventId, newUlid } from '../src/core/ids.js';
import { ClickHouseEventStore } from '../src/event-store/clickhouse/clickhouse-event-store.js';
import { fieldValuesSql as chFieldValuesSql } from '../src/event-store/clickhouse/clickhouse-fields.js';
import type { Compiled as ClickHouseCompiled } from '../src/event-store/clickhouse/clickhouse-plans.js';
import * as chPlans from '../src/event-store/clickhouse/clickhouse-plans.js';
import { DuckDbEventStore } from '../src/event-store/duckdb/duckdb-event-store.js';
import { fieldValuesSql } from '../src/event-store/duckdb/duckdb-fields.js';
import {
  type Compiled,
  lastnSql,
  patternCountsSql,
  searchCountSql,
  searchRowsSql,
  summarySql,
  tableSql,
  timelineSql,
  topnSql,
} from '../src/event-store/duckdb/duckdb-plans.js';
import type { QueryPlan } from '../src/event-store/query-plan.js';
import { SYSTEM_SCOPE } from '../src/event-store/read-scope.js';
import { type FieldColumnOf, SqlParams } from '../src/event-store/sql/sql-params.js';
import { and, cond, type FilterNode, or, TRUE } from '../src/filter/ast.js';
import { TemplateMiner } from '../src/ingest/patterns/template-miner.js';
import { resolveTimeRange } from '../src/query/time-range.js';
import { QUERY_TYPE_DEFS } from '../src/query/types/index.js';
import type { QueryTypeName } from '../src/query/types/query-type.js';
import { validateQuery } from '../src/query/validate.js';
import {
  type BenchClickHouse,
  type BenchServer,
  benchClickHouse,
  flag,
  fmt,
  percentile,
  startServer,
} from './lib.js';
import { READABLE, restrictedServer, STREAMS } from './restricted.js';

/** The restricted user's read scope, as the server makes it from their three streams. */
const RESTRICTED_SCOPE = or(
  cond('host', 'eq', 'web-1'),
  cond('host', 'eq', 'web-2'),
  cond('host', 'eq', 'web-3'),
);

/**
 * Query latency: each query type through the API (HTTP, validation, JSON) beside the same
 * SQL run directly on DuckDB, over N demo-like events spread over the last 24 hours.
 * Flags: --events N (default 10,000,000), --runs R (default 15 per case), --cases <text> (only
 * the cases whose name holds it, e.g. Pipes; no export run), --store clickhouse
 * (adds the same events on ClickHouse: API, raw SQL and whether each answer equals the
 * DuckDB server's; --clickhouse <url>, default the loopback shards of scripts/ci/clickhouse.sh).
 * The data set is built once under .bench/ and reused while its size matches.
 */
/**
 * Pipes (docs/query-language.md#pipes) are measured against SQL written by hand for the raw engine (`raw`): the
 * goal is ≤ 1.3× it (or ≤ 50 ms). `w` is the case's window as SQL on each engine.
 */
interface HandSql {
  /** `field`: an extra field as the store holds it (its map entry, or its own column too). */
  duckdb(w: string, field: (name: string) => string): string;
  clickhouse(table: string, w: string): string;
}

const CASES: Array<{
  name: string;
  goalMs: number;
  type: QueryTypeName;
  params: Record<string, unknown>;
  raw?: HandSql;
}> = [
  {
    name: 'Search filter+sort+100+total',
    goalMs: 50,
    type: 'Search',
    params: { query: 'status:>=500 AND host:web-2', page_size: 100 },
  },
  {
    name: 'Search substring on message',
    goalMs: 250,
    type: 'Search',
    params: { query: '"timeout after"', page_size: 100 },
  },
  // The word index (ADR 0004): a word in RARE_WORD_EVENTS events; the raw engine scans
  // every message with contains(lower(message), 'needle42').
  {
    name: 'Search rare word needle42',
    goalMs: 30,
    type: 'Search',
    params: { query: 'needle42', page_size: 100 },
  },
  // The same rare word through the JSON filter's operators and a regex (the index takes
  // each predicate's literal; the raw engine scans every message).
  {
    name: 'Search rare word, filter contains',
    goalMs: 30,
    type: 'Search',
    params: { filter: [{ field: 'message', op: 'contains', value: 'needle42' }], page_size: 100 },
  },
  {
    name: 'Search rare word, filter endswith',
    goalMs: 30,
    type: 'Search',
    params: { filter: [{ field: 'message', op: 'endswith', value: ' needle42' }], page_size: 100 },
  },
  {
    name: 'Search rare word, regex',
    goalMs: 30,
    type: 'Search',
    params: { filter: [{ field: 'message', op: 'regex', value: '#\\d+ needle42$' }], page_size: 100 },
  },
  { name: 'TopN cardinality 50', goalMs: 50, type: 'TopN', params: { field: 'app', n: 10 } },
  { name: 'TopN cardinality 10k', goalMs: 150, type: 'TopN', params: { field: 'user', n: 10 } },
  { name: 'TopN cardinality 1M', goalMs: 500, type: 'TopN', params: { field: 'src_ip', n: 10 } },
  { name: 'LastN', goalMs: 50, type: 'LastN', params: { field: 'host', n: 10 } },
  {
    name: 'Summary count/avg by host',
    goalMs: 250,
    type: 'Summary',
    params: { group_by: ['host'], metrics: [{ op: 'count' }, { op: 'avg', field: 'bytes' }] },
  },
  { name: 'Timeline 1,440 buckets', goalMs: 50, type: 'Timeline', params: { interval: '1m' } },
  // Patterns (docs/api/patterns.md): the goal is ≤ 1.3× the TopN of pattern_id over the same events.
  { name: 'TopN pattern_id', goalMs: 150, type: 'TopN', params: { field: 'pattern_id', n: 50 } },
  { name: 'Patterns 50', goalMs: 195, type: 'Patterns', params: { n: 50 } },
  {
    name: 'Pipes stats by, sort, limit',
    goalMs: 50,
    type: 'Table',
    params: { query: 'status:>=500 | stats count() as n, avg(bytes) as mean by host | sort -n | limit 10' },
    raw: {
      duckdb: (w) =>
        `SELECT host, count(*) AS n, avg(bytes) AS mean FROM events WHERE ${w} AND status >= 500 GROUP BY host ORDER BY n DESC, host LIMIT 10`,
      clickhouse: (t, w) =>
        `SELECT host, count() AS n, avg(bytes) AS mean FROM ${t} WHERE ${w} AND status >= 500 GROUP BY host ORDER BY n DESC, host LIMIT 10`,
    },
  },
  {
    name: 'Pipes top 10k values',
    goalMs: 50,
    type: 'Table',
    params: { query: '* | top 10 user' },
    raw: {
      duckdb: (w) =>
        `SELECT "user", count(*) AS c FROM events WHERE ${w} AND "user" IS NOT NULL GROUP BY "user" ORDER BY c DESC, "user" LIMIT 10`,
      clickhouse: (t, w) =>
        `SELECT "user", count() AS c FROM ${t} WHERE ${w} AND "user" IS NOT NULL GROUP BY "user" ORDER BY c DESC, "user" LIMIT 10`,
    },
  },
  {
    name: 'Pipes eval, where, stats',
    goalMs: 50,
    type: 'Table',
    params: {
      query:
        '* | eval kb = bytes / 1024 | where kb > 90 | stats count() as n, max(kb) as top by app | sort -n | limit 5',
    },
    raw: {
      duckdb: (w) =>
        `SELECT app, count(*) AS n, max(bytes / 1024) AS top FROM events WHERE ${w} AND bytes / 1024 > 90 GROUP BY app ORDER BY n DESC, app LIMIT 5`,
      clickhouse: (t, w) =>
        `SELECT app, count() AS n, max(bytes / 1024) AS top FROM ${t} WHERE ${w} AND bytes / 1024 > 90 GROUP BY app ORDER BY n DESC, app LIMIT 5`,
    },
  },
  {
    name: 'Pipes stats by extra field',
    goalMs: 50,
    type: 'Table',
    params: { query: '* | stats count() by http.method' },
    raw: {
      duckdb: (w, field) =>
        `SELECT ${field('http.method')} AS m, count(*) AS c FROM events WHERE ${w} GROUP BY m ORDER BY m`,
      clickhouse: (t, w) =>
        `SELECT "fields.value"[indexOf("fields.key", 'http.method')] AS m, count() AS c FROM ${t} WHERE ${w} GROUP BY m ORDER BY m`,
    },
  },
  {
    name: 'Pipes timechart 1h by host',
    goalMs: 50,
    type: 'Table',
    params: { query: '* | timechart span=1h count() by host' },
    raw: {
      duckdb: (w) =>
        `SELECT (epoch_ms(ts) // 3600000) * 3600000 AS b, CASE WHEN host IN (SELECT host FROM events WHERE ${w} GROUP BY host ORDER BY count(*) DESC, host LIMIT 5) THEN host ELSE 'other' END AS s, count(*) AS c FROM events WHERE ${w} GROUP BY ALL ORDER BY b, s`,
      clickhouse: (t, w) =>
        `SELECT intDiv("ts", 3600000) * 3600000 AS b, if(host GLOBAL IN (SELECT host FROM ${t} WHERE ${w} GROUP BY host ORDER BY count() DESC, host LIMIT 5), host, 'other') AS s, count() AS c FROM ${t} WHERE ${w} GROUP BY b, s ORDER BY b, s`,
    },
  },
];

/** One benchmarked query: its API request and its goal. `bench/scale.ts` brings its own list. */
export type QueryCase = (typeof CASES)[number];

const HOSTS = Array.from({ length: 20 }, (_, i) => `web-${i + 1}`);
const MESSAGES = [
  'GET /index.html 200',
  'POST /api/v1/orders 201',
  'Timeout after 30000 ms calling payments-gateway',
  'Accepted publickey for user',
  'Failed password for invalid user',
  'DENY TCP connection',
  'Connection refused: redis://cache-1:6379',
];
const SEVERITIES: Severity[] = ['info', 'info', 'info', 'notice', 'warning', 'error'];
/** Events whose message holds the rare word `needle42`, spread evenly over the data. */
const RARE_WORD_EVENTS = 5;
/**
 * Bumped when the data set or its index changes (4: source keys in the word index; 5: the
 * hourly sources among the events; 6: each batch's rows stored source by source; 7: frequent
 * extra fields in columns of their own; 8: a large append's rows source by source within each
 * word-index block): an older one under .bench/ is rebuilt.
 */
const DATA_VERSION = 8;

/**
 * Sources that log once an hour (a cron job on a few hosts: `sparse-N`, app `cron`), for
 * the context bench: appended with the events of their time, as ingest would store them.
 */
const SPARSE_SOURCES = 5;

function sparseEvents(start: number): NormalisedEvent[] {
  const events: NormalisedEvent[] = [];
  // Each id holds its own time (a read by id looks near it): newEventId encodes the time
  // it is given, where newUlid, monotonic, would keep the latest time this process used
  // (the batch's newest, as these go in among a batch's events).
  for (let h = 0; h < 24; h++)
    for (let s = 0; s < SPARSE_SOURCES; s++) {
      const ts = start + h * 3_600_000 + s * 60_000 + 30_000;
      events.push(
        emptyEvent({
          ev_id: newEventId(ts),
          ts,
          received_at: ts,
          host: `sparse-${s}`,
          app: 'cron',
          severity: 'info',
          message: `hourly job ${h} done`,
          intake: 'bench',
        }),
      );
    }
  return events;
}

async function buildData(dir: string, total: number, windowEnd: number) {
  const tmp = `${dir}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  const store = await DuckDbEventStore.open({ dataDir: tmp, memoryLimit: '1GB', checkpointThreshold: '1GB' });
  const r = prng(7);
  // Messages get their pattern as ingest gives it (the miner over each app's messages).
  const miner = new TemplateMiner();
  const start = windowEnd - 86_400_000;
  const batch = 50_000;
  let sparse = sparseEvents(start);
  for (let done = 0; done < total; done += batch) {
    const events: NormalisedEvent[] = [];
    for (let i = 0; i < batch && done + i < total; i++) {
      const ts = Math.floor(start + ((done + i) / total) * 86_400_000);
      const status = r() < 0.9 ? 200 : r() < 0.5 ? 404 : 503;
      events.push(
        emptyEvent({
          ev_id: newUlid(ts),
          ts,
          received_at: ts,
          host: HOSTS[Math.floor(r() * HOSTS.length)] as string,
          app: `app-${Math.floor(r() * 50)}`,
          severity: SEVERITIES[Math.floor(r() * SEVERITIES.length)] as Severity,
          message: `${MESSAGES[Math.floor(r() * r() * MESSAGES.length)]} #${done + i}${
            (done + i) % Math.ceil(total / RARE_WORD_EVENTS) === 1234 % Math.ceil(total / RARE_WORD_EVENTS)
              ? ' needle42'
              : ''
          }`,
          src_ip: `10.${Math.floor(r() * 16)}.${Math.floor(r() * 256)}.${Math.floor(r() * 256)}`,
          src_port: 1024 + Math.floor(r() * 60000),
          dst_port: 443,
          user: `user-${Math.floor(r() * 10_000)}`,
          status,
          bytes: Math.floor(r() * 100_000),
          intake: 'bench',
          fields: { 'http.method': r() < 0.8 ? 'GET' : 'POST' },
        }),
      );
    }
    // The hourly sources' events of this batch's time, among its events in time order.
    const last = (events[events.length - 1] as NormalisedEvent).ts;
    const isLast = done + batch >= total;
    events.push(...sparse.filter((e) => isLast || e.ts <= last));
    sparse = isLast ? [] : sparse.filter((e) => e.ts > last);
    events.sort((a, b) => a.ts - b.ts);
    for (const e of events) e.pattern_id = miner.match(e.app ?? '', e.message ?? '').id;
    await store.append(events);
    process.stderr.write(`\r  building: ${fmt(Math.min(total, done + batch))} events`);
  }
  process.stderr.write('\n');
  await store.checkpoint();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
}

export const rangeOf = (windowEnd: number) => ({
  ts_from: Math.floor((windowEnd - 86_400_000) / 1000),
  ts_to: Math.ceil(windowEnd / 1000) + 1,
});

/** The plan of a case; `scope`: a read scope's filter ANDed in, as the store does for a user. */
export function planFor(c: QueryCase, baseMs: number, scope: FilterNode = TRUE): QueryPlan {
  const params = { ...c.params, time_range: rangeOf(baseMs) };
  const valid = validateQuery({ type: c.type, params });
  const filter = and(scope, valid.filter);
  return {
    ...QUERY_TYPE_DEFS[c.type].plan(valid.params, filter, resolveTimeRange(valid.params.time_range, baseMs)),
    scope: SYSTEM_SCOPE,
  } as QueryPlan;
}

/** `columnOf`: where the store keeps extra fields (its `extras`), as its own statements read them. */
export function sqlFor(plan: QueryPlan, columnOf?: FieldColumnOf): Compiled[] {
  const n = { columnOf };
  switch (plan.kind) {
    case 'search':
      return [searchRowsSql(plan, n), searchCountSql(plan, n)];
    case 'topn':
      return [topnSql(plan, n)];
    case 'lastn':
      return [lastnSql(plan, n)];
    case 'summary':
      return [summarySql(plan, n)];
    case 'timeline':
      return [timelineSql(plan, n)];
    case 'patterns':
      // The raw engine's share: the top patterns' counts (series and samples follow from their ids).
      return [patternCountsSql(plan, n)];
    case 'table':
      return [tableSql(plan, 'rows', n)];
    case 'fields':
      return [fieldValuesSql(plan, n)];
    case 'changes':
      throw new Error('bench/query.ts has no raw statement for a changes plan');
    default:
      return plan satisfies never;
  }
}

/** A case's time window in hand-written SQL: the API's range, as each engine holds times. */
const windowMs = (windowEnd: number) => {
  const r = rangeOf(windowEnd);
  return { from: r.ts_from * 1000, to: r.ts_to * 1000 };
};
const duckWindow = (windowEnd: number) => {
  const { from, to } = windowMs(windowEnd);
  return `ts >= epoch_ms(${from}) AND ts < epoch_ms(${to})`;
};
const clickHouseWindow = (windowEnd: number) => {
  const { from, to } = windowMs(windowEnd);
  return `"ts" >= ${from} AND "ts" < ${to}`;
};
const handSql = (sql: string): Compiled => ({ sql, params: new SqlParams() });

/** An extra field in hand-written SQL, where `store` keeps it: its own column, then its map entry. */
const extraFieldSql = (store: DuckDbEventStore) => (name: string) => {
  const inMap = `map_extract_value(fields, '${name}')`;
  const column = store.extras.columnOf(name);
  return column ? `coalesce(${column}, ${inMap})` : inMap;
};

export const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p99: percentile(s, 99) };
};

/** Server settings for timing queries: wait for the answer, one slice (as the raw engine runs it). */
export const API_QUERY_ENV = {
  LOGSCOPE_QUERY_SYNC_MS: '60000',
  LOGSCOPE_QUERY_SLICE_EVENTS: String(1e12),
};

/**
 * The raw engine: the SQL each case compiles to, straight on an open store; `runs` timed
 * runs per case (ms) after 2 warm-up runs.
 */
export async function timeRaw(
  store: DuckDbEventStore,
  cases: QueryCase[],
  windowEnd: number,
  runs: number,
  scope: FilterNode = TRUE,
): Promise<Record<string, number[]>> {
  const raw: Record<string, number[]> = {};
  for (const c of cases) {
    const queries =
      c.raw && scope === TRUE
        ? [handSql(c.raw.duckdb(duckWindow(windowEnd), extraFieldSql(store)))]
        : sqlFor(planFor(c, windowEnd, scope), store.extras.columnOf);
    const times: number[] = [];
    for (let i = 0; i < runs + 2; i++) {
      const t0 = performance.now();
      for (const q of queries) await store.runSql(q.sql, q.params.values);
      if (i >= 2) times.push(performance.now() - t0);
    }
    raw[c.name] = times;
  }
  return raw;
}

/**
 * Through the API: `POST /api/query` per run, until its result is SUCCESS (a `202` past the
 * server's sync window is polled); `runs` timed runs per case (ms) after 2 warm-up runs.
 */
export async function timeApi(
  server: BenchServer,
  cases: QueryCase[],
  windowEnd: number,
  runs: number,
  /** Filled with each case's last answer (`results`), for comparing servers. */
  answers: Record<string, unknown> = {},
): Promise<Record<string, number[]>> {
  const [api] = await timeApiEach([server], cases, windowEnd, runs, answers);
  return api ?? {};
}

/**
 * The cases through each server (tokens), taking turns run by run, so what the machine
 * does meanwhile (GC, a checkpoint) falls on all of them alike. `answers`: the first
 * server's.
 */
export async function timeApiEach(
  servers: BenchServer[],
  cases: QueryCase[],
  windowEnd: number,
  runs: number,
  answers: Record<string, unknown> = {},
): Promise<Array<Record<string, number[]>>> {
  const out = servers.map(() => ({}) as Record<string, number[]>);
  for (const c of cases) {
    const times = servers.map(() => [] as number[]);
    for (let i = 0; i < runs + 2; i++) {
      for (const [k, server] of servers.entries()) {
        const headers = { authorization: `token ${server.token}`, 'content-type': 'application/json' };
        const body = { type: c.type, params: { ...c.params, time_range: rangeOf(windowEnd) } };
        const t0 = performance.now();
        let res = await fetch(`${server.url}/api/query`, {
          method: 'POST',
          headers,
          body: JSON.stringify(body),
        });
        let json = (await res.json()) as { status?: string; query_id?: string; results?: unknown };
        while (res.status === 202 && (json.status === 'PENDING' || json.status === 'IN_PROGRESS')) {
          await new Promise((ok) => setTimeout(ok, 10));
          res = await fetch(`${server.url}/api/query/${json.query_id}`, { headers });
          json = (await res.json()) as typeof json;
        }
        if (!res.ok || json.status !== 'SUCCESS')
          throw new Error(`${c.name}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
        if (i >= 2) times[k]?.push(performance.now() - t0);
        if (k === 0) answers[c.name] = json.results;
      }
    }
    for (const [k, t] of times.entries()) (out[k] as Record<string, number[]>)[c.name] = t;
  }
  return out;
}

/**
 * Bytes on disk (after the build's checkpoint) and the word index's share: its blooms
 * plus the fixed columns of its rows (8 + 8 + 8 + 4 × 4 bytes).
 */
async function diskFigures(store: DuckDbEventStore) {
  const { events, bytesOnDisk } = await store.stats();
  const [words] = await store.runSql(
    'SELECT count(*) AS blocks, coalesce(sum(octet_length(bloom)), 0) AS bytes FROM word_blocks',
  );
  const blocks = Number(words?.blocks ?? 0);
  return { total: bytesOnDisk, index: Number(words?.bytes ?? 0) + blocks * 40, blocks, events };
}

/** An answer without what differs by store for the same events (`stored_at`). */
const comparable = (r: unknown) => JSON.stringify(r, (k, v) => (k === 'stored_at' ? undefined : v));

/**
 * `--store clickhouse`: the same events in ClickHouse (copied from the DuckDB data set
 * once, kept while the count matches), the ClickHouse SQL of each case run straight on it,
 * a server on it through the API, and whether each answer equals the DuckDB server's.
 */
async function clickHouseSide(
  ch: BenchClickHouse,
  dir: string,
  total: number,
  windowEnd: number,
  runs: number,
  duckAnswers: Record<string, unknown>,
  cases: QueryCase[] = CASES,
) {
  const store = await ClickHouseEventStore.open({ url: ch.url });
  let load = 'reused';
  if ((await store.stats()).events !== total) {
    await store.close();
    await ch.onEach(`DROP DATABASE IF EXISTS ${ch.database}`);
    const fresh = await ClickHouseEventStore.open({ url: ch.url });
    const duck = await DuckDbEventStore.open({
      dataDir: dir,
      memoryLimit: '1GB',
      checkpointThreshold: '256MB',
    });
    const t0 = performance.now();
    let batch: StoredEvent[] = [];
    let done = 0;
    for await (const e of duck.stream({
      kind: 'search',
      scope: SYSTEM_SCOPE,
      filter: { kind: 'true' },
      range: { fromMs: -8.64e15, toMs: 8.64e15 },
      sort: [{ field: 'ts', desc: false }],
      limit: Number.MAX_SAFE_INTEGER,
      offset: 0,
      count: false,
    })) {
      batch.push(e);
      if (batch.length === 100_000) {
        await fresh.append(batch);
        done += batch.length;
        batch = [];
        process.stderr.write(`\r  loading ClickHouse: ${fmt(done)} events`);
      }
    }
    if (batch.length) await fresh.append(batch);
    process.stderr.write('\n');
    load = `copied ${fmt(total)} events in ${fmt((performance.now() - t0) / 1000, 1)} s`;
    await duck.close();
    await fresh.close();
  } else await store.close();

  const rawStore = await ClickHouseEventStore.open({ url: ch.url });
  const table = `"${ch.database}"."events"`;
  const raw: Record<string, number[]> = {};
  for (const c of cases) {
    const queries = c.raw
      ? [{ sql: c.raw.clickhouse(table, clickHouseWindow(windowEnd)) }]
      : clickHouseSqlFor(table, planFor(c, windowEnd));
    const times: number[] = [];
    for (let i = 0; i < runs + 2; i++) {
      const t0 = performance.now();
      for (const q of queries) await rawStore.runSql(q.sql, q.totals);
      if (i >= 2) times.push(performance.now() - t0);
    }
    raw[c.name] = times;
  }
  await rawStore.close();

  const server = await startServer({ LOGSCOPE_EVENT_STORE_URL: ch.url, ...API_QUERY_ENV });
  const answers: Record<string, unknown> = {};
  const api = await timeApi(server, cases, windowEnd, runs, answers);
  await server.stop();
  const same = Object.fromEntries(
    cases.map((c) => [c.name, comparable(answers[c.name]) === comparable(duckAnswers[c.name])]),
  );
  return { raw, api, same, load };
}

function clickHouseSqlFor(table: string, plan: QueryPlan): ClickHouseCompiled[] {
  switch (plan.kind) {
    case 'search':
      return [chPlans.searchRowsSql(table, plan), chPlans.searchCountSql(table, plan)];
    case 'topn':
      return [chPlans.topnSql(table, plan)];
    case 'lastn':
      return [chPlans.lastnSql(table, plan)];
    case 'summary':
      return [chPlans.summarySql(table, plan)];
    case 'timeline':
      return [chPlans.timelineSql(table, plan)];
    case 'patterns':
      return [chPlans.patternCountsSql(table, plan)];
    case 'table':
      return [chPlans.tableSql(table, plan, 'rows')];
    case 'fields':
      return [chFieldValuesSql(table, plan)];
    case 'changes':
      throw new Error('bench/query.ts has no raw statement for a changes plan');
    default:
      return plan satisfies never;
  }
}

/**
 * The data set of N demo-like events over 24 h under .bench/, built once and reused while
 * its size and version match; queries are pinned to the end time it was built at.
 */
export async function dataSet(total: number): Promise<{ dir: string; windowEnd: number }> {
  const root = path.resolve('.bench');
  const dir = path.join(root, `query-${total}`);
  const metaFile = path.join(dir, 'bench.json');
  mkdirSync(root, { recursive: true });
  let windowEnd = Date.now();
  const meta = existsSync(metaFile)
    ? (JSON.parse(readFileSync(metaFile, 'utf8')) as { windowEnd: number; version?: number })
    : undefined;
  if (meta?.version === DATA_VERSION) {
    windowEnd = meta.windowEnd;
    console.log(`reusing ${fmt(total)} events in ${dir}`);
  } else {
    console.log(`building ${fmt(total)} events in ${dir} (once)`);
    await buildData(dir, total, windowEnd);
    writeFileSync(metaFile, JSON.stringify({ windowEnd, version: DATA_VERSION }));
  }
  return { dir, windowEnd };
}

export async function main(argv: string[]) {
  const total = flag(argv, 'events', 10_000_000);
  const runs = flag(argv, 'runs', 15);
  // --cases <text>: only the cases whose name holds it (and no export run).
  const only = argv[argv.indexOf('--cases') + 1];
  const cases = argv.includes('--cases') && only ? CASES.filter((c) => c.name.includes(only)) : CASES;
  const { dir, windowEnd } = await dataSet(total);

  // --- raw engine: the same SQL the API compiles, straight on DuckDB
  const raw: Record<string, number[]> = {};
  // The same SQL with the restricted user's read scope in it (three host rules).
  const rawScoped: Record<string, number[]> = {};
  let disk = { total: 0, index: 0, blocks: 0, events: 0 };
  {
    const store = await DuckDbEventStore.open({
      dataDir: dir,
      memoryLimit: '1GB',
      checkpointThreshold: '256MB',
    });
    Object.assign(raw, await timeRaw(store, cases, windowEnd, runs));
    Object.assign(rawScoped, await timeRaw(store, cases, windowEnd, runs, RESTRICTED_SCOPE));
    disk = await diskFigures(store);
    await store.close();
  }

  // --- through the API: a real server process on the same files
  const server = await startServer({
    LOGSCOPE_DATA_DIR: dir,
    LOGSCOPE_DUCKDB_MEMORY_LIMIT: '1GB',
    ...API_QUERY_ENV,
  });
  const answers: Record<string, unknown> = {};
  // The reading rule: the same cases by a user who reads 3 streams of 20, taking turns with
  // the admin's.
  const [api = {}, restricted = {}] = await timeApiEach(
    [server, await restrictedServer(server)],
    cases,
    windowEnd,
    runs,
    answers,
  );

  // --- export of up to 1M rows to CSV: server memory while streaming (not with --cases)
  const exported = cases === CASES ? await exportFigures(server, windowEnd) : null;
  await server.stop();

  const ch = benchClickHouse(argv, `bench_query_${total}`);
  const onClickHouse = ch ? await clickHouseSide(ch, dir, total, windowEnd, runs, answers, cases) : null;

  console.log('');
  console.log(`${fmt(total)} events over 24 h, ${runs} runs per case (ms)`);
  console.log('case                              API p50   API p99   raw p50   raw p99   ratio(p50)   goal');
  for (const c of cases) {
    const a = stats(api[c.name] ?? []);
    const r = stats(raw[c.name] ?? []);
    console.log(
      `${c.name.padEnd(32)} ${fmt(a.p50, 1).padStart(8)} ${fmt(a.p99, 1).padStart(9)} ${fmt(r.p50, 1).padStart(9)} ${fmt(r.p99, 1).padStart(9)} ${fmt(a.p50 / r.p50, 2).padStart(12)}   ≤ ${c.goalMs}`,
    );
  }
  console.log('');
  console.log(
    `the same cases by a user who reads ${READABLE} streams of ${STREAMS} (rules host:web-N), beside the admin (ms)`,
  );
  console.log(
    'case                            admin p50   user p50   user/admin (≤ 1.15)   raw p50   raw+scope p50   user/raw+scope',
  );
  for (const c of cases) {
    const a = stats(api[c.name] ?? []).p50;
    const u = stats(restricted[c.name] ?? []).p50;
    const r = stats(raw[c.name] ?? []).p50;
    const rs = stats(rawScoped[c.name] ?? []).p50;
    console.log(
      `${c.name.padEnd(32)} ${fmt(a, 1).padStart(8)} ${fmt(u, 1).padStart(10)} ${fmt(u / a, 2).padStart(21)} ${fmt(r, 1).padStart(9)} ${fmt(rs, 1).padStart(15)} ${fmt(u / rs, 2).padStart(16)}`,
    );
  }
  console.log('');
  console.log(
    `disk: ${fmt(disk.total / disk.events, 1)} B/event, of which the word index ${fmt(disk.index / disk.events, 2)} B/event (${fmt(disk.blocks)} blocks; without it ${fmt((disk.total - disk.index) / disk.events, 1)} B/event)`,
  );
  if (onClickHouse) {
    console.log('');
    console.log(
      `the same events on ClickHouse (${ch?.url.replace(/\/\/[^@/]*@/, '//')}), ${runs} runs per case (ms)`,
    );
    console.log(
      'case                              API p50   API p99   raw p50   raw p99   ratio(p50)   API vs DuckDB API   same answer',
    );
    for (const c of cases) {
      const a = stats(onClickHouse.api[c.name] ?? []);
      const r = stats(onClickHouse.raw[c.name] ?? []);
      const d = stats(api[c.name] ?? []);
      console.log(
        `${c.name.padEnd(32)} ${fmt(a.p50, 1).padStart(8)} ${fmt(a.p99, 1).padStart(9)} ${fmt(r.p50, 1).padStart(9)} ${fmt(r.p99, 1).padStart(9)} ${fmt(a.p50 / r.p50, 2).padStart(12)} ${fmt(a.p50 / d.p50, 2).padStart(19)}   ${onClickHouse.same[c.name] ? 'yes' : 'NO'}`,
      );
    }
    console.log(`ClickHouse load: ${onClickHouse.load}`);
  }
  if (exported) {
    const { lines, bytes, seconds, rssBefore, peakRss } = exported;
    console.log(
      `export CSV: ${fmt(lines - 1)} rows, ${fmt(bytes / 1048576, 1)} MiB in ${fmt(seconds, 1)} s; server RSS ${fmt(rssBefore / 1048576)} → peak ${fmt(peakRss / 1048576)} MiB (growth ${fmt((peakRss - rssBefore) / 1048576)} MiB)`,
    );
  }
}

/** A CSV export of every event of the window: its size, time and the server's memory meanwhile. */
async function exportFigures(server: BenchServer, windowEnd: number) {
  const rssBefore = server.rss();
  const exp = await fetch(`${server.url}/api/query`, {
    method: 'POST',
    headers: { authorization: `token ${server.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'Search', params: { time_range: rangeOf(windowEnd), page_size: 10 } }),
  });
  const qid = ((await exp.json()) as { query_id: string }).query_id;
  const t0 = performance.now();
  const file = await fetch(`${server.url}/api/query/${qid}/export?ftype=csv`, {
    headers: { authorization: `token ${server.token}` },
  });
  let bytes = 0;
  let lines = 0;
  let peakRss = rssBefore;
  for await (const chunk of file.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    for (const b of chunk) if (b === 10) lines++;
    peakRss = Math.max(peakRss, server.rss());
  }
  return { bytes, lines, seconds: (performance.now() - t0) / 1000, rssBefore, peakRss };
}
