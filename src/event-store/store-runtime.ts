import { decodeTime } from 'ulidx';
import type { StoredEvent } from '../core/event.js';
import { abortError } from './event-store.js';
import { HourHistogram } from './hour-histogram.js';
import { executePlan } from './plan-executor.js';
import type { ExecOptions, QueryPlan, ResultOf, SearchPlan, TimeWindow } from './query-plan.js';
import { inScope, type ReadScope } from './read-scope.js';
import type { StatementRows } from './result-shaper.js';
import type { EventStoreDialect } from './store-dialect.js';

const HOUR_MS = 3_600_000;

/**
 * What every engine's store does the same way around its dialect (store-dialect.ts), as
 * kysely's runtime driver wraps each dialect's driver: the per-hour estimate (kept by
 * appends, reloaded after deletes), plans run by the one executor within their scope, a
 * stream within its scope, an event by id as a statement of the dialect checked against
 * the reader's scope, and how a stopped or failed statement reaches the caller. An
 * engine's store holds one and answers these parts of the contract through it.
 */
export class StoreRuntime<S> {
  /** Events per hour (start ms → count), kept current by appends: sizes query slices. */
  private readonly perHour = new HourHistogram();

  constructor(private readonly dialect: EventStoreDialect<S>) {}

  /**
   * Runs one statement. One stopped through `opts.signal` (before it started, or while it
   * ran) fails with the contract's AbortError; an engine failure as the driver maps it.
   */
  async run(statement: S, opts: ExecOptions = {}): Promise<StatementRows> {
    if (opts.signal?.aborted) throw abortError();
    try {
      return await this.dialect.driver.run(statement, opts);
    } catch (err) {
      if (opts.signal?.aborted) throw abortError();
      throw this.dialect.driver.error(err);
    }
  }

  /** Runs a plan within its scope (plan-executor.ts): each statement through `run`. */
  execute<P extends QueryPlan>(plan: P, opts: ExecOptions = {}): Promise<ResultOf<P>> {
    return executePlan(this.dialect.plans, (statement, o) => this.run(statement, o), plan, opts);
  }

  /**
   * Every event a search matches within its scope, in its order, streamed: the driver's
   * batches read a row at a time, so an export of a million rows never holds them all.
   * Aborting `opts.signal` interrupts the engine's work and fails with AbortError; a
   * reader that stops early lets the driver end it.
   */
  async *stream(unscoped: SearchPlan, opts: ExecOptions = {}): AsyncGenerator<StoredEvent> {
    // Stopped before its first read: no statement starts, on any engine.
    if (opts.signal?.aborted) throw abortError();
    const { plans, driver } = this.dialect;
    const cursor = driver.stream(plans.scoped(unscoped), opts);
    const onAbort = () => cursor.interrupt();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    let finished = false;
    try {
      for await (const batch of cursor.batches) for (const row of batch) yield plans.event(row);
      finished = true;
    } catch (err) {
      if (opts.signal?.aborted) throw abortError();
      throw driver.error(err);
    } finally {
      opts.signal?.removeEventListener('abort', onAbort);
      cursor.close(finished);
    }
  }

  /** One event by id, or null, as well when it lies outside `scope` or the id is no ULID. */
  async getById(evId: string, scope: ReadScope): Promise<StoredEvent | null> {
    let receivedAt: number;
    try {
      receivedAt = decodeTime(evId);
    } catch {
      return null;
    }
    const { rows } = await this.run(this.dialect.plans.byId(evId, receivedAt));
    const event = rows[0] ? this.dialect.plans.event(rows[0]) : null;
    return event && inScope(scope, event) ? event : null;
  }

  /** About how many events lie in [fromMs, toMs), from the per-hour counts (no query). */
  estimateInRange(fromMs: number, toMs: number): number {
    return this.perHour.estimate(fromMs, toMs);
  }

  /** Events another process appended to the same store, counted in the estimate. */
  appendedElsewhere(count: number, fromMs: number, toMs: number): void {
    this.perHour.addSpread(count, fromMs, toMs);
  }

  /** Events this store appended (committed), counted in the estimate. */
  appended(events: ReadonlyArray<{ ts: number }>): void {
    this.perHour.add(events);
  }

  /** The per-hour counts behind the estimate (hour start ms, events). */
  hourCounts(): Array<[number, number]> {
    return this.perHour.entries();
  }

  /** All time in ranges of whole hours holding about `maxEvents` or fewer (hour-histogram.ts). */
  hourParts(maxEvents: number): TimeWindow[] {
    return this.perHour.parts(maxEvents);
  }

  /** Counts the stored events per hour anew (at open, and after a delete). */
  async loadHistogram(): Promise<void> {
    const { rows } = await this.run(this.dialect.plans.hourCounts());
    this.perHour.reset(rows.map((r) => [Number(r.h) * HOUR_MS, Number(r.n)] as const));
  }
}
