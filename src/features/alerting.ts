/** Notification channels, the durable delivery queue and its history. */
import { parseDenyCidrs } from '../config/deny-cidrs.js';
import { ChannelSchema, DeliverySchema } from '../domain/alerts/alert-schema.js';
import { ChannelsService } from '../domain/alerts/channels-service.js';
import { DeliveriesService } from '../domain/alerts/deliveries-service.js';
import { DeliveryQueue } from '../domain/alerts/delivery-queue.js';
import { Senders } from '../domain/alerts/senders.js';
import { channelRoutes } from '../http/routes/channels.js';
import { ChannelsRepository } from '../metadata/channels-repository.js';
import { DeliveriesRepository } from '../metadata/deliveries-repository.js';
import { component } from './component.js';

declare module './component.js' {
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
  build({ meta, config, log, cluster, bus }) {
    const senders = new Senders({
      smtpUrl: config.smtpUrl,
      smtpFrom: config.smtpFrom,
      denyCidrs: parseDenyCidrs(config.webhookDenyCidrs),
    });
    const channelsRepo = new ChannelsRepository(meta.db);
    const deliveriesRepo = new DeliveriesRepository(meta.db);
    const channels = new ChannelsService(channelsRepo, deliveriesRepo, senders, {
      // The triggers that notify it run within its new decider's rights (features/triggers.ts).
      onDestinationChanged: () => bus.publish('channels-changed', {}),
    });
    const deliveries = new DeliveriesService(deliveriesRepo);
    const deliveryQueue = new DeliveryQueue(deliveriesRepo, channelsRepo, senders, { log });
    return {
      provides: { channels, deliveries, deliveryQueue, senders },
      schemas: [ChannelSchema, DeliverySchema],
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
