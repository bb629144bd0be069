import { Readable } from 'node:stream';
import { type ClickHouseClient, ClickHouseError, ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { type ClickHouseTarget, parseClickHouseUrl } from '../../config/clickhouse-url.js';
import type { NormalisedEvent, StoredEvent } from '../../core/event.js';
import { storeUnavailable } from '../../errors/errors.js';
import { StartupError } from '../../errors/startup.js';
import type { FilterNode } from '../../filter/ast.js';
import type { BackupOpen, BackupStep, BackupStepResult } from '../backup-store.js';
import type {
  ColdFileRecord,
  ColdImport,
  ColdImportResult,
  ColdMove,
  ColdMoveResult,
  ColdVerify,
  ColdVerifyResult,
  EngineEventStore,
  EventStoreStats,
  ReadReach,
} from '../event-store.js';
import type { ExecOptions, QueryPlan, ResultOf, SearchPlan, TimeWindow } from '../query-plan.js';
import type { ReadScope, StreamRules } from '../read-scope.js';
import type { MetricRule } from '../rollups/metric-rollups.js';
import type {
  CoveredRange,
  MetricBackfill,
  MetricBackfillResult,
  MetricBucketRow,
  MetricBucketsRead,
  MetricTotalRow,
  MetricUpkeep,
} from '../rollups/metric-store.js';
import { quoteIdent, SqlParams, type SqlValue, sqlTime } from '../sql/sql-params.js';
import { StoreRuntime } from '../store-runtime.js';
import { clickHouseDialect } from './clickhouse-dialect.js';
import { ClickHouseDriver } from './clickhouse-driver.js';
import { clickHouseError, reason } from './clickhouse-errors.js';
import { clickHouseBind, compileFilter } from './clickhouse-filter-compiler.js';
import { clickHouseLiteral } from './clickhouse-literal.js';
import type { Compiled } from './clickhouse-plans.js';
import {
  addColumnSql,
  createDistributedTable,
  createLocalTable,
  DAY_MS,
  jsonEachRow,
  LATER_COLUMNS,
} from './clickhouse-schema.js';

/** Events per insert at most: a group of waiting appends is written as one insert up to this. */
const MAX_INSERT_EVENTS = 50_000;

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

/**
 * The event store on ClickHouse (ADR 0006): its dialect (clickhouse-dialect.ts) run by the
 * store runtime, its driver (clickhouse-driver.ts) spreading requests over the listed
 * servers in turn; here, its tables, appends and retention. Alone, a server holds `events`
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
export class ClickHouseEventStore implements EngineEventStore {
  readonly kind = 'clickhouse' as const;
  readonly capabilities = { interrupt: true, re2: true };
  private pending: PendingAppend[] = [];
  private writing: Promise<void> | null = null;
  /** The table queries read and inserts write (the Distributed one on a cluster), quoted. */
  private readonly table: string;
  private readonly driver: ClickHouseDriver;
  private readonly runtime: StoreRuntime<Compiled>;
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
    this.driver = new ClickHouseDriver(clients, this.table);
    this.runtime = new StoreRuntime(clickHouseDialect(this.driver, this.table));
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
      await store.runtime.loadHistogram();
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
          const result = await this.driver.client().exec({
            query: `INSERT INTO ${this.table} FORMAT JSONEachRow`,
            values: Readable.from([body]),
            ...(this.target.cluster ? { clickhouse_settings: { insert_distributed_sync: 1 } } : {}),
          });
          result.stream.resume();
          for (const p of group) this.runtime.appended(p.events);
          for (const p of group) p.resolve({ storedAt });
        } catch (err) {
          const mapped = clickHouseError(err);
          for (const p of group) p.reject(mapped);
        }
      }
    } finally {
      this.writing = null;
    }
  }

  /** Runs a plan within its scope (store-runtime.ts); each statement goes to the next server. */
  execute<P extends QueryPlan>(plan: P, opts: ExecOptions = {}): Promise<ResultOf<P>> {
    return this.runtime.execute(plan, opts);
  }

  stream(plan: SearchPlan, opts: ExecOptions = {}): AsyncGenerator<StoredEvent> {
    return this.runtime.stream(plan, opts);
  }

  getById(evId: string, scope: ReadScope): Promise<StoredEvent | null> {
    return this.runtime.getById(evId, scope);
  }

  estimateInRange(fromMs: number, toMs: number): number {
    return this.runtime.estimateInRange(fromMs, toMs);
  }

  appendedElsewhere(count: number, fromMs: number, toMs: number): void {
    this.runtime.appendedElsewhere(count, fromMs, toMs);
  }

  /** The per-hour counts behind estimateInRange (hour start ms, events). */
  hourCounts(): Array<[number, number]> {
    return this.runtime.hourCounts();
  }

  /** Kills the statements of a piece of work on every server (clickhouse-driver.ts). */
  abandon(tagPrefix: string): Promise<void> {
    return this.driver.abandon(tagPrefix);
  }

  /** Reads scopes by their filters: membership is not kept here (ADR 0016). */
  async setStreamRules(_rules: StreamRules): Promise<void> {}

  /** Log metrics are not counted on ClickHouse yet (ADR 0035): no rules kept, no buckets. */
  async setMetricRules(_rules: readonly MetricRule[]): Promise<void> {}

  async metricBuckets(_read: MetricBucketsRead): Promise<MetricBucketRow[] | null> {
    return null;
  }

  async metricCounts(_metric: number, _generation: number): Promise<{ series: number; dropped: number }> {
    return { series: 0, dropped: 0 };
  }

  async metricTotals(
    _metric: number,
    _generation: number,
    _scope: ReadScope,
  ): Promise<MetricTotalRow[] | null> {
    return null;
  }

  async maintainMetrics(_nowMs: number): Promise<MetricUpkeep> {
    return { expired: 0, compacted: 0, more: false };
  }

  /** Backups of ClickHouse are the engine's own (docs/operations/backup.md). */
  async openBackup(_req: BackupOpen): Promise<null> {
    return null;
  }

  async releaseBackup(_id: string): Promise<boolean> {
    return false;
  }

  async backupStep(_id: string, _step: BackupStep): Promise<BackupStepResult> {
    throw new Error('The ClickHouse store takes no backups of its own.');
  }

  async interruptBackup(_id: string): Promise<void> {}

  async closeBackup(_id: string): Promise<void> {}

  async backfillMetric(_req: MetricBackfill): Promise<MetricBackfillResult | null> {
    return null;
  }

  async metricBackfilled(_metric: number, _generation: number): Promise<CoveredRange[]> {
    return [];
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
      throw clickHouseError(err);
    }
    if (deleted > 0) await this.runtime.loadHistogram();
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
      const { rows } = await this.runtime.run({
        sql: `SELECT count() AS n FROM ${this.table} WHERE ${where}`,
      });
      const n = Number(rows[0]?.n ?? 0);
      if (n === 0) return 0;
      for (const c of this.clients)
        await c.command({ query: `ALTER TABLE ${this.local} DELETE WHERE ${where}` });
      await this.mutationsDone();
      await this.runtime.loadHistogram();
      return n;
    } catch (err) {
      throw clickHouseError(err);
    }
  }

  /**
   * New `pattern_id`s of events (re-mining): one mutation on each server's own table (a
   * shard holds only its events), `transform` mapping each listed `ev_id` to its id, waited
   * for. The list is written into the statement (18.16 binds no values), so the statement
   * may be longer than the 256 KiB a query is by default.
   */
  async setPatternIds(range: TimeWindow, ids: ReadonlyArray<readonly [string, string]>): Promise<void> {
    if (!ids.length) return;
    const evIds = ids.map(([e]) => clickHouseLiteral(e)).join(',');
    const patternIds = ids.map(([, p]) => clickHouseLiteral(p)).join(',');
    const from = clickHouseLiteral(Math.floor(range.fromMs));
    const to = clickHouseLiteral(Math.ceil(range.toMs));
    const query = `ALTER TABLE ${this.local} UPDATE "pattern_id" = transform("ev_id", [${evIds}], [${patternIds}], '') WHERE "ts" >= ${from} AND "ts" < ${to} AND "ev_id" IN (${evIds})`;
    try {
      for (const c of this.clients)
        await c.command({ query, clickhouse_settings: { max_query_size: String(query.length + 1024) } });
      await this.mutationsDone();
    } catch (err) {
      throw clickHouseError(err);
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

  /** No cold tier on ClickHouse: its own storage policies move parts (docs/operations/clickhouse.md). */
  async moveCold(_move: ColdMove): Promise<ColdMoveResult | null> {
    return null;
  }

  async dropOldestCold(): Promise<{ events: number; bytes: number }> {
    return { events: 0, bytes: 0 };
  }

  async coldFiles(): Promise<ColdFileRecord[]> {
    return [];
  }

  async verifyCold(_req: ColdVerify): Promise<ColdVerifyResult | null> {
    return null;
  }

  async importCold(_req: ColdImport): Promise<ColdImportResult | null> {
    return null;
  }

  async countHot(filters: readonly FilterNode[]): Promise<number[]> {
    if (!filters.length) return [];
    const params = new SqlParams(clickHouseBind);
    const counts = filters.map((f, i) => `countIf(${compileFilter(f, params)}) AS c${i}`);
    try {
      const { rows } = await this.runtime.run({ sql: `SELECT ${counts.join(', ')} FROM ${this.table}` });
      return filters.map((_, i) => Number(rows[0]?.[`c${i}`] ?? 0));
    } catch (err) {
      throw clickHouseError(err);
    }
  }

  /** No word index and no cold tier: ClickHouse's own skip indexes decide what it reads. */
  async readReach(): Promise<ReadReach> {
    return { index: null, cold: null };
  }

  async stats(): Promise<EventStoreStats> {
    const { rows } = await this.runtime.run({
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

  /**
   * Runs SQL on the next server and returns its rows. For benchmarks and tests; the API
   * never passes user text here. `totals` true: read in the `JSON` format, whose grand
   * totals row it keeps. Values (the worker passes some, store-worker.ts) are not bound:
   * ClickHouse 18.16 binds none, the SQL holds its literals.
   */
  async runSql(
    sql: string,
    totals: boolean | readonly SqlValue[] = false,
  ): Promise<Record<string, unknown>[]> {
    return (await this.runtime.run({ sql, totals: totals === true })).rows;
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
