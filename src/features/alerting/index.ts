/** Notification channels, the durable delivery queue and its history. */
import { parseDenyCidrs } from '../../config/deny-cidrs.js';
import { component } from '../component.js';
import {
  alertingMigration,
  channelKindsMigration,
  channelKindsUncheckedMigration,
} from './alerting-table.js';
import { channelKinds } from './channel-kinds/registry.js';
import { ChannelsRepository } from './channels-repository.js';
import { channelRoutes } from './channels-routes.js';
import { ChannelsService } from './channels-service.js';
import { DeliveriesRepository } from './deliveries-repository.js';
import { DeliveriesService } from './deliveries-service.js';
import { DeliveryQueue } from './delivery-queue.js';
import { Senders } from './senders.js';

// What triggers take from alerting: the engine that says when a trigger's condition fires,
// its conditions, and the queue its notifications are sent through.
export {
  type AlertCounts,
  AlertEngine,
  type AlertEngineOptions,
  type AlertTrigger,
  type Firing,
} from './alert-engine.js';
// Which channel kinds carry a schedule's reports, and which attach the file (schedules).
export { type ChannelType, channelKinds } from './channel-kinds/registry.js';
export type { Condition, PatternRateCondition } from './conditions.js';
export type { DeliveryQueue, ReportLinker } from './delivery-queue.js';
export {
  MAX_FIRINGS_PER_WINDOW,
  type PatternRateInput,
  PatternRateJudge,
  patternRateCondition,
  patternRateReadsPerHour,
} from './pattern-rate.js';
export { everyScope, storeReads } from './pattern-rate-reads.js';
export type { ReportNotice, StoredReportNotice } from './report-notice.js';
export type { ThresholdCondition } from './threshold.js';

declare module '../component.js' {
  interface Services {
    channels: ChannelsService;
    deliveries: DeliveriesService;
    /** The durable queue of notifications. */
    deliveryQueue: DeliveryQueue;
    senders: Senders;
  }
}

export const alerting = component({
  name: 'alerting',
  migrations: {
    '0009-alerting': alertingMigration,
    '0022-channel-kinds': channelKindsMigration,
    '0027-channel-kinds-unchecked': channelKindsUncheckedMigration,
  },
  build({ meta, config, log, cluster, bus }, { releaseGate }) {
    const senders = new Senders({
      smtpUrl: config.smtpUrl,
      smtpFrom: config.smtpFrom,
      denyCidrs: parseDenyCidrs(config.webhookDenyCidrs),
      pagerdutyUrl: config.pagerdutyUrl,
      opsgenieUrl: config.opsgenieUrl,
    });
    const channelsRepo = new ChannelsRepository(meta.db);
    const deliveriesRepo = new DeliveriesRepository(meta.db);
    const channels = new ChannelsService(channelsRepo, deliveriesRepo, senders, {
      // The triggers that notify it run within its new decider's rights (features/triggers.ts).
      onDestinationChanged: () => bus.publish('channels-changed', {}),
    });
    const deliveries = new DeliveriesService(deliveriesRepo);
    const deliveryQueue = new DeliveryQueue(deliveriesRepo, channelsRepo, senders, releaseGate, { log });
    return {
      provides: { channels, deliveries, deliveryQueue, senders },
      // Each kind's settings are a schema of the API document (<Type>ChannelConfig) too.
      schemas: [
        channelKinds.schemas.ChannelSchema,
        channelKinds.schemas.DeliverySchema,
        ...channelKinds.configSchemas,
      ],
      routes: async (app) => void (await app.register(channelRoutes, { channels, deliveries })),
      metrics: [deliveryQueue],
      // One server owns its deliveries: leases left by a killed run are let go at once.
      start: () => deliveryQueue.start(!cluster),
      async stop() {
        await deliveryQueue.close();
        senders.close();
      },
    };
  },
});
