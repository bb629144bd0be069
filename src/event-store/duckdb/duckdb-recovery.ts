import { statfsSync } from 'node:fs';
import { storageFull } from '../../errors/errors.js';
import type { StreamRules } from '../read-scope.js';
import type { MetricRule } from '../rollups/metric-rollups.js';
import { DuckDbEventStore, type DuckDbEventStoreOptions } from './duckdb-event-store.js';
import { MIN_FREE_BYTES } from './duckdb-maintenance.js';

/** DuckDB's text for a fatal error, and for every statement after one: the database is invalidated. */
const INVALIDATED = /database has been invalidated|FATAL Error/i;

/** Whether an error (or the engine's error it wraps, `cause`) says DuckDB invalidated the database. */
export function isInvalidatedError(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; depth < 3 && e && typeof e === 'object'; depth++) {
    const message = (e as { message?: unknown }).message;
    if (typeof message === 'string' && INVALIDATED.test(message)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** At most one attempt to open the store again this often, while it fails. */
const REOPEN_EVERY_MS = 1_000;

/**
 * A DuckDB store that outlives a fatal error. DuckDB invalidates a database after one (a
 * checkpoint or a commit's checkpoint that found no room on the disk, an I/O error):
 * every statement fails, reads included, until the database is opened again, which used to
 * take a restart. The holder notes such a failure and, at the next request once the disk
 * has room, closes the store and opens it again: DuckDB replays its WAL, so every
 * acknowledged event is kept, and the store gets the streams' rules and log metrics it had.
 */
export class DuckDbRecovery {
  private invalidated = false;
  /** The invalidated store is closed and no new one is open yet. */
  private closed = false;
  private lastAttempt = 0;
  private reopening: Promise<void> | null = null;
  private rules: StreamRules | null = null;
  private metricRules: readonly MetricRule[] | null = null;

  constructor(
    private store: DuckDbEventStore,
    private readonly options: DuckDbEventStoreOptions,
  ) {}

  /** Notes a failed request: an invalidated database is opened again before the next. */
  failed(err: unknown): void {
    if (isInvalidatedError(err)) this.invalidated = true;
  }

  /** The streams' rules in force, given again to a store opened anew. */
  rulesSet(rules: StreamRules): void {
    this.rules = rules;
  }

  /** The log metrics counted, given again to a store opened anew. */
  metricRulesSet(rules: readonly MetricRule[]): void {
    this.metricRules = rules;
  }

  /**
   * The store to serve a request with: opened again first when it was invalidated and the
   * disk has room. While it cannot be, reads and writes answer storage_full (507) and the
   * health check fails.
   */
  async current(): Promise<DuckDbEventStore> {
    if (
      this.invalidated &&
      !this.reopening &&
      Date.now() - this.lastAttempt >= REOPEN_EVERY_MS &&
      this.room()
    )
      this.reopening = this.reopen().finally(() => {
        this.reopening = null;
      });
    if (this.reopening) await this.reopening;
    if (this.closed)
      throw storageFull(
        'The event store stopped after its disk filled up and cannot open again yet; retry once space is freed.',
      );
    return this.store;
  }

  /** Closes the store for good (the worker's `close`). */
  async close(): Promise<void> {
    if (this.reopening) await this.reopening;
    if (!this.closed) await this.store.close();
    this.closed = true;
  }

  private room(): boolean {
    if (this.options.dataDir === ':memory:') return true;
    try {
      const s = statfsSync(this.options.dataDir);
      return Number(s.bavail) * Number(s.bsize) >= MIN_FREE_BYTES;
    } catch {
      return false;
    }
  }

  private async reopen(): Promise<void> {
    this.lastAttempt = Date.now();
    if (!this.closed) {
      // An invalidated database's statements fail, its close may too: what it holds goes anyway.
      await this.store.close().catch(() => undefined);
      this.closed = true;
    }
    let store: DuckDbEventStore;
    try {
      store = await DuckDbEventStore.open(this.options);
    } catch {
      return; // still no room to replay the WAL (or the engine refuses): tried again later
    }
    this.store = store;
    this.closed = false;
    this.invalidated = false;
    // A failure here is the next request's to see (and an invalidation is noted by it).
    if (this.rules) await store.setStreamRules(this.rules).catch(() => undefined);
    if (this.metricRules) await store.setMetricRules(this.metricRules).catch(() => undefined);
  }
}
