/** Reports: dashboards and queries rendered to files, on demand or on a schedule. */
import path from 'node:path';
import { ADOPT_EVERY_MS, component } from '../component.js';
import { identityOf, UsersRepository } from '../identity/index.js';
import { LocalReportFiles, SharedReportFiles } from './report-files.js';
import { ReportsRepository } from './reports-repository.js';
import { reportRoutes, ShortReportSchema } from './reports-routes.js';
import { ReportsService } from './reports-service.js';
import { reportsMigration } from './reports-table.js';

declare module '../component.js' {
  interface Services {
    reports: ReportsService;
  }
}

export const reports = component({
  name: 'reports',
  migrations: { '0005-reports': reportsMigration },
  build({ meta, config, log, events, jobStore, node, leaseMs, cluster }, s) {
    const usersRepo = new UsersRepository(meta.db);
    const shared = jobStore.shared;
    const reports = new ReportsService(new ReportsRepository(meta.db), s.runner, events, s.dashboards, {
      files: shared
        ? new SharedReportFiles(meta.db)
        : new LocalReportFiles(path.join(config.dataDir, 'reports')),
      ...(shared
        ? {
            cluster: {
              node,
              leaseMs,
              ownerIdentity: async (ownerId: number) => {
                const user = await usersRepo.byId(ownerId);
                return user ? identityOf(user, { token_type: 'USER', key_id: '' }) : null;
              },
            },
          }
        : {}),
      maxRows: config.exportMaxRows,
      maxBytes: config.reportMaxBytes,
      maxPages: config.reportMaxPages,
      perUser: config.reportsPerUser,
      concurrent: config.reportsConcurrent,
      log,
      enricher: s.enricher,
      scopes: s.readScopes,
      audit: s.audit,
    });
    let adopt: NodeJS.Timeout | undefined;
    return {
      provides: { reports },
      schemas: [ShortReportSchema],
      routes: async (app) => void (await app.register(reportRoutes, { reports })),
      metrics: [reports],
      async start() {
        await reports.recoverFromEarlierRun();
        // Reports a dead node was rendering are taken over.
        if (cluster)
          adopt = setInterval(() => reports.adopt().catch(() => undefined), ADOPT_EVERY_MS).unref();
      },
      async stop() {
        clearInterval(adopt);
        reports.close();
        await reports.idle();
      },
    };
  },
});
