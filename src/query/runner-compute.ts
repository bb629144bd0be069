import { AppError } from '../errors/errors.js';
import type { EventStore } from '../event-store/event-store.js';
import type { QueryPlan, SearchResult, TimeWindow } from '../event-store/query-plan.js';
import { publicMessage, type QueryJob } from './job.js';
import type { SharedJobs } from './shared-jobs.js';
import { pagedSearch, slicesOf } from './slicing.js';
import { resolveTimeRange } from './time-range.js';
import type { MetricAnswers, MetricParams } from './types/metric.js';

/**
 * What one computation of a query uses of its runner (QueryRunner): the store it reads,
 * the shared job state it leases and announces through, and the runner's own bookkeeping
 * (the count for /metrics, the results budget, its listeners).
 */
export interface Computation {
  readonly store: EventStore;
  readonly shared: SharedJobs;
  readonly opts: {
    readonly sliceEvents: number;
    readonly maxSlices: number;
    readonly onError?: (error: unknown, queryId: string) => void;
    /** What answers the queries whose type reads a log metric's buckets (Metric). */
    readonly metrics?: MetricAnswers | undefined;
  };
  /** A computation started (it holds the lease where there is one). */
  started(): void;
  /** Sets a job's results within the results budget. */
  hold(job: QueryJob, results: unknown): void;
  refresh(job: QueryJob, all: boolean): Promise<boolean>;
  emitLocal(job: QueryJob): void;
}

/**
 * Computes a job once: under its lease where the job store is shared, in newest-first
 * time slices with partial results after each, merged; it ends SUCCESS, STOPPED (with
 * what it had), ERROR (a public message; the error itself to `onError`), or following
 * the node that took the lease over. `reevaluation`: a finished query computed again
 * (its status and progress stay until the new results differ). `force`: take the lease
 * even from a live node (a start or recalculation here).
 */
export async function computeJob(
  c: Computation,
  job: QueryJob,
  reevaluation: boolean,
  force: boolean,
): Promise<void> {
  const controller = new AbortController();
  job.controller = controller;
  if (c.shared.shares(job) && !(await c.shared.lease(job, controller, force))) return;
  c.started();
  const baseMs = Date.now();
  const window = resolveTimeRange(job.params.time_range, baseMs);
  if (!reevaluation) {
    job.baseMs = baseMs;
    job.window = window;
    job.status = 'IN_PROGRESS';
    job.updatedAt = new Date().toISOString();
    c.shared.emit(job);
  }
  let acc: unknown = null;
  const paged = pagedSearch(job);
  // What this computation reads. A rescope meanwhile (rights changed) aborts it and
  // computes again: nothing it read under the former rights is held, shown or shared.
  const { scope, filter } = job;
  const current = () => job.scope === scope && job.filter === filter;
  try {
    if (job.def.answeredFrom === 'rollups') {
      // A log metric's buckets (Metric): one read, in the job's scope, not a store plan.
      if (!c.opts.metrics) throw new AppError(501, 'not_served', 'Log metrics are not served by this node.');
      acc = await c.opts.metrics.answer(job.ownerId, scope, job.params as MetricParams, window);
    } else {
      const slices = slicesOf(c.store, job, window, c.opts);
      for (let i = 0; i < slices.length; i++) {
        let plan = {
          ...job.def.plan(job.params, filter, slices[i] as TimeWindow, window),
          scope,
        } as QueryPlan;
        if (paged && plan.kind === 'search') plan = { ...plan, ...paged.slice(acc as SearchResult | null) };
        const part = await c.store.execute(plan, {
          tag: job.id,
          signal: controller.signal,
          onProgress: (f) => {
            if (!reevaluation) job.progress = (i + f) / slices.length;
          },
        });
        acc = paged
          ? paged.merge(acc as SearchResult | null, part as SearchResult)
          : acc === null
            ? part
            : job.def.merge(acc, part, job.params);
        if (!reevaluation && i < slices.length - 1 && current()) {
          c.hold(job, acc);
          job.progress = (i + 1) / slices.length;
          job.updatedAt = new Date().toISOString();
          c.shared.emit(job);
        }
      }
    }
    if (!current()) return;
    const changed = reevaluation && JSON.stringify(acc) !== JSON.stringify(job.results);
    c.hold(job, acc);
    job.baseMs = baseMs;
    job.window = window;
    job.status = 'SUCCESS';
    job.progress = 1;
    job.error = null;
    job.updatedAt = new Date().toISOString();
    if (!reevaluation || changed) c.shared.emit(job, true);
    else c.shared.unchanged(job);
  } catch (err) {
    if (c.shared.lost(controller)) {
      // Another node computes it now: this copy follows the shared state.
      if (job.controller === controller) {
        job.controller = null;
        job.running = null;
      }
      await c.refresh(job, true).catch(() => undefined);
      c.emitLocal(job);
      return;
    }
    if (controller.signal.aborted) {
      if (!reevaluation || job.status !== 'SUCCESS') {
        job.status = 'STOPPED';
        if (acc !== null && current()) c.hold(job, acc);
      }
    } else {
      job.status = 'ERROR';
      job.error = publicMessage(err);
      c.opts.onError?.(err, job.id);
    }
    job.updatedAt = new Date().toISOString();
    c.shared.emit(job, true);
  } finally {
    if (job.controller === controller) {
      job.controller = null;
      job.running = null;
    }
  }
}
