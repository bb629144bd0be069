/** Triggers: saved filters matched against every commit, making tasks and alerts. */

import { LeasesRepository } from '../../metadata/leases-repository.js';
import type { AlertCounts } from '../alerting/index.js';
import { component, RELOAD_RULES_MS } from '../component.js';
import { UsersRepository } from '../identity/index.js';
import { TriggerSchema } from './trigger-schema.js';
import { TriggersRepository } from './triggers-repository.js';
import { triggerRoutes } from './triggers-routes.js';
import { TriggersService } from './triggers-service.js';
import { triggerRunAsMigration, triggersMigration } from './triggers-table.js';

declare module '../component.js' {
  interface Services {
    triggers: TriggersService;
  }
}

export const triggers = component({
  name: 'triggers',
  migrations: { '0006-triggers': triggersMigration, '0019-trigger-run-as': triggerRunAsMigration },
  build({ meta, events, config, log, bus, batcher, cluster, node, leaseMs, publicUrl }, s) {
    const triggers = new TriggersService(
      new TriggersRepository(meta.db),
      new UsersRepository(meta.db),
      s.tasks,
      {
        taskWindowMs: config.triggerTaskWindowSeconds * 1000,
        maxPendingMatches: 1_000_000,
        maxPerUser: config.triggersPerUser,
        patternRateReadsPerHour: config.patternRateReadsPerHour,
        log,
        // What one node changes, every node learns (in one process this stays local).
        onChanged: () => bus.publish('triggers-changed', {}),
        scopes: s.readScopes,
        patterns: s.patterns,
        patternRate: { events, settleMs: config.patternRateSettleSeconds * 1000 },
        ...(cluster
          ? {
              cluster: {
                node,
                leases: new LeasesRepository(meta.db),
                leaseMs,
                publish: (counts: AlertCounts) => bus.publish('alert-counts', counts),
              },
            }
          : {}),
      },
      { channels: s.channels, queue: s.deliveryQueue, linkBase: () => publicUrl.get() },
    );
    batcher.onCommit((committed) => triggers.matchCommitted(committed));
    bus.subscribe('triggers-changed', (_m, remote) => {
      if (remote) triggers.load().catch(() => undefined);
    });
    // A channel's destination was set (here or on another node): the triggers notifying it
    // run within its decider's rights too.
    bus.subscribe('channels-changed', () => {
      triggers.load().catch(() => undefined);
    });
    // Who may read what changed (here or on another node): the scopes triggers run with are read again.
    bus.subscribe('rights-changed', (m) => {
      if (m.keyId === null) triggers.load().catch(() => undefined);
    });
    bus.subscribe('alert-counts', (m, remote) => {
      if (remote) triggers.alerts.receive(m);
    });
    let reload: NodeJS.Timeout | undefined;
    return {
      provides: { triggers },
      schemas: [TriggerSchema],
      routes: async (app) => void (await app.register(triggerRoutes, { triggers })),
      metrics: [triggers],
      async start() {
        await triggers.load();
        await triggers.startAlerts();
        // Triggers changed while the bus was down are read again.
        if (cluster)
          reload = setInterval(() => {
            if (!bus.connected) triggers.load().catch(() => undefined);
          }, RELOAD_RULES_MS).unref();
      },
      async stop() {
        clearInterval(reload);
        await triggers.stopAlerts();
        // The batcher's last commits were matched: let their work end, and their counts
        // still reach the other nodes' windows.
        await triggers.idle();
        triggers.alerts.flush();
      },
    };
  },
});
