/**
 * Log metrics (`/api/log-metrics`, docs/api/log-metrics.md): counts and aggregates of the
 * events a query matches, kept per bucket. This step holds their definitions; counting at
 * ingest, series and the Prometheus exposition come next (issue 76).
 */
import { component } from '../component.js';
import { LogMetricSchema } from './log-metric-schema.js';
import { LogMetricsRepository } from './log-metrics-repository.js';
import { logMetricRoutes } from './log-metrics-routes.js';
import { LogMetricsService } from './log-metrics-service.js';
import { logMetricsMigration } from './log-metrics-table.js';

declare module '../component.js' {
  interface Services {
    logMetrics: LogMetricsService;
  }
}

export const logMetrics = component({
  name: 'log-metrics',
  migrations: { '0028-log-metrics': logMetricsMigration },
  build({ meta, config }, { teams }) {
    const metrics = new LogMetricsService(new LogMetricsRepository(meta.db), teams, {
      perUser: config.logMetricsPerUser,
      maxSeries: config.logMetricMaxSeries,
    });
    return {
      provides: { logMetrics: metrics },
      schemas: [LogMetricSchema],
      routes: async (app) => void (await app.register(logMetricRoutes, { metrics })),
    };
  },
});
