/** Queries: the runner (slices, budget, shared jobs) and the query resource over it. */

import { QueryRunner } from '../../query/runner.js';
import { ADOPT_EVERY_MS, component } from '../component.js';
import { withTemplates } from '../patterns/index.js';
import { QueriesRepository } from './queries-repository.js';
import { GenericQuerySchema, queryRoutes } from './queries-routes.js';
import { QueriesService } from './queries-service.js';
import { queriesMigration } from './queries-table.js';

declare module '../component.js' {
  interface Services {
    runner: QueryRunner;
    queries: QueriesService;
  }
}

/** How often finished queries past their time to live are deleted (ms). */
const SWEEP_EVERY_MS = 60_000;

export const queries = component({
  name: 'queries',
  migrations: { '0002-queries': queriesMigration },
  build({ meta, config, log, bus, events, jobStore, leaseMs, cluster }, s) {
    // Patterns come grouped by their templates' text (the metadata store has it).
    const store = withTemplates(events, {
      templates: (ids) => s.patterns.templates(ids),
      firstSeen: (ids, texts) => s.patterns.recordedFirstSeen(ids, texts),
    });
    const runner = new QueryRunner(store, bus, jobStore, {
      sliceEvents: config.querySliceEvents,
      maxSlices: 8,
      refreshMs: config.queryRefreshMs,
      onError: (err, queryId) => log.error({ err, query_id: queryId }, 'internal error'),
      resultsBudgetBytes: config.queryResultsMemoryMb * 1048576,
      maxLivePerUser: config.queryLivePerUser,
      leaseMs,
      metrics: s.metricAnswers,
    });
    const queries = new QueriesService(
      new QueriesRepository(meta.db),
      runner,
      events,
      {
        exportMaxRows: config.exportMaxRows,
        syncWindowMs: config.querySyncMs,
        ttlMs: config.queryTtlSeconds * 1000,
      },
      s.enricher,
      s.readScopes,
      s.audit,
      s.metricAnswers,
    );
    // Who may read what changed (here or on another node): held queries read anew.
    // (One token's change, a sign-out say, changes nobody's read scope.)
    bus.subscribe('rights-changed', (m) => {
      if (m.keyId === null) void queries.rescope().catch(() => undefined);
    });
    const timers: NodeJS.Timeout[] = [];
    return {
      provides: { runner, queries },
      schemas: [GenericQuerySchema],
      routes: async (app) => void (await app.register(queryRoutes, { queries })),
      metrics: [runner],
      async start() {
        timers.push(setInterval(() => queries.sweep().catch(() => undefined), SWEEP_EVERY_MS).unref());
        // Queries a dead node was running are taken over.
        if (cluster)
          timers.push(setInterval(() => queries.adopt().catch(() => undefined), ADOPT_EVERY_MS).unref());
      },
      async stop() {
        for (const t of timers) clearInterval(t);
        runner.close();
      },
    };
  },
});
