/** Reports: dashboards and queries rendered to files, on demand or on a schedule. */
import path from 'node:path';
import { ADOPT_EVERY_MS, component } from '../component.js';
import { identityOf, UsersRepository } from '../identity/index.js';
import { LocalReportFiles, SharedReportFiles } from './report-files.js';

export type { ReportLinks } from './report-links.js';
export type { ReportSource, ShortReport } from './reports-service.js';

import { ReportLinks } from './report-links.js';
import { reportLinkRoutes } from './report-links-routes.js';
import { reportLinkRecordsMigration } from './report-links-table.js';
import { ReportsRepository } from './reports-repository.js';
import { reportRoutes, ShortReportSchema } from './reports-routes.js';
import { ReportsService } from './reports-service.js';
import { reportLinksMigration, reportsMigration } from './reports-table.js';

declare module '../component.js' {
  interface Services {
    reports: ReportsService;
    /** Signed links to report files (docs/api/schedules.md). */
    reportLinks: ReportLinks;
  }
}

export const reports = component({
  name: 'reports',
  migrations: {
    '0005-reports': reportsMigration,
    '0023-report-links': reportLinksMigration,
    '0026-report-link-records': reportLinkRecordsMigration,
  },
  build({ meta, config, log, events, jobStore, node, leaseMs, cluster, publicUrl }, s) {
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
      metrics: s.metricAnswers,
      audit: s.audit,
    });
    const reportLinks = new ReportLinks(meta.db, {
      secret: config.reportLinkSecret,
      maxSeconds: config.reportLinkSeconds,
      publicUrl,
      gate: s.releaseGate,
      audit: s.audit,
    });
    // A scheduled report's delivery gets its link when it is sent, never before (ADR 0034).
    s.deliveryQueue.linkReportsWith((n, delivery) => reportLinks.forDelivery(n.report.id, delivery));
    let adopt: NodeJS.Timeout | undefined;
    return {
      provides: { reports, reportLinks },
      schemas: [ShortReportSchema],
      routes: async (app) => {
        await app.register(reportRoutes, { reports, links: reportLinks });
        await app.register(reportLinkRoutes, { reports, links: reportLinks });
      },
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
