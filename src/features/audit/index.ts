/** The audit trail: who did what, from where, and how it ended (`/api/audit`, docs/api/audit.md). */
import { component } from '../component.js';
import { auditHook } from './audit-hook.js';
import { AuditRepository } from './audit-repository.js';
import { auditRoutes } from './audit-routes.js';
import { AuditRecordSchema } from './audit-schema.js';
import { auditMigration } from './audit-table.js';
import { AuditTrail } from './audit-trail.js';

// What a feature that records its own actions (a scheduled run) is handed.
export type { AuditEntry, AuditTrail } from './audit-trail.js';

declare module '../component.js' {
  interface Services {
    audit: AuditTrail;
  }
}

/** How often records past auditRetentionDays are removed (ms). */
const SWEEP_EVERY_MS = 3_600_000;

export const audit = component({
  name: 'audit',
  migrations: { '0013-audit': auditMigration },
  build({ meta, config }) {
    const trail = new AuditTrail(new AuditRepository(meta.db), {
      retentionDays: config.auditRetentionDays,
      anonymousMax: config.auditAnonymousMaxRecords,
    });
    let sweep: NodeJS.Timeout | undefined;
    return {
      provides: { audit: trail },
      schemas: [AuditRecordSchema],
      metrics: [trail],
      async routes(app) {
        auditHook(app, trail);
        await app.register(auditRoutes, { trail });
      },
      async start() {
        sweep = setInterval(() => void trail.sweep().catch(() => undefined), SWEEP_EVERY_MS).unref();
      },
      async stop() {
        clearInterval(sweep);
        await trail.close();
      },
    };
  },
});
