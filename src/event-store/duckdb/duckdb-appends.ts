import type { DuckDBAppender, DuckDBType, DuckDBValue } from '@duckdb/node-api';
import type { NormalisedEvent } from '../../core/event.js';
import type { StreamRules } from '../read-scope.js';
import type { MetricRule, RollupRow } from '../rollups/metric-rollups.js';
import type { MetricBackfill, MetricBackfillResult, MetricUpkeep } from '../rollups/metric-store.js';
import type { StoreRuntime } from '../store-runtime.js';
import { DuckDBDataChunk } from './duckdb-api.js';
import type { DuckDbDatabase } from './duckdb-database.js';
import type { DuckDbMaintenance } from './duckdb-maintenance.js';
import { appendValues, type TableOrder, tableOrder, tsValue } from './duckdb-schema.js';
import type { DuckDbStatement } from './duckdb-statements.js';
import { blockSlices } from './word-blocks.js';

/** DuckDB's vector size: a data chunk holds at most this many rows. */
const CHUNK_ROWS = 2048;

/** The table's appender, with its column types and order: new ones when a field gets a column. */
export interface TableAppender {
  appender: DuckDBAppender;
  types: DuckDBType[];
  order: TableOrder;
}

/**
 * The table's appender, with its column types and order. Every column after stream
 * membership must be an extra field's (field-columns.ts): a table that says otherwise is
 * refused rather than appended into.
 */
export async function openAppender(db: Pick<DuckDbDatabase, 'writer' | 'extras'>): Promise<TableAppender> {
  const order = await tableOrder(db.writer);
  const unknown = order.extras.filter((column) => db.extras.fieldOf(column) === undefined);
  if (unknown.length > 0)
    throw new Error(`the events table has columns of no known field: ${unknown.join(', ')}`);
  const appender = await db.writer.createAppender('events');
  const types = Array.from({ length: appender.columnCount }, (_, i) => appender.columnType(i));
  return { appender, types, order };
}

/**
 * The DuckDB store's writes of events: appends, each batch with its word-index blocks and
 * stream membership in one transaction, and the membership the stored events get under
 * new stream rules. All of them take turns in one queue.
 */
export class DuckDbAppends {
  private queue: Promise<unknown> = Promise.resolve();
  /** Set when the store starts closing: stream membership writes stop queuing steps. */
  private closing = false;

  constructor(
    private readonly db: DuckDbDatabase,
    private table: TableAppender,
    private readonly maintenance: DuckDbMaintenance,
    private readonly runtime: StoreRuntime<DuckDbStatement>,
    /** Events per part when writing stream membership under new rules. */
    private readonly membershipPartEvents: number,
  ) {}

  append(events: readonly NormalisedEvent[]): Promise<{ storedAt: number }> {
    // One appender, one batch at a time: appends are serialised, not interleaved.
    const run = this.queue.then(() => this.db.gate.write(() => this.appendNow(events)));
    this.queue = run.catch(() => undefined);
    void run.then(
      () => this.maintenance.checkpointWhenIdle(),
      () => undefined,
    );
    return run;
  }

  /**
   * The streams' rules, whose membership each event keeps (ADR 0016): appends write it at
   * once, and the stored events get it a part at a time (about `membershipPartEvents`
   * each, appends taking turns with the parts); resolves once they all have it.
   */
  setStreamRules(rules: StreamRules): Promise<void> {
    // Log metrics' stream sets: from the next append on.
    this.db.metrics.setStreams(rules);
    if (!this.db.sets.use(rules)) return Promise.resolve();
    return this.writeMembership(rules).catch((err) => {
      throw this.maintenance.writeError(err);
    });
  }

  /**
   * The log metrics to count by (ADR 0035), taken between two appends: an append that
   * completes after this resolves counts by them. The buckets of metrics no longer among
   * them, and of their older generations (a reset), are deleted then.
   */
  setMetricRules(rules: readonly MetricRule[]): Promise<void> {
    const run = this.queue.then(() =>
      this.db.gate.write(async () => {
        await this.db.metrics.prune(this.db.writer, rules);
        this.db.metrics.setRules(rules);
      }),
    );
    this.queue = run.catch(() => undefined);
    return run.catch((err) => {
      throw this.maintenance.writeError(err);
    });
  }

  /** The metric buckets' upkeep (metric-buckets.ts), between two appends. */
  maintainMetrics(nowMs: number): Promise<MetricUpkeep> {
    const run = this.queue.then(() =>
      this.db.gate.write(() => this.db.metrics.maintain(this.db.writer, nowMs)),
    );
    this.queue = run.catch(() => undefined);
    return run.catch((err) => {
      throw this.maintenance.writeError(err);
    });
  }

  /** A backfill window's rows and covered range (metric-buckets.ts), between two appends. */
  writeBackfill(
    req: MetricBackfill,
    rows: readonly RollupRow[],
    events: number,
  ): Promise<MetricBackfillResult> {
    const run = this.queue.then(() =>
      this.db.gate.write(() => this.db.metrics.writeBackfill(this.db.writer, req, rows, events)),
    );
    this.queue = run.catch(() => undefined);
    return run.catch((err) => {
      throw this.maintenance.writeError(err);
    });
  }

  /** No more stream membership steps are queued: the store is closing. */
  stopQueuing(): void {
    this.closing = true;
  }

  /** Resolves once what is queued has run. */
  settled(): Promise<unknown> {
    return this.queue;
  }

  /** Closes the appender (the store's close, once nothing is queued). */
  closeSync(): void {
    this.table.appender.closeSync();
  }

  private async writeMembership(rules: StreamRules): Promise<void> {
    const { gate, sets, writer } = this.db;
    // Each step in the append queue: between two appends, never inside one; none once the
    // store is closing (a step queued after `close` took the queue would meet it closed).
    const queued = (step: () => Promise<boolean>): Promise<boolean> => {
      const run = this.queue.then(() => (this.closing ? false : gate.write(step)));
      this.queue = run.catch(() => undefined);
      return run;
    };
    if (sets.stale(rules)) {
      if (!(await queued(() => sets.begin(writer, rules)))) return;
      for (const part of this.runtime.hourParts(this.membershipPartEvents))
        if (!(await queued(() => sets.writePart(writer, rules, part)))) return;
    }
    await queued(async () => {
      await sets.finish(writer, rules);
      return true;
    });
  }

  private async appendNow(batch: readonly NormalisedEvent[]): Promise<{ storedAt: number }> {
    const { writer, words, sets, extras, metrics } = this.db;
    const due = extras.due(batch);
    if (due.length > 0) await this.addFieldColumns(due);
    // The word index's blocks are time slices of the batch (tight ranges for its reads),
    // each slice's rows stored together, source by source.
    const events = [...batch].sort((a, b) => a.ts - b.ts);
    const rows = blockSlices(events.length).flatMap(([from, to]) => bySource(events.slice(from, to)));
    const storedAt = Date.now();
    const stored = tsValue(storedAt);
    // Word index (ADR 0004): the batch's blocks (plain data, a pure function) are written in
    // the transaction that appends its events: never events without a block, one WAL sync
    // (a commit of their own cost 3-4 ms per append, a third of a 1,000-event append).
    const blocks = words.build(events, storedAt);
    const { appender, types, order } = this.table;
    let inTransaction = false;
    try {
      // Log metrics (ADR 0035): the batch's partial aggregates, written with its events.
      const rollups = metrics.count(events, storedAt);
      await writer.run('BEGIN TRANSACTION');
      inTransaction = true;
      const written = await words.write(writer, blocks);
      await metrics.write(writer, rollups);
      for (let start = 0; start < rows.length; start += CHUNK_ROWS) {
        const chunkRows = rows.slice(start, start + CHUNK_ROWS);
        const n = chunkRows.length;
        const cols: DuckDBValue[][] = types.map(() => new Array<DuckDBValue>(n));
        // After the schema's columns: stream membership, then the extra fields' own.
        const own = new Map(
          order.extras.map((column, j) => [
            extras.fieldOf(column) as string,
            cols[order.schema.length + 1 + j] as DuckDBValue[],
          ]),
        );
        appendValues(order.schema, chunkRows, stored, cols, own);
        const bits = cols[order.schema.length] as DuckDBValue[];
        for (let i = 0; i < n; i++) bits[i] = sets.of(chunkRows[i] as NormalisedEvent, storedAt);
        const chunk = DuckDBDataChunk.create(types, n);
        chunk.setColumns(cols);
        appender.appendDataChunk(chunk);
      }
      appender.flushSync();
      // The commit makes the batch durable (in the WAL): only now is it acknowledged.
      await writer.run('COMMIT');
      inTransaction = false;
      words.add(written); // word index: the committed blocks in memory
      metrics.committed();
      this.runtime.appended(events);
    } catch (err) {
      metrics.aborted();
      try {
        appender.clear();
      } catch {
        // the appender's rows are dropped either way
      }
      if (inTransaction) await writer.run('ROLLBACK').catch(() => undefined);
      throw this.maintenance.writeError(err);
    }
    this.maintenance.wrote();
    return { storedAt };
  }

  /**
   * Gives `keys` columns of their own (field-columns.ts), and the appender the table's
   * new shape. A failure leaves them in the map: the append goes on either way.
   */
  private async addFieldColumns(keys: readonly string[]): Promise<void> {
    try {
      await this.db.extras.add(this.db.writer, keys);
    } catch {
      return; // e.g. no space for the catalog: the fields stay in the map
    }
    this.table.appender.closeSync();
    this.table = await openAppender(this.db);
  }
}

/**
 * A word-index block's rows as they are stored: each source's (host and app) events
 * together, in time order, sources in the order they first occur. A source's neighbouring
 * events (a context, a `host:` search) then sit in a few vectors instead of one per event.
 * It costs `ts` some compression (out of time order across sources) and saves a little on
 * `host` and `ev_id` (bench/README.md). Ordered within a block, not across a whole batch,
 * so a block's time range is also a run of rows: the word index's ranges read that run's
 * vectors, not every vector of a large append (a rare word's range at 1 M events: ~8,000
 * rows, not the 50,000 of the bench's appends). Nothing reads the physical order: every
 * order a query gives ends in `ev_id`.
 */
function bySource(events: readonly NormalisedEvent[]): NormalisedEvent[] {
  const groups = new Map<string, NormalisedEvent[]>();
  for (const e of events) {
    const key = `${e.host ?? ''}\u0000${e.app ?? ''}`;
    const group = groups.get(key);
    if (group) group.push(e);
    else groups.set(key, [e]);
  }
  if (groups.size === 1) return events as NormalisedEvent[];
  const out: NormalisedEvent[] = [];
  for (const group of groups.values()) for (const e of group) out.push(e);
  return out;
}
