import type { NormalisedEvent, StoredEvent } from '../core/event.js';
import type { FilterNode } from '../filter/ast.js';
import type { ExecOptions, QueryPlan, ResultOf, SearchPlan } from './query-plan.js';
import type { ReadScope, StreamRules } from './read-scope.js';
import type { SqlValue } from './sql/sql-params.js';

/** What a backend can do, so callers choose a strategy without knowing the engine. */
export interface EventStoreCapabilities {
  /** Running statements can be interrupted (DuckDB interrupt, ClickHouse KILL QUERY). */
  readonly interrupt: boolean;
  /** Regular expressions are RE2 inside the engine. */
  readonly re2: boolean;
}

export interface EventStoreStats {
  events: number;
  /** Bytes the store occupies on disk (0 when unknown). */
  bytesOnDisk: number;
  /**
   * Bytes its events take: without the free space deletes left in the file (DuckDB keeps
   * and reuses it). What `retentionMaxBytes` is compared with.
   */
  dataBytes: number;
  oldestTs: number | null;
  newestTs: number | null;
}

/**
 * The event storage contract. Backends: DuckDB (embedded default) and ClickHouse
 * (`eventStoreUrl`), chosen by `openEventStore` (open-event-store.ts).
 * All times are Unix milliseconds.
 */
export interface EventStore {
  readonly kind: 'duckdb' | 'clickhouse';
  readonly capabilities: EventStoreCapabilities;
  /**
   * Appends a batch durably (committed before the promise resolves) and returns the
   * `stored_at` it gave every event of the batch.
   */
  append(events: readonly NormalisedEvent[]): Promise<{ storedAt: number }>;
  /**
   * Runs a query plan within its scope (`plan.scope`, applied by plan-executor.ts);
   * aborting `opts.signal` interrupts the engine's work.
   */
  execute<P extends QueryPlan>(plan: P, opts?: ExecOptions): Promise<ResultOf<P>>;
  /** Every event a search matches within its scope, in order, streamed (exports). */
  stream(plan: SearchPlan, opts?: ExecOptions): AsyncGenerator<StoredEvent>;
  /**
   * About how many events lie in a time range, ignoring filters, from an in-memory
   * histogram (no query): sizes query slices at no cost.
   */
  estimateInRange(fromMs: number, toMs: number): number;
  /**
   * Another process appended `count` events with times in [fromMs, toMs] to the same store
   * (a cluster node's commit): counted in the histogram behind `estimateInRange`.
   */
  appendedElsewhere(count: number, fromMs: number, toMs: number): void;
  /**
   * The streams' rules, from which read scopes are made (ADR 0016). A store may keep each
   * event's membership of them and read scopes made under the same rules by it; resolves
   * once the stored events have it (at once for a store that keeps none).
   */
  setStreamRules(rules: StreamRules): Promise<void>;
  /** One event by id, or null, as well when it lies outside `scope`. */
  getById(evId: string, scope: ReadScope): Promise<StoredEvent | null>;
  /**
   * Deletes events whose `ts` is older than the cut-off, except those `keep` matches (the
   * events of streams kept longer: retention per stream); returns how many.
   */
  deleteOlderThan(tsMs: number, keep?: FilterNode): Promise<number>;
  /**
   * Stops the statements still running whose tag (`ExecOptions.tag`) starts with
   * `tagPrefix`, on every server of a shared engine: the work of a node that died, taken
   * over by this one. Nothing to do for an embedded engine (its statements ended with
   * their process).
   */
  abandon(tagPrefix: string): Promise<void>;
  stats(): Promise<EventStoreStats>;
  /** Fails when the store cannot answer (for /api/health). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * An engine's own store, as the event-store worker serves it (store-worker.ts): the
 * contract, and what tests, benchmarks and the worker's proxy ask of an engine beyond it.
 */
export interface EngineEventStore extends EventStore {
  /** The per-hour counts behind `estimateInRange` (hour start ms, events). */
  hourCounts(): Array<[number, number]>;
  /** Runs raw SQL with its values and returns its rows: tests and benchmarks only. */
  runSql(sql: string, params: readonly SqlValue[]): Promise<Record<string, unknown>[]>;
  /**
   * Writes the engine's write-ahead log into its main file, where it keeps one of its own
   * (DuckDB); absent otherwise.
   */
  checkpoint?(): Promise<void>;
}

/** The error every store throws for a statement stopped through its `signal`. */
export function abortError(): Error {
  const err = new Error('The query was stopped.');
  err.name = 'AbortError';
  return err;
}
