import { AppError, type FieldErrors } from '../../errors/errors.js';
import { StartupError } from '../../errors/startup.js';
import type { FilterNode } from '../../filter/ast.js';
import type { BackupOpen, BackupStep } from '../backup-store.js';
import type { ClickHouseEventStoreOptions } from '../clickhouse/clickhouse-event-store.js';
import type { DuckDbEventStoreOptions } from '../duckdb/duckdb-event-store.js';
import type { ColdImport, ColdMove, ColdVerify } from '../event-store.js';
import type { TimeWindow } from '../query-plan.js';
import type { ReadScope, StreamRules } from '../read-scope.js';
import type { MetricRule } from '../rollups/metric-rollups.js';
import type { MetricBackfill, MetricBucketsRead } from '../rollups/metric-store.js';
import type { SqlValue } from '../sql/sql-params.js';

/**
 * The messages between the main thread and the event-store worker. Everything here is
 * plain data (structured clone): plans, events and results cross as they are; errors
 * cross as `WireError` and are rebuilt on the other side.
 */
/**
 * The most values (columns and fields) one message of events holds, either way: copying a
 * message blocks the event loop (about 3 µs for an event of 20 values), so a large append
 * goes in parts of about 2,000 ordinary events and a stream's page stops there too, fewer
 * for wide events (999 fields each would make a page of 1,000 a million values).
 */
export const MESSAGE_VALUES = 40_000;

/** The values an event puts in a message: its columns, and one per field. */
export function eventValues(event: { readonly fields: object }): number {
  let n = 20;
  for (const _ in event.fields) n++;
  return n;
}

/** Which store the worker opens (its `workerData`). */
export type WorkerStoreConfig =
  | { kind: 'duckdb'; options: DuckDbEventStoreOptions }
  | { kind: 'clickhouse'; options: ClickHouseEventStoreOptions };

export type StoreRequest =
  /** The first parts of a large append (no answer); the `append` with the same id ends it. */
  | { id: number; op: 'appendPart'; events: unknown[] }
  | { id: number; op: 'append'; events: unknown[] }
  | { id: number; op: 'execute'; plan: unknown; progress: boolean; tag: string | undefined }
  | { id: number; op: 'streamOpen'; plan: unknown; tag: string | undefined }
  | { id: number; op: 'abandon'; tagPrefix: string }
  | { id: number; op: 'streamNext'; stream: number; max: number; maxValues: number }
  | { id: number; op: 'streamClose'; stream: number }
  | { id: number; op: 'setStreamRules'; rules: StreamRules }
  | { id: number; op: 'setMetricRules'; rules: readonly MetricRule[] }
  | { id: number; op: 'metricBuckets'; read: MetricBucketsRead }
  | { id: number; op: 'metricCounts'; metric: number; generation: number }
  | { id: number; op: 'metricTotals'; metric: number; generation: number; scope: ReadScope }
  | { id: number; op: 'maintainMetrics'; nowMs: number }
  | { id: number; op: 'backfillMetric'; req: MetricBackfill }
  | { id: number; op: 'metricBackfilled'; metric: number; generation: number }
  | { id: number; op: 'getById'; evId: string; scope: ReadScope }
  | { id: number; op: 'deleteOlderThan'; tsMs: number; keep: FilterNode | undefined }
  | { id: number; op: 'setPatternIds'; range: TimeWindow; ids: ReadonlyArray<readonly [string, string]> }
  | { id: number; op: 'hourCounts' }
  | { id: number; op: 'stats' }
  | { id: number; op: 'moveCold'; move: ColdMove }
  | { id: number; op: 'coldFiles' }
  | { id: number; op: 'dropOldestCold'; bytes: number }
  | { id: number; op: 'countHot'; filters: readonly FilterNode[] }
  | { id: number; op: 'verifyCold'; req: ColdVerify }
  | { id: number; op: 'importCold'; req: ColdImport }
  | { id: number; op: 'readReach'; filter: FilterNode; scope: ReadScope; range: TimeWindow }
  | { id: number; op: 'openBackup'; req: BackupOpen }
  | { id: number; op: 'releaseBackup'; backup: string }
  | { id: number; op: 'backupStep'; backup: string; step: BackupStep }
  | { id: number; op: 'interruptBackup'; backup: string }
  | { id: number; op: 'closeBackup'; backup: string }
  | { id: number; op: 'ping' }
  | { id: number; op: 'runSql'; sql: string; params: readonly SqlValue[] }
  | { id: number; op: 'checkpoint' }
  | { id: number; op: 'close' }
  /** Stops request `target` (an execute or a stream): the engine's statement is interrupted. */
  | { id: number; op: 'abort'; target: number };

export type StoreResponse =
  | { id: number; value: unknown }
  | { id: number; error: WireError }
  | { id: number; progress: number }
  /** Sent once, when the store is open (or failed to open: `error`). */
  | { id: 0; ready: true; kind: 'duckdb' | 'clickhouse'; capabilities: { interrupt: boolean; re2: boolean } };

export interface WireError {
  name: string;
  message: string;
  stack?: string;
  /** Node's and engines' error codes (ENOSPC, ...), which error mapping reads. */
  code?: unknown;
  app?: { status: number; code: string; errors?: FieldErrors; headers?: Record<string, string> };
  cause?: WireError;
}

export function toWire(err: unknown): WireError {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const wire: WireError = { name: err.name, message: err.message };
  if (err.stack) wire.stack = err.stack;
  const code = (err as { code?: unknown }).code;
  if (code !== undefined) wire.code = code;
  if (err instanceof AppError) {
    wire.app = { status: err.status, code: err.code };
    if (err.errors) wire.app.errors = err.errors;
    if (err.headers) wire.app.headers = err.headers;
  }
  const cause = (err as { cause?: unknown }).cause;
  if (cause !== undefined) wire.cause = toWire(cause);
  return wire;
}

/** The error as it was thrown in the worker: an AppError stays one, codes and names are kept. */
export function fromWire(wire: WireError): Error {
  const err: Error & { code?: unknown; cause?: unknown } = wire.app
    ? new AppError(wire.app.status, wire.app.code, wire.message, wire.app.errors, wire.app.headers)
    : wire.name === 'StartupError'
      ? new StartupError(wire.message)
      : new Error(wire.message);
  if (!wire.app) err.name = wire.name;
  if (wire.stack) err.stack = wire.stack;
  if (wire.code !== undefined && !wire.app) err.code = wire.code;
  if (wire.cause) err.cause = fromWire(wire.cause);
  return err;
}
