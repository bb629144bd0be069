import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Worker } from 'node:worker_threads';
import type { NormalisedEvent, StoredEvent } from '../../core/event.js';
import { startModuleWorker } from '../../core/module-worker.js';
import { unavailable } from '../../errors/errors.js';
import type { FilterNode } from '../../filter/ast.js';
import type { BackupOpen, BackupSnapshot, BackupStep, BackupStepResult } from '../backup-store.js';
import {
  abortError,
  type ColdFileRecord,
  type ColdImport,
  type ColdImportResult,
  type ColdMove,
  type ColdMoveResult,
  type ColdVerify,
  type ColdVerifyResult,
  type EventStore,
  type EventStoreCapabilities,
  type EventStoreStats,
  type ReadReach,
} from '../event-store.js';
import { HourHistogram } from '../hour-histogram.js';
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
import type { SqlValue } from '../sql/sql-params.js';
import {
  eventValues,
  fromWire,
  MESSAGE_VALUES,
  type StoreRequest,
  type StoreResponse,
  type WorkerStoreConfig,
} from './protocol.js';

/** Events per message when a stream (an export) is read from the worker (and MESSAGE_VALUES at most). */
const STREAM_BATCH = 1000;

type Body<R> = R extends unknown ? Omit<R, 'id'> : never;

interface Waiting {
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  onProgress?: (fraction: number) => void;
}

/**
 * An event store (DuckDB or ClickHouse) run in a worker thread (store-worker.ts), behind
 * the same `EventStore` contract. The main thread keeps HTTP, parsing, normalisation,
 * triggers and live updates; the worker does the store's own work (DuckDB: data chunks,
 * commits, checkpoints; ClickHouse: insert bodies and requests), runs statements and
 * decodes their rows, so none of that blocks the event loop and the two cores share the
 * ingest work. Durability is unchanged: `append` resolves when the worker's store has
 * acknowledged it.
 */
export class WorkerEventStore implements EventStore {
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;
  /** Set once the worker has stopped: every request fails with it. */
  private dead: Error | null = null;
  private readonly hours = new HourHistogram();
  /** Resolved once the last append has been handed to the worker whole. */
  private posting: Promise<void> = Promise.resolve();

  private constructor(
    private readonly worker: Worker,
    readonly kind: 'duckdb' | 'clickhouse',
    readonly capabilities: EventStoreCapabilities,
  ) {
    worker.on('message', (m: StoreResponse) => this.receive(m));
    worker.on('error', (err) => this.fail(err));
    worker.on('exit', (code) => this.fail(new Error(`The event store worker exited (code ${code}).`)));
  }

  static async open(config: WorkerStoreConfig): Promise<WorkerEventStore> {
    const worker = startWorker(config);
    const ready = await new Promise<Extract<StoreResponse, { ready: true }>>((resolve, reject) => {
      const onExit = (code: number) => reject(new Error(`The event store worker exited (code ${code}).`));
      worker.once('error', reject);
      worker.once('exit', onExit);
      worker.once('message', (m: StoreResponse) => {
        worker.off('error', reject);
        worker.off('exit', onExit);
        if ('ready' in m) resolve(m);
        else if ('error' in m) reject(fromWire(m.error));
        else reject(new Error('The event store worker answered before it was ready.'));
      });
    }).catch(async (err: unknown) => {
      await worker.terminate();
      throw err;
    });
    const store = new WorkerEventStore(worker, ready.kind, ready.capabilities);
    store.hours.reset(await store.call<Array<[number, number]>>({ op: 'hourCounts' }));
    return store;
  }

  private receive(m: StoreResponse): void {
    const w = this.waiting.get(m.id);
    if (!w) return;
    if ('progress' in m) {
      w.onProgress?.(m.progress);
      return;
    }
    this.waiting.delete(m.id);
    if ('error' in m) w.reject(fromWire(m.error));
    else if ('value' in m) w.resolve(m.value);
  }

  private fail(err: Error): void {
    if (this.dead) return;
    this.dead = unavailable(`The event store stopped: ${err.message}`);
    for (const w of this.waiting.values()) w.reject(this.dead);
    this.waiting.clear();
  }

  private call<T>(
    body: Body<StoreRequest>,
    opts: ExecOptions = {},
    onId?: (id: number) => void,
    givenId?: number,
  ): Promise<T> {
    if (this.dead) return Promise.reject(this.dead);
    const id = givenId ?? this.nextId++;
    onId?.(id);
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, {
        resolve: resolve as (v: unknown) => void,
        reject,
        ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
      });
      this.worker.postMessage({ ...body, id });
    });
  }

  /** Runs `body`; aborting `signal` asks the worker to interrupt that request. */
  private stoppable<T>(body: Body<StoreRequest>, opts: ExecOptions): Promise<T> {
    const { signal } = opts;
    if (signal?.aborted) return Promise.reject(abortError());
    let id = 0;
    const onAbort = () => {
      if (id) this.worker.postMessage({ id: this.nextId++, op: 'abort', target: id });
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    return this.call<T>(body, opts, (i) => {
      id = i;
    }).finally(() => signal?.removeEventListener('abort', onAbort));
  }

  async append(events: readonly NormalisedEvent[]): Promise<{ storedAt: number }> {
    // Appends reach the worker, and so commit, in the order they were called, even when
    // a large one is still being handed over in parts.
    const previous = this.posting;
    let posted!: () => void;
    this.posting = new Promise<void>((resolve) => {
      posted = resolve;
    });
    let result: Promise<{ storedAt: number }>;
    try {
      await previous;
      result = (await this.post(events)).stored;
    } finally {
      posted();
    }
    const stored = await result;
    this.hours.add(events);
    return stored;
  }

  /** Sends an append, a large one in parts sharing its id (the worker commits them as one). */
  private async post(events: readonly NormalisedEvent[]): Promise<{ stored: Promise<{ storedAt: number }> }> {
    const id = this.nextId++;
    let from = 0;
    let values = 0;
    for (let i = 0; i < events.length; i++) {
      const own = eventValues(events[i] as NormalisedEvent);
      values += own;
      if (values <= MESSAGE_VALUES || i === from) continue;
      if (this.dead) throw this.dead;
      this.worker.postMessage({ id, op: 'appendPart', events: events.slice(from, i) });
      await nextTurn();
      from = i;
      values = own;
    }
    const last = from === 0 ? events : events.slice(from);
    return { stored: this.call({ op: 'append', events: last as unknown[] }, {}, undefined, id) };
  }

  execute<P extends QueryPlan>(plan: P, opts: ExecOptions = {}): Promise<ResultOf<P>> {
    return this.stoppable<ResultOf<P>>(
      { op: 'execute', plan, progress: !!opts.onProgress, tag: opts.tag },
      opts,
    );
  }

  /**
   * A search's events, read from the worker a batch ahead: the worker reads the next batch
   * while this thread hands out the one it has (asked for one at a time, each thread waited
   * for the other: a CSV export ran at half the speed of its slower side).
   */
  async *stream(plan: SearchPlan, opts: ExecOptions = {}): AsyncGenerator<StoredEvent> {
    const stream = await this.stoppable<number>({ op: 'streamOpen', plan, tag: opts.tag }, {});
    const { signal } = opts;
    const next = () =>
      this.stoppable<{ events: StoredEvent[]; done: boolean }>(
        { op: 'streamNext', stream, max: STREAM_BATCH, maxValues: MESSAGE_VALUES },
        signal ? { signal } : {},
      );
    let done = false;
    let ahead: ReturnType<typeof next> | undefined;
    try {
      ahead = next();
      while (ahead) {
        if (signal?.aborted) throw abortError();
        const batch = await ahead;
        ahead = undefined;
        done = batch.done;
        if (!done) ahead = next();
        yield* batch.events;
      }
    } finally {
      // Left early: the batch asked for ahead is let go before the stream is closed.
      if (ahead) await ahead.catch(() => undefined);
      if (!done && !this.dead) await this.call({ op: 'streamClose', stream }).catch(() => undefined);
    }
  }

  estimateInRange(fromMs: number, toMs: number): number {
    return this.hours.estimate(fromMs, toMs);
  }

  appendedElsewhere(count: number, fromMs: number, toMs: number): void {
    this.hours.addSpread(count, fromMs, toMs);
  }

  setStreamRules(rules: StreamRules): Promise<void> {
    return this.call({ op: 'setStreamRules', rules });
  }

  setMetricRules(rules: readonly MetricRule[]): Promise<void> {
    return this.call({ op: 'setMetricRules', rules });
  }

  metricBuckets(read: MetricBucketsRead): Promise<MetricBucketRow[] | null> {
    return this.call({ op: 'metricBuckets', read });
  }

  metricCounts(metric: number, generation: number): Promise<{ series: number; dropped: number }> {
    return this.call({ op: 'metricCounts', metric, generation });
  }

  metricTotals(metric: number, generation: number, scope: ReadScope): Promise<MetricTotalRow[] | null> {
    return this.call({ op: 'metricTotals', metric, generation, scope });
  }

  maintainMetrics(nowMs: number): Promise<MetricUpkeep> {
    return this.call({ op: 'maintainMetrics', nowMs });
  }

  backfillMetric(req: MetricBackfill): Promise<MetricBackfillResult | null> {
    return this.call({ op: 'backfillMetric', req });
  }

  metricBackfilled(metric: number, generation: number): Promise<CoveredRange[]> {
    return this.call({ op: 'metricBackfilled', metric, generation });
  }

  getById(evId: string, scope: ReadScope): Promise<StoredEvent | null> {
    return this.call({ op: 'getById', evId, scope });
  }

  async deleteOlderThan(tsMs: number, keep?: FilterNode): Promise<number> {
    const deleted = await this.call<number>({ op: 'deleteOlderThan', tsMs, keep });
    this.hours.reset(await this.call<Array<[number, number]>>({ op: 'hourCounts' }));
    return deleted;
  }

  setPatternIds(range: TimeWindow, ids: ReadonlyArray<readonly [string, string]>): Promise<void> {
    return this.call({ op: 'setPatternIds', range, ids });
  }

  stats(): Promise<EventStoreStats> {
    return this.call({ op: 'stats' });
  }

  moveCold(move: ColdMove): Promise<ColdMoveResult | null> {
    return this.call({ op: 'moveCold', move });
  }

  coldFiles(): Promise<ColdFileRecord[]> {
    return this.call({ op: 'coldFiles' });
  }

  async dropOldestCold(bytes: number): Promise<{ events: number; bytes: number }> {
    const dropped = await this.call<{ events: number; bytes: number }>({ op: 'dropOldestCold', bytes });
    if (dropped.events) this.hours.reset(await this.call<Array<[number, number]>>({ op: 'hourCounts' }));
    return dropped;
  }

  countHot(filters: readonly FilterNode[]): Promise<number[]> {
    return this.call({ op: 'countHot', filters });
  }

  verifyCold(req: ColdVerify): Promise<ColdVerifyResult | null> {
    return this.call({ op: 'verifyCold', req });
  }

  importCold(req: ColdImport): Promise<ColdImportResult | null> {
    return this.call({ op: 'importCold', req });
  }

  readReach(filter: FilterNode, scope: ReadScope, range: TimeWindow): Promise<ReadReach> {
    return this.call({ op: 'readReach', filter, scope, range });
  }

  openBackup(req: BackupOpen): Promise<BackupSnapshot | null> {
    return this.call({ op: 'openBackup', req });
  }

  releaseBackup(backup: string): Promise<boolean> {
    return this.call({ op: 'releaseBackup', backup });
  }

  backupStep(backup: string, step: BackupStep): Promise<BackupStepResult> {
    return this.call({ op: 'backupStep', backup, step });
  }

  interruptBackup(backup: string): Promise<void> {
    return this.call({ op: 'interruptBackup', backup });
  }

  closeBackup(backup: string): Promise<void> {
    return this.call({ op: 'closeBackup', backup });
  }

  ping(): Promise<void> {
    return this.call({ op: 'ping' });
  }

  abandon(tagPrefix: string): Promise<void> {
    return this.call({ op: 'abandon', tagPrefix });
  }

  /** Plain SQL on the store's read connection: benchmarks and tests only, never user text. */
  runSql(sql: string, params: readonly SqlValue[] = []): Promise<Record<string, unknown>[]> {
    return this.call({ op: 'runSql', sql, params });
  }

  /** Writes the WAL into the main file. */
  checkpoint(): Promise<void> {
    return this.call({ op: 'checkpoint' });
  }

  async close(): Promise<void> {
    if (!this.dead) await this.call({ op: 'close' });
    this.dead ??= unavailable('The event store is closed.');
    await this.worker.terminate();
  }
}

/** Starts store-worker (core/module-worker.ts: the build's `.js`, or the `.ts` through tsx). */
function startWorker(opts: WorkerStoreConfig): Worker {
  return startModuleWorker(import.meta.url, './store-worker', opts);
}
