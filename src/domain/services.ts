import path from 'node:path';
import type { Config } from '../config/config.js';
import { parseDenyCidrs } from '../config/deny-cidrs.js';
import { PublicUrl } from '../config/public-url.js';
import { type Bus, type ClusterTopics, InProcessBus } from '../core/bus.js';
import { type Log, silentLog } from '../core/log.js';
import type { MetricsSource } from '../core/metrics.js';
import type { GeoIpLookup } from '../enrich/geoip.js';
import type { EventStore } from '../event-store/event-store.js';
import { Batcher } from '../ingest/batcher.js';
import { IngestService } from '../ingest/ingest-service.js';
import { JournaldIntake } from '../ingest/journald-intake.js';
import { ChannelsRepository } from '../metadata/channels-repository.js';
import { DashboardRepositories } from '../metadata/dashboards-repository.js';
import type { MetadataDb } from '../metadata/database.js';
import { DeliveriesRepository } from '../metadata/deliveries-repository.js';
import { LeasesRepository } from '../metadata/leases-repository.js';
import { PipelinesRepository } from '../metadata/pipelines-repository.js';
import { QueriesRepository } from '../metadata/queries-repository.js';
import { ReportsRepository } from '../metadata/reports-repository.js';
import { TasksRepository } from '../metadata/tasks-repository.js';
import { TokensRepository } from '../metadata/tokens-repository.js';
import { TriggersRepository } from '../metadata/triggers-repository.js';
import { UsersRepository } from '../metadata/users-repository.js';
import { type JobStore, MemoryJobStore } from '../query/job-store.js';
import { QueryRunner } from '../query/runner.js';
import type { AlertCounts } from './alerts/alert-engine.js';
import { ChannelsService } from './alerts/channels-service.js';
import { DeliveriesService } from './alerts/deliveries-service.js';
import { DeliveryQueue } from './alerts/delivery-queue.js';
import { Senders } from './alerts/senders.js';
import type { Identity } from './auth/identity.js';
import { DashboardsService } from './dashboards/dashboards-service.js';
import { WidgetsService } from './dashboards/widgets-service.js';
import { EventsService } from './events/events-service.js';
import { FieldsService } from './fields/fields-service.js';
import { PipelinesService } from './pipelines/pipelines-service.js';
import { QueriesService } from './queries/queries-service.js';
import { ResultEnricher } from './queries/result-enricher.js';
import { LocalReportFiles, SharedReportFiles } from './reports/report-files.js';
import { ReportsService } from './reports/reports-service.js';
import { TasksService } from './tasks/tasks-service.js';
import { identityOf, TokensService } from './tokens/tokens-service.js';
import { TriggersService } from './triggers/triggers-service.js';
import { UsersService } from './users/users-service.js';

/** Services over the metadata store alone (what CLI user/token commands need). */
export interface MetaServices {
  tokens: TokensService;
  users: UsersService;
}

/** Every service the HTTP layer uses, wired once. */
export interface Services extends MetaServices {
  events: EventsService;
  fields: FieldsService;
  ingest: IngestService;
  /** systemd-journal-upload's uploads (streamed, the already-stored head skipped). */
  journald: JournaldIntake;
  batcher: Batcher;
  bus: Bus<ClusterTopics>;
  runner: QueryRunner;
  queries: QueriesService;
  dashboards: DashboardsService;
  widgets: WidgetsService;
  tasks: TasksService;
  triggers: TriggersService;
  channels: ChannelsService;
  deliveries: DeliveriesService;
  /** The durable queue of notifications (started and closed by the runtime). */
  deliveryQueue: DeliveryQueue;
  senders: Senders;
  /** Where clients reach the server: links in answers and notifications (told the port once it listens). */
  publicUrl: PublicUrl;
  pipelines: PipelinesService;
  reports: ReportsService;
  /** The server's logger (silent unless the serving process gives one). */
  log: Log;
  /** The services with figures for /metrics (each declares its own). */
  metricsSources: readonly MetricsSource[];
}

export function createMetaServices(meta: MetadataDb, config: Config): MetaServices {
  const usersRepo = new UsersRepository(meta.db);
  const tokens = new TokensService(new TokensRepository(meta.db), usersRepo, config.tokenCacheSeconds * 1000);
  const users = new UsersService(usersRepo, tokens);
  return { tokens, users };
}

/** What the runtime opens beside the stores (once, at start-up) for services to use. */
export interface ServiceResources {
  /** Null when no GeoIP database could be opened. */
  geoip: GeoIpLookup | null;
  /** In-process by default; Redis in a cluster. */
  bus?: Bus<ClusterTopics>;
  /** Memory by default; the metadata store's `query_jobs` in a cluster. */
  jobStore?: JobStore;
  /** This process's id among the cluster's nodes. */
  node?: string;
  /** How long a node's lease on a query or report lasts without renewal (ms). */
  leaseMs?: number;
  /** The server's logger: internal failures kept from clients are told here. */
  log?: Log;
}

export function createServices(
  meta: MetadataDb,
  events: EventStore,
  config: Config,
  resources: ServiceResources = { geoip: null },
): Services {
  const batcher = new Batcher(events, {
    intervalMs: config.ingestBatchMs,
    maxBatchEvents: config.ingestBatchEvents,
    maxQueuedEvents: config.ingestQueueEvents,
  });
  const log = resources.log ?? silentLog;
  const bus = resources.bus ?? new InProcessBus<ClusterTopics>();
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
  const runner = new QueryRunner(events, bus, resources.jobStore ?? new MemoryJobStore(), {
    sliceEvents: config.querySliceEvents,
    maxSlices: 8,
    refreshMs: config.queryRefreshMs,
    onError: (err, queryId) => log.error({ err, query_id: queryId }, 'internal error'),
    resultsBudgetBytes: config.queryResultsMemoryMb * 1048576,
    maxLivePerUser: config.queryLivePerUser,
    ...(resources.leaseMs ? { leaseMs: resources.leaseMs } : {}),
  });
  const usersRepo = new UsersRepository(meta.db);
  const tasks = new TasksService(new TasksRepository(meta.db), usersRepo);
  const senders = new Senders({
    smtpUrl: config.smtpUrl,
    smtpFrom: config.smtpFrom,
    denyCidrs: parseDenyCidrs(config.webhookDenyCidrs),
  });
  const channelsRepo = new ChannelsRepository(meta.db);
  const channels = new ChannelsService(channelsRepo, senders);
  const deliveriesRepo = new DeliveriesRepository(meta.db);
  const deliveryQueue = new DeliveryQueue(deliveriesRepo, channelsRepo, senders, { log });
  const publicUrl = new PublicUrl(config);
  const triggers = new TriggersService(
    new TriggersRepository(meta.db),
    new UsersRepository(meta.db),
    tasks,
    {
      taskWindowMs: config.triggerTaskWindowSeconds * 1000,
      maxPendingMatches: 1_000_000,
      maxPerUser: config.triggersPerUser,
      log,
      // What one node changes, every node learns (in one process this stays local).
      onChanged: () => bus.publish('triggers-changed', {}),
      ...(config.busUrl
        ? {
            cluster: {
              node: resources.node ?? 'node',
              leases: new LeasesRepository(meta.db),
              leaseMs: resources.leaseMs ?? 10_000,
              publish: (counts: AlertCounts) => bus.publish('alert-counts', counts),
            },
          }
        : {}),
    },
    { channels, queue: deliveryQueue, linkBase: () => publicUrl.get() },
  );
  batcher.onCommit((committed) => triggers.matchCommitted(committed));
  const metaServices = createMetaServices(meta, config);
  // What one node changes, every node learns (in one process these stay local).
  metaServices.tokens.onInvalidate((keyId, elsewhere) => {
    if (!elsewhere) bus.publish('rights-changed', { keyId: keyId ?? null });
  });
  bus.subscribe('rights-changed', (m, remote) => {
    if (remote) metaServices.tokens.invalidate(m.keyId ?? undefined, true);
  });
  bus.subscribe('triggers-changed', (_m, remote) => {
    if (remote) triggers.load().catch(() => undefined);
  });
  bus.subscribe('alert-counts', (m, remote) => {
    if (remote) triggers.alerts.receive(m);
  });
  const pipelines = new PipelinesService(new PipelinesRepository(meta.db), {
    log,
    onChanged: () => bus.publish('pipelines-changed', {}),
  });
  bus.subscribe('pipelines-changed', (_m, remote) => {
    if (remote) pipelines.load().catch(() => undefined);
  });
  const ingest = new IngestService(batcher, () => pipelines.current);
  const dashboardRepos = new DashboardRepositories(meta.db);
  const dashboards = new DashboardsService(dashboardRepos);
  // Trigger data shows only the triggers the caller may see.
  const triggerMatches = (evIds: readonly string[], who: Identity) => triggers.matchesOf(evIds, who);
  const enricher = new ResultEnricher({ geoip: resources.geoip, triggerMatches });
  const services = {
    ...metaServices,
    events: new EventsService(events, enricher, triggerMatches),
    fields: new FieldsService(events),
    ingest,
    journald: new JournaldIntake(ingest, events),
    channels,
    deliveries: new DeliveriesService(deliveriesRepo),
    deliveryQueue,
    senders,
    publicUrl,
    pipelines,
    batcher,
    bus,
    runner,
    queries: new QueriesService(
      new QueriesRepository(meta.db),
      runner,
      events,
      {
        exportMaxRows: config.exportMaxRows,
        syncWindowMs: config.querySyncMs,
        ttlMs: config.queryTtlSeconds * 1000,
      },
      enricher,
    ),
    dashboards,
    widgets: new WidgetsService(dashboardRepos),
    tasks,
    triggers,
    reports: new ReportsService(new ReportsRepository(meta.db), runner, events, dashboards, {
      files: resources.jobStore?.shared
        ? new SharedReportFiles(meta.db)
        : new LocalReportFiles(path.join(config.dataDir, 'reports')),
      ...(resources.jobStore?.shared && resources.node
        ? {
            cluster: {
              node: resources.node,
              leaseMs: resources.leaseMs ?? 3000,
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
      enricher,
    }),
    log,
  };
  return {
    ...services,
    metricsSources: [
      batcher,
      ingest,
      pipelines,
      runner,
      triggers,
      deliveryQueue,
      services.events,
      services.reports,
    ],
  };
}
