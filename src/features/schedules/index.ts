/** Report schedules: a dashboard or saved search rendered on a cron, as its owner, and sent (docs/api/schedules.md). */
import { LeasesRepository } from '../../metadata/leases-repository.js';
import { component } from '../component.js';
import { identityOf, UsersRepository } from '../identity/index.js';
import { ScheduleRunner } from './schedule-runner.js';
import { ScheduleSchema } from './schedule-schema.js';
import { SchedulesRepository } from './schedules-repository.js';
import { scheduleRoutes } from './schedules-routes.js';
import { SchedulesService } from './schedules-service.js';
import { schedulesMigration } from './schedules-table.js';

declare module '../component.js' {
  interface Services {
    schedules: SchedulesService;
    scheduleRunner: ScheduleRunner;
  }
}

export const schedules = component({
  name: 'schedules',
  migrations: { '0024-schedules': schedulesMigration },
  build({ meta, config, log, node, leaseMs, cluster }, s) {
    const users = new UsersRepository(meta.db);
    // A user's rights as they stand now (never cached: a run reads them at its start).
    const ownerIdentity = async (userId: number) => {
      const user = await users.byId(userId);
      return user ? identityOf(user, { token_type: 'USER', key_id: '' }) : null;
    };
    const repo = new SchedulesRepository(meta.db);
    const schedules = new SchedulesService(
      repo,
      { channels: s.channels, dashboards: s.dashboards, savedSearches: s.savedSearches },
      { perUser: config.schedulesPerUser, ownerIdentity },
    );
    const runner = new ScheduleRunner({
      repo,
      schedules,
      reports: s.reports,
      savedSearches: s.savedSearches,
      channels: s.channels,
      deliveryQueue: s.deliveryQueue,
      releaseGate: s.releaseGate,
      audit: s.audit,
      ownerIdentity,
      attachMaxBytes: config.scheduleAttachMaxBytes,
      cluster: cluster ? { leases: new LeasesRepository(meta.db), node, leaseMs } : null,
      node,
      log,
    });
    return {
      provides: { schedules, scheduleRunner: runner },
      schemas: [ScheduleSchema],
      routes: async (app) => void (await app.register(scheduleRoutes, { schedules, runner })),
      metrics: [runner],
      start: () => runner.start(),
      stop: () => runner.stop(),
    };
  },
});
