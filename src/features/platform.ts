/** Builds the platform every component stands on, once the stores are open. */
import type { Config } from '../config/config.js';
import { PublicUrl } from '../config/public-url.js';
import { type Bus, type ClusterTopics, InProcessBus } from '../core/bus.js';
import { type Log, silentLog } from '../core/log.js';
import type { GeoIpLookup } from '../enrich/geoip.js';
import type { EventStore } from '../event-store/event-store.js';
import { Batcher } from '../ingest/batcher.js';
import type { MetadataDb } from '../metadata/database.js';
import { type JobStore, MemoryJobStore } from '../query/job-store.js';
import type { Platform } from './component.js';

/** What the runtime opened beside the stores. */
export interface PlatformResources {
  geoip: GeoIpLookup | null;
  /** A cluster node's bus and shared job store; in-process ones without. */
  cluster?: { bus: Bus<ClusterTopics>; jobStore: JobStore };
  node?: string;
  leaseMs?: number;
  log?: Log;
}

export function createPlatform(
  meta: MetadataDb,
  events: EventStore,
  config: Config,
  resources: PlatformResources,
): Platform {
  const bus = resources.cluster?.bus ?? new InProcessBus<ClusterTopics>();
  const batcher = new Batcher(events, {
    intervalMs: config.ingestBatchMs,
    maxBatchEvents: config.ingestBatchEvents,
    maxQueuedEvents: config.ingestQueueEvents,
  });
  batcher.onCommit((committed) => {
    if (!committed.length) return;
    let fromMs = Number.POSITIVE_INFINITY;
    let toMs = Number.NEGATIVE_INFINITY;
    for (const e of committed) {
      if (e.ts < fromMs) fromMs = e.ts;
      if (e.ts > toMs) toMs = e.ts;
    }
    bus.publish('events-committed', { count: committed.length, fromMs, toMs });
  });
  // Another node's commits size this node's query slices too.
  bus.subscribe('events-committed', (c, remote) => {
    if (remote) events.appendedElsewhere(c.count, c.fromMs, c.toMs);
  });
  return {
    config,
    meta,
    events,
    batcher,
    bus,
    jobStore: resources.cluster?.jobStore ?? new MemoryJobStore(),
    geoip: resources.geoip,
    node: resources.node ?? 'node',
    cluster: Boolean(resources.cluster),
    leaseMs: resources.leaseMs ?? 3000,
    publicUrl: new PublicUrl(config),
    log: resources.log ?? silentLog,
  };
}
