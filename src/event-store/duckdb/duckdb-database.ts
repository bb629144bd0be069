import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import type { ColdFiles } from './cold-files.js';
import type { FieldColumns } from './field-columns.js';
import type { MetricBuckets } from './metric-buckets.js';
import type { StatementGate } from './statement-gate.js';
import type { StreamSets } from './stream-sets.js';
import type { WordIndex } from './word-index.js';

/**
 * The open database the DuckDB store's parts share (duckdb-event-store.ts): its appends,
 * its reads (the dialect's driver) and its maintenance each hold this, not each other's
 * state.
 */
export interface DuckDbDatabase {
  readonly instance: DuckDBInstance;
  /** Appends, deletes, checkpoints and the stream membership writes. */
  readonly writer: DuckDBConnection;
  /** The shared read connection of stats and raw SQL (plans run on connections of their own). */
  readonly reader: DuckDBConnection;
  /** No write commits while a statement is planned (statement-gate.ts). */
  readonly gate: StatementGate;
  /** `events.duckdb` in the data dir; null for an in-memory store. */
  readonly file: string | null;
  /** Word index (ADR 0004): the blooms. */
  readonly words: WordIndex;
  /** Whether queries use the word index (it is kept either way). */
  readonly useWords: boolean;
  /** Each event's stream membership (ADR 0016). */
  readonly sets: StreamSets;
  /** Extra fields in columns of their own (field-columns.ts, ADR 0017). */
  readonly extras: FieldColumns;
  /** Log metrics' buckets and series (metric-buckets.ts, ADR 0035). */
  readonly metrics: MetricBuckets;
  /** The cold tier's files (cold-files.ts, ADR 0031); null without a cold directory. */
  readonly cold: ColdFiles | null;
}
