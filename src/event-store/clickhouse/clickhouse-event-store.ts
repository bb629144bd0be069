import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { type ClickHouseClient, ClickHouseError, ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { decodeTime } from 'ulidx';
import { type ClickHouseTarget, parseClickHouseUrl } from '../../config/clickhouse-url.js';
import type { NormalisedEvent, StoredEvent } from '../../core/event.js';
import { outOfMemory, storeUnavailable } from '../../errors/errors.js';
import { NETWORK_UNREACHABLE, StartupError, UNREACHABLE_REASONS } from '../../errors/startup.js';
import type { FilterNode } from '../../filter/ast.js';
import { abortError, type EventStore, type EventStoreStats } from '../event-store.js';
import { HourHistogram } from '../hour-histogram.js';
import { executePlan, type PlanDialect } from '../plan-executor.js';
import type { ExecOptions, QueryPlan, ResultOf, SearchPlan } from '../query-plan.js';
import { inScope, type ReadScope, type StreamRules, scopedPlan } from '../read-scope.js';
import type { StatementRows } from '../result-shaper.js';
import { quoteIdent, SqlParams, sqlTime } from '../sql/sql-params.js';
import { clickHouseBind, compileFilter } from './clickhouse-filter-compiler.js';
import { clickHouseLiteral } from './clickhouse-literal.js';
import { type Compiled, clickHouseDialect, searchRowsSql } from './clickhouse-plans.js';
import {
  addColumnSql,
  createDistributedTable,
  createLocalTable,
  DAY_MS,
  jsonEachRow,
  LATER_COLUMNS,
  rowToEvent,
} from './clickhouse-schema.js';

const HOUR_MS = 3_600_000;

/** Events per insert at most: a group of waiting appends is written as one insert up to this. */
const MAX_INSERT_EVENTS = 50_000;

/** Network failures: ClickHouse cannot be reached (503 store_unavailable, retried by clients). */
const UNREACHABLE = new Set([...NETWORK_UNREACHABLE, 'EPIPE', 'UND_ERR_SOCKET']);

/** ClickHouse error codes that mean "not enough memory for this query". */
const MEMORY_LIMIT_EXCEEDED = '241';

interface PendingAppend {
  events: readonly NormalisedEvent[];
  resolve: (r: { storedAt: number }) => void;
  reject: (err: unknown) => void;
}

export interface ClickHouseEventStoreOptions {
  /** `eventStoreUrl` (clickhouse-url.ts). */
  url: string;
  /** Milliseconds a request may take before it fails (default 300,000). */
  requestTimeoutMs?: number;
}

/** A statement's query id: its work's tag (`ExecOptions.tag`) and a random part. */
const tagged = (tag: string | undefined) => (tag === undefined ? randomUUID() : `${tag}:${randomUUID()}`);

/**
 * The event store on ClickHouse (ADR 0006), over the official HTTP client: one client per
 * listed server, requests spread over them in turn. Alone, a server holds `events`
 * (MergeTree, a partition per day); with `?cluster=`, each listed server holds
 * `events_local` and a `Distributed` table `events` over the cluster, which inserts write
 * synchronously to the shards and queries read from all of them.
 *
 * An append is acknowledged once ClickHouse answered its insert (the rows are in parts on
 * the shards). Appends that wait while one is written go out together as the next
 * insert, so a busy server gets fewer, larger inserts (ClickHouse wants few parts).
 * Measured on the loopback shards (`npm run bench -- ingest --store clickhouse`): one
 * insert at a time beat two at once (28 k events/s) and waiting up to 150 ms for 10,000
 * rows (31 k); both starve the shards between inserts more than they save per row.
 */
export class ClickHouseEventStore implements EventStore {
  readonly kind = 'clickhouse' as const;
  readonly capabilities = { interrupt: true, re2: true };
  private readonly perHour = new HourHistogram();
  private next = 0;
  private pending: PendingAppend[] = [];
  private writing: Promise<void> | null = null;
  /** The table queries read and inserts write (the Distributed one on a cluster), quoted. */
  private readonly table: string;
  private readonly dialect: PlanDialect<Compiled>;
  /** The MergeTree table on each server, quoted, and its bare name. */
  private readonly local: string;
  private readonly localName: string;

  private constructor(
    private readonly target: ClickHouseTarget,
    private readonly clients: ClickHouseClient[],
    /** `SELECT version()` of the first server, for capability checks. */
    readonly serverVersion: string,
  ) {
    const db = quoteIdent(target.database);
    this.localName = target.cluster ? 'events_local' : 'events';
    this.table = `${db}.${quoteIdent('events')}`;
    this.dialect = clickHouseDialect(this.table);
    this.local = `${db}.${quoteIdent(this.localName)}`;
  }

  static async open(opts: ClickHouseEventStoreOptions): Promise<ClickHouseEventStore> {
    const target = parseClickHouseUrl(opts.url);
    const clients = target.hosts.map((url) =>
      createClient({
        url,
        username: target.username,
        password: target.password,
        request_timeout: opts.requestTimeoutMs ?? 300_000,
        max_open_connections: 16,
        // Failures are answered to callers and logged by the service, not by the client.
        log: { level: ClickHouseLogLevel.OFF },
        clickhouse_settings: {
          // 64-bit integers (times, bytes, counts) as JSON numbers, as DuckDB's are read
          // (a grouped `bytes` or `ts` value is a number on both stores).
          output_format_json_quote_64bit_integers: 0,
          // Large sorts and groupings (exports, unique fields) spill to disk instead of
          // failing at the server's memory limit.
          max_bytes_before_external_sort: String(256 * 1024 * 1024),
          max_bytes_before_external_group_by: String(256 * 1024 * 1024),
        },
      }),
    );
    try {
      for (const [i, c] of clients.entries()) {
        const ping = await c.ping();
        if (!ping.success) {
          throw new StartupError(
            `Cannot start: ClickHouse at ${target.hosts[i]} is unreachable (${reason(ping.error)}); check that it runs and eventStoreUrl (LOGSCOPE_EVENT_STORE_URL).`,
          );
        }
      }
      const version = await firstValue(clients[0] as ClickHouseClient, 'SELECT version() AS v');
      const store = new ClickHouseEventStore(target, clients, String(version));
      await store.createTables();
      await store.loadHistogram();
      return store;
    } catch (err) {
      await Promise.all(clients.map((c) => c.close()));
      if (err instanceof StartupError) throw err;
      if (err instanceof ClickHouseError)
        throw new StartupError(`Cannot start: ClickHouse refused to set up the event store: ${err.message}`);
      throw err;
    }
  }

  /** The database and tables on every listed server (idempotent). */
  private async createTables(): Promise<void> {
    const { database, cluster } = this.target;
    for (const c of this.clients) {
      await c.command({ query: `CREATE DATABASE IF NOT EXISTS ${quoteIdent(database)}` });
      await c.command({ query: createLocalTable(database, this.localName) });
      await addLaterColumns(c, database, this.localName);
      if (cluster) {
        await c.command({ query: createDistributedTable(database, 'events', cluster, this.localName) });
        await addLaterColumns(c, database, 'events');
      }
    }
  }

  /** The next server in turn. */
  private client(): ClickHouseClient {
    const c = this.clients[this.next % this.clients.length] as ClickHouseClient;
    this.next = (this.next + 1) % this.clients.length;
    return c;
  }

  append(events: readonly NormalisedEvent[]): Promise<{ storedAt: number }> {
    return new Promise((resolve, reject) => {
      this.pending.push({ events, resolve, reject });
      this.writing ??= this.drain();
    });
  }

  /** Writes waiting appends, as few inserts as possible, until none waits. */
  private async drain(): Promise<void> {
    try {
      while (this.pending.length) {
        const group: PendingAppend[] = [];
        let n = 0;
        while (
          this.pending.length &&
          (n === 0 || n + (this.pending[0] as PendingAppend).events.length <= MAX_INSERT_EVENTS)
        ) {
          const p = this.pending.shift() as PendingAppend;
          group.push(p);
          n += p.events.length;
        }
        const storedAt = Date.now();
        try {
          let body = '';
          for (const p of group) body += jsonEachRow(p.events, storedAt);
          const result = await this.client().exec({
            query: `INSERT INTO ${this.table} FORMAT JSONEachRow`,
            values: Readable.from([body]),
            ...(this.target.cluster ? { clickhouse_settings: { insert_distributed_sync: 1 } } : {}),
          });
          result.stream.resume();
          for (const p of group) this.perHour.add(p.events);
          for (const p of group) p.resolve({ storedAt });
        } catch (err) {
          const mapped = this.error(err);
          for (const p of group) p.reject(mapped);
        }
      }
    } finally {
      this.writing = null;
    }
  }

  /**
   * An engine failure as clients may see it: unreachable → 503 store_unavailable, out of
   * memory → 503 out_of_memory; anything else unchanged (a 500, logged with its text).
   */
  private error(err: unknown): unknown {
    let mapped: Error | null = null;
    if (isUnreachable(err))
      mapped = storeUnavailable(
        `The event store (ClickHouse) cannot be reached (${reason(err)}); retry once it is back.`,
      );
    else if (err instanceof ClickHouseError && err.code === MEMORY_LIMIT_EXCEEDED) mapped = outOfMemory();
    if (!mapped) return err;
    (mapped as Error & { cause?: unknown }).cause = err;
    return mapped;
  }

  /**
   * Runs a statement on the next server; aborting `signal` ends the request and kills the
   * query on the server (`KILL QUERY`, which stops its work on every shard).
   */
  private async rows(q: Compiled, opts: ExecOptions = {}): Promise<StatementRows> {
    if (opts.signal?.aborted) throw abortError();
    const client = this.client();
    const queryId = tagged(opts.tag);
    const controller = new AbortController();
    const onAbort = () => {
      controller.abort();
      this.kill(client, queryId);
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const poll = opts.onProgress ? this.pollProgress(client, queryId, opts.onProgress) : undefined;
    try {
      const params = { query: q.sql, query_id: queryId, abort_signal: controller.signal };
      if (q.totals) {
        const json = await (await client.query({ ...params, format: 'JSON' })).json<
          Record<string, unknown>
        >();
        return {
          rows: json.data,
          ...(json.totals ? { totals: json.totals as Record<string, unknown> } : {}),
        };
      }
      return {
        rows: await (await client.query({ ...params, format: 'JSONEachRow' })).json<
          Record<string, unknown>
        >(),
      };
    } catch (err) {
      if (opts.signal?.aborted) throw abortError();
      throw this.error(err);
    } finally {
      clearInterval(poll);
      opts.signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * The statement's progress while it runs, as DuckDB's is read: rows read over the
   * rows it expects to read, from the server's process list (which a Distributed query's
   * shards report to), every 200 ms.
   */
  private pollProgress(client: ClickHouseClient, queryId: string, onProgress: (f: number) => void) {
    let asking = false;
    return setInterval(() => {
      if (asking) return;
      asking = true;
      client
        .query({
          query: `SELECT read_rows AS r, total_rows_approx AS t FROM system.processes WHERE query_id = ${clickHouseLiteral(queryId)}`,
          format: 'JSONEachRow',
        })
        .then((res) => res.json<{ r: number; t: number }>())
        .then(([p]) => {
          if (p && Number(p.t) > 0) onProgress(Math.min(1, Number(p.r) / Number(p.t)));
        })
        .catch(() => undefined)
        .finally(() => {
          asking = false;
        });
    }, 200);
  }

  /**
   * Kills on every server the statements whose query id starts with `tagPrefix` (see
   * `tagged`): KILL QUERY sees the processes of the server it runs on, and a statement
   * runs where it was sent. ClickHouse does not end an HTTP query whose client went
   * away, so a dead node's statements would otherwise run on to their end.
   */
  async abandon(tagPrefix: string): Promise<void> {
    const pattern = `${tagPrefix.replace(/[\\%_]/g, '\\$&')}%`;
    await Promise.all(
      this.clients.map((c) =>
        c
          .command({ query: `KILL QUERY WHERE query_id LIKE ${clickHouseLiteral(pattern)} ASYNC` })
          .catch(() => undefined),
      ),
    );
  }

  private kill(client: ClickHouseClient, queryId: string): void {
    client
      .command({ query: `KILL QUERY WHERE query_id = ${clickHouseLiteral(queryId)} ASYNC` })
      .catch(() => undefined);
  }

  /** Runs a plan (plan-executor.ts); each statement goes to the next server. */
  execute<P extends QueryPlan>(plan: P, opts: ExecOptions = {}): Promise<ResultOf<P>> {
    return executePlan(this.dialect, (q, o) => this.rows(q, o), plan, opts);
  }

  async *stream(unscoped: SearchPlan, opts: ExecOptions = {}): AsyncGenerator<StoredEvent> {
    if (opts.signal?.aborted) throw abortError();
    const plan = scopedPlan(unscoped);
    const client = this.client();
    const queryId = tagged(opts.tag);
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    let finished = false;
    try {
      const result = await client.query({
        query: searchRowsSql(this.table, { ...plan, offset: 0 }).sql,
        format: 'JSONEachRow',
        query_id: queryId,
        abort_signal: controller.signal,
      });
      for await (const rows of result.stream<Record<string, unknown>>()) {
        for (const row of rows) yield rowToEvent(row.json());
      }
      finished = true;
    } catch (err) {
      if (opts.signal?.aborted) throw abortError();
      throw this.error(err);
    } finally {
      opts.signal?.removeEventListener('abort', onAbort);
      if (!finished) {
        // The reader stopped early (or failed): end the request and the server's work.
        controller.abort();
        this.kill(client, queryId);
      }
    }
  }

  estimateInRange(fromMs: number, toMs: number): number {
    return this.perHour.estimate(fromMs, toMs);
  }

  appendedElsewhere(count: number, fromMs: number, toMs: number): void {
    this.perHour.addSpread(count, fromMs, toMs);
  }

  /** The per-hour counts behind estimateInRange (hour start ms, events). */
  hourCounts(): Array<[number, number]> {
    return this.perHour.entries();
  }

  private async loadHistogram(): Promise<void> {
    const { rows } = await this.rows({
      sql: `SELECT intDiv("ts", ${HOUR_MS}) AS h, count() AS n FROM ${this.table} GROUP BY h`,
    });
    this.perHour.reset(rows.map((r) => [Number(r.h) * HOUR_MS, Number(r.n)] as const));
  }

  /** Reads scopes by their filters: membership is not kept here (ADR 0016). */
  async setStreamRules(_rules: StreamRules): Promise<void> {}

  async getById(evId: string, scope: ReadScope): Promise<StoredEvent | null> {
    let receivedAt: number;
    try {
      receivedAt = decodeTime(evId);
    } catch {
      return null;
    }
    const { rows } = await this.rows({
      sql: `SELECT * FROM ${this.table} WHERE "received_at" BETWEEN ${clickHouseLiteral(receivedAt - HOUR_MS)} AND ${clickHouseLiteral(receivedAt + 1000)} AND "ev_id" = ${clickHouseLiteral(evId)} LIMIT 1`,
    });
    const event = rows[0] ? rowToEvent(rows[0]) : null;
    return event && inScope(scope, event) ? event : null;
  }

  /**
   * Retention by whole days: drops, on every server, the day partitions that end before
   * the cut-off. Events of the cut-off's own day stay until that day is past.
   */
  async deleteOlderThan(tsMs: number, keep?: FilterNode): Promise<number> {
    if (keep) return this.deleteSome(tsMs, keep);
    const lastDay = Math.floor(tsMs / DAY_MS); // partitions below this end at or before the cut-off
    let deleted = 0;
    try {
      for (const c of this.clients) {
        const result = await c.query({
          query: `SELECT partition, sum(rows) AS n FROM system.parts WHERE database = ${clickHouseLiteral(this.target.database)} AND table = ${clickHouseLiteral(this.localName)} AND active GROUP BY partition`,
          format: 'JSONEachRow',
        });
        for (const p of await result.json<{ partition: string; n: string }>()) {
          const day = Number(p.partition);
          if (!Number.isInteger(day) || day >= lastDay) continue;
          await c.command({ query: `ALTER TABLE ${this.local} DROP PARTITION ${clickHouseLiteral(day)}` });
          deleted += Number(p.n);
        }
      }
    } catch (err) {
      throw this.error(err);
    }
    if (deleted > 0) await this.loadHistogram();
    return deleted;
  }

  /**
   * Retention per stream: the events older than the cut-off that `keep` does not match,
   * by a mutation on every server (waited for), counted first. Whole days past every
   * stream's retention go by partition drops (`deleteOlderThan` without `keep`).
   */
  private async deleteSome(tsMs: number, keep: FilterNode): Promise<number> {
    const params = new SqlParams(clickHouseBind);
    const where = `"ts" < ${params.add(sqlTime(tsMs))} AND NOT (${compileFilter(keep, params)})`;
    try {
      const { rows } = await this.rows({ sql: `SELECT count() AS n FROM ${this.table} WHERE ${where}` });
      const n = Number(rows[0]?.n ?? 0);
      if (n === 0) return 0;
      for (const c of this.clients)
        await c.command({ query: `ALTER TABLE ${this.local} DELETE WHERE ${where}` });
      await this.mutationsDone();
      await this.loadHistogram();
      return n;
    } catch (err) {
      throw this.error(err);
    }
  }

  /** Waits until every server finished its mutations of the events table (at most a minute). */
  private async mutationsDone(): Promise<void> {
    const until = Date.now() + 60_000;
    for (const c of this.clients) {
      for (;;) {
        const pending = Number(
          await firstValue(
            c,
            `SELECT count() AS v FROM system.mutations WHERE database = ${clickHouseLiteral(this.target.database)} AND table = ${clickHouseLiteral(this.localName)} AND is_done = 0`,
          ),
        );
        if (pending === 0 || Date.now() > until) break;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  async stats(): Promise<EventStoreStats> {
    const { rows } = await this.rows({
      sql: `SELECT count() AS n, min("ts") AS lo, max("ts") AS hi FROM ${this.table}`,
    });
    const row = rows[0] ?? {};
    const n = Number(row.n ?? 0);
    let bytesOnDisk = 0;
    for (const c of this.clients) {
      bytesOnDisk += Number(
        await firstValue(
          c,
          `SELECT sum(bytes_on_disk) AS v FROM system.parts WHERE database = ${clickHouseLiteral(this.target.database)} AND table = ${clickHouseLiteral(this.localName)} AND active`,
        ),
      );
    }
    return {
      events: n,
      bytesOnDisk,
      dataBytes: bytesOnDisk,
      oldestTs: n > 0 ? Number(row.lo) : null,
      newestTs: n > 0 ? Number(row.hi) : null,
    };
  }

  /** Runs SQL on the next server and returns its rows. For benchmarks and tests; the API never passes user text here. */
  async runSql(sql: string, totals = false): Promise<Record<string, unknown>[]> {
    return (await this.rows({ sql, totals })).rows;
  }

  /** Fails while any listed server cannot answer. */
  async ping(): Promise<void> {
    for (const [i, c] of this.clients.entries()) {
      const r = await c.ping();
      if (!r.success)
        throw storeUnavailable(`ClickHouse at ${this.target.hosts[i]} is unreachable (${reason(r.error)}).`);
    }
  }

  async close(): Promise<void> {
    while (this.writing) await this.writing;
    await Promise.all(this.clients.map((c) => c.close()));
  }
}

async function firstValue(client: ClickHouseClient, query: string): Promise<unknown> {
  const result = await client.query({ query, format: 'JSONEachRow' });
  const rows = await result.json<{ v: unknown }>();
  return rows[0]?.v;
}

const codeOf = (err: unknown): string => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
};

function isUnreachable(err: unknown): boolean {
  if (err instanceof ClickHouseError) return false;
  if (UNREACHABLE.has(codeOf(err)) || UNREACHABLE.has(codeOf((err as { cause?: unknown } | null)?.cause)))
    return true;
  const message = (err as { message?: unknown } | null)?.message;
  return typeof message === 'string' && /socket hang up|Timeout error|connect ECONNREFUSED/i.test(message);
}

/** Why a server could not be used, in words. */
function reason(err: unknown): string {
  const code = codeOf(err) || codeOf((err as { cause?: unknown } | null)?.cause);
  if (UNREACHABLE_REASONS[code]) return UNREACHABLE_REASONS[code] as string;
  const message = (err as { message?: unknown } | null)?.message;
  return code || (typeof message === 'string' ? message.slice(0, 200) : 'no answer');
}

/** Adds the columns a table made by an earlier release lacks. */
async function addLaterColumns(c: ClickHouseClient, database: string, table: string): Promise<void> {
  const res = await c.query({
    query: `SELECT name FROM system.columns WHERE database = ${clickHouseLiteral(database)} AND table = ${clickHouseLiteral(table)}`,
    format: 'JSONEachRow',
  });
  const have = new Set(((await res.json()) as Array<{ name: string }>).map((r) => r.name));
  for (const name of LATER_COLUMNS)
    if (!have.has(name)) await c.command({ query: addColumnSql(database, table, name) });
}
