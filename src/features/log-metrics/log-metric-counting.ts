import type { Log } from '../../core/log.js';
import type { EventStore } from '../../event-store/event-store.js';
import type { MetricKind, MetricRule } from '../../event-store/rollups/metric-rollups.js';
import { not, TRUE } from '../../filter/builders.js';
import { parseQuery } from '../../syntax/parse-query.js';
import type { LogMetricRow, LogMetricsRepository } from './log-metrics-repository.js';

/** A metric's generation: the instant counting began (`counting_since`), which a reset moves. */
export const generationOf = (countingSince: string): number => Date.parse(countingSince);

/** A stored metric as the event store counts it (ADR 0035). */
export function ruleOf(row: LogMetricRow): MetricRule {
  return {
    id: row.id,
    generation: generationOf(row.counting_since),
    kind: row.kind as MetricKind,
    field: row.field,
    labels: JSON.parse(row.labels) as string[],
    resolutionMs: row.resolution_seconds * 1000,
    retentionMs: row.retention_days * 86_400_000,
    maxSeries: row.max_series,
    filter: parseQuery(row.query, { path: 'query' }),
  };
}

/**
 * Gives the event store the log metrics to count (as stream membership gives it the
 * streams' rules): at start and after every change, one update after another, so the
 * metrics read last are the ones given last. A create, change or delete answers once the
 * store counts by it: every event acknowledged after the answer is counted by the metric
 * as it is then.
 */
export class LogMetricCounting {
  private queue: Promise<void> = Promise.resolve();
  private upkeepTimer: NodeJS.Timeout | undefined;
  private upkeepRun: Promise<void> = Promise.resolve();

  constructor(
    private readonly repo: LogMetricsRepository,
    private readonly events: EventStore,
    private readonly log: Log,
  ) {}

  /**
   * The buckets' upkeep every `everyMs` (ADR 0035): retention, and each bucket's rows merged
   * into one (reads sum fewer rows); run again at once while keys are left to merge.
   */
  startUpkeep(everyMs: number): void {
    const tick = () => {
      this.upkeepRun = (async () => {
        try {
          for (let runs = 0; runs < 20; runs++)
            if (!(await this.events.maintainMetrics(Date.now())).more) break;
        } catch (err) {
          this.log.warn({ err }, 'the log metrics’ upkeep failed; it runs again later');
        }
        if (this.upkeepTimer) this.upkeepTimer = setTimeout(tick, everyMs).unref();
      })();
    };
    this.upkeepTimer = setTimeout(tick, everyMs).unref();
  }

  async stopUpkeep(): Promise<void> {
    clearTimeout(this.upkeepTimer);
    this.upkeepTimer = undefined;
    await this.upkeepRun;
  }

  update(): Promise<void> {
    const run = this.queue.then(async () => {
      const rules: MetricRule[] = [];
      for (const row of await this.repo.all()) {
        try {
          rules.push(ruleOf(row));
        } catch (err) {
          // A query this version no longer reads: that metric alone counts nothing, and
          // keeps what it counted (a metric left out would have its buckets pruned).
          this.log.warn({ err, metric: row.id }, 'a log metric’s query cannot be read; it is not counted');
          rules.push({ ...ruleOf({ ...row, query: '' }), filter: not(TRUE) });
        }
      }
      await this.events.setMetricRules(rules);
    });
    this.queue = run.catch((err) => {
      this.log.warn(
        { err },
        'log metrics could not be given to the event store; the next change tries again',
      );
    });
    return run;
  }
}
