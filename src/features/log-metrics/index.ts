/**
 * Log metrics (`/api/log-metrics`, docs/api/log-metrics.md): counts and aggregates of the
 * events a query matches, kept per bucket by the event store as it stores them (ADR 0035),
 * their series, backfills and their Prometheus exposition. The built-in rollups come next
 * (issue 76).
 */
import type { MetricAnswers } from '../../query/types/metric.js';
import { component } from '../component.js';
import { LogMetricBackfills } from './log-metric-backfills.js';
import { LogMetricCounting } from './log-metric-counting.js';
import { LogMetricExposition } from './log-metric-exposition.js';
import { LogMetricJobsRepository } from './log-metric-jobs-repository.js';
import { logMetricJobsMigration } from './log-metric-jobs-table.js';
import { LogMetricQueries } from './log-metric-queries.js';
import { LogMetricSchema } from './log-metric-schema.js';
import { LogMetricSeries } from './log-metric-series.js';
import { LogMetricsRepository } from './log-metrics-repository.js';
import { logMetricRoutes } from './log-metrics-routes.js';
import { LogMetricsService } from './log-metrics-service.js';
import { logMetricsMigration } from './log-metrics-table.js';

/** How often the buckets' upkeep runs at most (retention and merging an append's rows). */
const UPKEEP_MS = 60_000;

declare module '../component.js' {
  interface Services {
    logMetrics: LogMetricsService;
    /** The query type Metric's answers (the queries feature runs them). */
    metricAnswers: MetricAnswers;
  }
}

export const logMetrics = component({
  name: 'log-metrics',
  migrations: { '0028-log-metrics': logMetricsMigration, '0029-log-metric-jobs': logMetricJobsMigration },
  build({ meta, config, events, log }, { teams, readScopes, users }) {
    const repo = new LogMetricsRepository(meta.db);
    const counting = new LogMetricCounting(repo, events, log);
    const metrics = new LogMetricsService(
      repo,
      teams,
      { perUser: config.logMetricsPerUser, maxSeries: config.logMetricMaxSeries },
      counting,
      events,
    );
    const series = new LogMetricSeries(events, readScopes);
    const exposition = new LogMetricExposition(events, readScopes);
    const backfills = new LogMetricBackfills(
      new LogMetricJobsRepository(meta.db),
      repo,
      metrics,
      events,
      log,
    );
    return {
      provides: {
        logMetrics: metrics,
        metricAnswers: new LogMetricQueries(metrics, series, readScopes, users),
      },
      schemas: [LogMetricSchema],
      metrics: [exposition, backfills],
      // The store counts from the start: before any intake takes events. A store that
      // refuses is logged (LogMetricCounting) and tried again at the next change.
      start: async () => {
        await counting.update().catch(() => undefined);
        counting.startUpkeep(Math.min(config.retentionIntervalSeconds * 1000, UPKEEP_MS));
        await backfills.start();
      },
      stop: async () => {
        await backfills.stop();
        await counting.stopUpkeep();
      },
      routes: async (app) =>
        void (await app.register(logMetricRoutes, { metrics, series, exposition, backfills })),
    };
  },
});
