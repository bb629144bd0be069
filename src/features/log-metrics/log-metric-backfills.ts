import type { Identity } from '../../core/identity.js';
import type { Log } from '../../core/log.js';
import { counter, type MetricDecl, type MetricsSource } from '../../core/metrics.js';
import { AppError, createError, fieldError, notFound } from '../../errors/errors.js';
import type { EventStore } from '../../event-store/event-store.js';
import type { CoveredRange } from '../../event-store/rollups/metric-store.js';
import { generationOf, ruleOf } from './log-metric-counting.js';
import type { LogMetricJobsRepository } from './log-metric-jobs-repository.js';
import type { LogMetricJobRow } from './log-metric-jobs-table.js';
import { timeParam } from './log-metric-series.js';
import type { LogMetricsRepository } from './log-metrics-repository.js';
import type { LogMetricsService } from './log-metrics-service.js';

/** A backfill job as the API shows it (docs/api/log-metrics.md "Backfill"). */
export interface BackfillJob {
  id: number;
  kind: 'backfill';
  metric_id: number;
  from: number;
  to: number;
  status: LogMetricJobRow['status'];
  progress: number;
  events: number;
  started_at: string;
  finished_at: string | null;
  error: string | null;
}

const view = (r: LogMetricJobRow): BackfillJob => ({
  id: r.id,
  kind: 'backfill',
  metric_id: r.metric_id,
  from: r.from_ms / 1000,
  to: r.to_ms / 1000,
  status: r.status,
  progress: r.progress,
  events: r.events,
  started_at: r.started_at,
  finished_at: r.finished_at,
  error: r.error,
});

const HOUR = 3_600_000;
/** A window grows by hours while the store expects fewer events in it than this... */
const WINDOW_EVENTS = 200_000;
/** ...up to this long. */
const WINDOW_MAX_MS = 7 * 24 * HOUR;

/** `[from, to)` less the covered ranges, in order. */
export function uncovered(fromMs: number, toMs: number, covered: readonly CoveredRange[]): CoveredRange[] {
  const out: CoveredRange[] = [];
  let at = fromMs;
  for (const c of covered) {
    if (c.toMs <= at) continue;
    if (c.fromMs >= toMs) break;
    if (c.fromMs > at) out.push({ fromMs: at, toMs: c.fromMs });
    at = Math.max(at, c.toMs);
  }
  if (at < toMs) out.push({ fromMs: at, toMs });
  return out;
}

/**
 * Backfills (docs/api/log-metrics.md "Backfill"): a metric's past counted from the events
 * stored before its `counting_since`, in the background, a window at a time (whole hours,
 * wider where the store holds few events). Each window is counted and its range recorded by
 * the event store in one transaction (`EventStore.backfillMetric`), so a job is exact and
 * idempotent whatever stops it; the job's row (metadata) only tells how far it got.
 */
export class LogMetricBackfills implements MetricsSource {
  private readonly running = new Set<Promise<void>>();
  private stopping = false;
  private counted = 0;

  constructor(
    private readonly jobs: LogMetricJobsRepository,
    private readonly metricsRepo: LogMetricsRepository,
    private readonly service: LogMetricsService,
    private readonly events: EventStore,
    private readonly log: Log,
  ) {}

  /** Jobs left RUNNING by a process that ended are marked ERROR. */
  async start(): Promise<void> {
    await this.jobs.interrupt(new Date().toISOString());
  }

  /** Stops the running jobs after their window (they end ERROR, "interrupted"). */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.running);
  }

  metrics(): MetricDecl[] {
    return [
      counter(
        'logscope_log_metric_backfill_events_total',
        'Events counted into log metrics by backfills.',
        () => this.counted,
      ),
    ];
  }

  async begin(who: Identity, metricId: number, body: { from?: unknown; to?: unknown }): Promise<BackfillJob> {
    const metric = await this.service.owned(who, metricId);
    if (this.events.kind !== 'duckdb')
      throw new AppError(
        409,
        'not_counted',
        'This server keeps its events on ClickHouse, where log metrics are not counted yet (docs/api/log-metrics.md).',
      );
    const resolution = metric.resolution_seconds * 1000;
    const text = (v: unknown) => (typeof v === 'number' ? String(v) : typeof v === 'string' ? v : undefined);
    if (body.from === undefined) throw fieldError('from', 'Required: Unix seconds or ISO 8601.');
    if (body.to === undefined) throw fieldError('to', 'Required: Unix seconds or ISO 8601.');
    const from = Math.floor(timeParam('from', text(body.from), Number.NaN) / resolution) * resolution;
    const to = Math.ceil(timeParam('to', text(body.to), Number.NaN) / resolution) * resolution;
    if (from >= to) throw fieldError('to', '`to` must be after `from`.');
    // Bounded work: a window a week at least over empty time still walks to `to`.
    if (to > Date.now() + 86_400_000)
      throw fieldError('to', 'More than a day from now: no stored event is that late.');
    if (from < Date.now() - metric.retention_days * 86_400_000)
      throw fieldError('from', `Older than the metric's retention (${metric.retention_days} days).`);
    const row = await this.jobs.start({
      metric_id: metricId,
      from_ms: from,
      to_ms: to,
      status: 'RUNNING',
      progress: 0,
      events: 0,
      started_at: new Date().toISOString(),
      finished_at: null,
      error: null,
      started_by: who.userId ?? null,
    });
    if (!row)
      throw createError(
        409,
        'backfill_in_progress',
        'A backfill of this metric is running; one runs at a time.',
      );
    const run = this.run(row).finally(() => this.running.delete(run));
    this.running.add(run);
    return view(row);
  }

  /** A job, for whoever may backfill its metric (anyone else: 404). */
  async get(who: Identity, jobId: number): Promise<BackfillJob> {
    const row = await this.jobs.byId(jobId);
    if (!row) throw notFound('No such backfill job.');
    try {
      await this.service.owned(who, row.metric_id);
    } catch {
      throw notFound('No such backfill job.');
    }
    return view(row);
  }

  /** The job's work; its end is written to its row whatever happens. */
  private async run(job: LogMetricJobRow): Promise<void> {
    let events = 0;
    const end = async (status: 'DONE' | 'ERROR', error: string | null, progress?: number) => {
      await this.jobs
        .update(job.id, {
          status,
          error,
          events,
          ...(progress === undefined ? {} : { progress }),
          finished_at: new Date().toISOString(),
        })
        .catch((err) => this.log.warn({ err, job: job.id }, 'a backfill’s end could not be recorded'));
    };
    try {
      const first = await this.metricsRepo.byId(job.metric_id);
      if (!first) return; // deleted: its jobs went with it
      const rule = ruleOf(first);
      const storedBefore = rule.generation;
      const todo = uncovered(
        job.from_ms,
        job.to_ms,
        await this.events.metricBackfilled(rule.id, rule.generation),
      );
      const total = todo.reduce((n, r) => n + (r.toMs - r.fromMs), 0);
      let done = 0;
      for (const range of todo)
        for (let at = range.fromMs; at < range.toMs; ) {
          if (this.stopping) return await end('ERROR', 'interrupted: the server stopped while it ran');
          const now = await this.metricsRepo.byId(job.metric_id);
          if (!now) return; // deleted
          if (generationOf(now.counting_since) !== rule.generation)
            return await end('ERROR', 'the metric was reset');
          const until = this.windowEnd(at, range.toMs);
          const r = await this.events.backfillMetric({ rule, fromMs: at, toMs: until, storedBefore });
          if (r === null) return await end('ERROR', 'this event store does not count log metrics');
          if ('stale' in r) return await end('ERROR', 'the metric was reset');
          if ('events' in r) {
            events += r.events;
            this.counted += r.events;
          }
          done += until - at;
          at = until;
          await this.jobs.update(job.id, { progress: total ? done / total : 1, events });
        }
      await end('DONE', null, 1);
    } catch (err) {
      this.log.warn({ err, job: job.id }, 'a log metric’s backfill failed');
      await end('ERROR', (err as Error).message);
    }
  }

  /** Where a window from `at` ends: whole hours while the store expects few events, at most `end`. */
  private windowEnd(at: number, end: number): number {
    let until = Math.min(end, (Math.floor(at / HOUR) + 1) * HOUR);
    while (
      until < end &&
      until - at < WINDOW_MAX_MS &&
      this.events.estimateInRange(at, Math.min(end, until + HOUR)) < WINDOW_EVENTS
    )
      until = Math.min(end, until + HOUR);
    return until;
  }
}
