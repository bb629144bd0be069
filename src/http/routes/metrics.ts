import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Services } from '../../domain/services.js';
import type { EventStoreStats } from '../../event-store/event-store.js';
import type { GelfStats } from '../../ingest/gelf-listener.js';
import type { SyslogStats } from '../../ingest/syslog-listener.js';
import type { LiveHub } from '../../live/live-hub.js';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Counts a syslog listener's traffic and losses in /metrics (main.ts starts the
     * listener after the app). Returns a function that stops counting it.
     */
    watchSyslog(listener: { stats(): SyslogStats }): () => void;
    /** The same for a GELF listener (UDP and TCP). */
    watchGelf(listener: { stats(): GelfStats }): () => void;
  }
}

/** How long store figures (event count, bytes, oldest event, reports) are reused between scrapes. */
const STORE_STATS_MS = 10_000;

interface StoreFigures {
  events: EventStoreStats;
  reports: Record<string, number>;
}

/**
 * A counter that mirrors a running total kept elsewhere (the batcher, the hub, ...): at
 * each scrape it adds what the total grew by, so the components keep plain numbers and
 * only this file knows Prometheus.
 */
function mirroredCounter(registry: Registry, name: string, help: string, total: () => number) {
  let seen = 0;
  return new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      const now = total();
      if (now > seen) this.inc(now - seen);
      seen = now;
    },
  });
}

/** mirroredCounter with one label: a running total per label value. */
function labelledCounter(
  registry: Registry,
  name: string,
  help: string,
  label: string,
  totals: Record<string, () => number>,
) {
  const seen: Record<string, number> = {};
  return new Counter({
    name,
    help,
    labelNames: [label],
    registers: [registry],
    collect() {
      for (const [value, total] of Object.entries(totals)) {
        const now = total();
        this.inc({ [label]: value }, Math.max(0, now - (seen[value] ?? 0)));
        seen[value] = now;
      }
    },
  });
}

function gauge(registry: Registry, name: string, help: string, value: () => number) {
  return new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(value());
    },
  });
}

/**
 * `GET /metrics`: Prometheus text format, no token (as Prometheus scrapes;
 * it holds counts only). One registry per app, so several apps in one process (tests)
 * never share counters. Wrapped with fastify-plugin so its timing hook sees every route.
 */
export const metricsRoutes = fp(async (app: FastifyInstance, opts: { services: Services; hub: LiveHub }) => {
  const { services, hub } = opts;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'logscope_' });

  const batcher = () => services.batcher.stats();
  mirroredCounter(
    registry,
    'logscope_ingest_events_total',
    'Events committed to the event store.',
    () => batcher().committedEvents,
  );
  mirroredCounter(
    registry,
    'logscope_ingest_rejected_total',
    'Records refused at ingest (malformed or over limits).',
    () => services.ingest.rejectedRecords,
  );
  mirroredCounter(
    registry,
    'logscope_ingest_commits_total',
    'Group commits to the event store.',
    () => batcher().commits,
  );
  mirroredCounter(
    registry,
    'logscope_ingest_commit_seconds_total',
    'Time spent in group commits.',
    () => batcher().commitSeconds,
  );
  mirroredCounter(
    registry,
    'logscope_ingest_failed_commits_total',
    'Group commits that failed.',
    () => batcher().failedCommits,
  );
  gauge(
    registry,
    'logscope_ingest_queued_events',
    'Events waiting for a commit.',
    () => batcher().queuedEvents,
  );

  const syslogListeners = new Set<{ stats(): SyslogStats }>();
  app.decorate('watchSyslog', (listener: { stats(): SyslogStats }) => {
    syslogListeners.add(listener);
    return () => void syslogListeners.delete(listener);
  });
  const syslog = (key: keyof SyslogStats) => () => {
    let total = 0;
    for (const l of syslogListeners) total += l.stats()[key];
    return total;
  };
  mirroredCounter(
    registry,
    'logscope_syslog_udp_received_total',
    'Syslog datagrams read from the UDP socket.',
    syslog('udpReceived'),
  );
  let seenDrops = { kernel: 0, refused: 0 };
  new Counter({
    name: 'logscope_syslog_udp_dropped_total',
    help:
      'Syslog datagrams lost: reason="kernel" dropped by the kernel for a full socket receive buffer ' +
      '(raise syslogUdpReceiveBuffer and net.core.rmem_max), reason="refused" shed by the listener or refused by ingest (queue full, store failing).',
    labelNames: ['reason'],
    registers: [registry],
    collect() {
      const now = { kernel: syslog('udpKernelDrops')(), refused: syslog('udpRefused')() };
      for (const reason of ['kernel', 'refused'] as const) {
        this.inc({ reason }, Math.max(0, now[reason] - seenDrops[reason]));
      }
      seenDrops = now;
    },
  });
  mirroredCounter(
    registry,
    'logscope_syslog_tcp_refused_total',
    'Syslog TCP messages refused by ingest (queue full, store failing).',
    syslog('tcpRefused'),
  );
  for (const [name, key, help] of [
    [
      'logscope_syslog_tcp_connections_refused_total',
      'tcpConnectionsRefused',
      'Syslog TCP connections closed as they came, over intakeTcpMaxConnections.',
    ],
    [
      'logscope_syslog_tcp_idle_closed_total',
      'tcpIdleClosed',
      'Syslog TCP connections closed after intakeTcpIdleSeconds without data.',
    ],
  ] as const)
    mirroredCounter(registry, name, help, syslog(key));
  gauge(
    registry,
    'logscope_syslog_udp_receive_buffer_bytes',
    'Receive buffer the kernel granted the syslog UDP socket.',
    syslog('udpReceiveBufferBytes'),
  );

  // Pipelines: per pipeline name, counters that only grow (a pipeline's counts go on
  // across changes, but start at zero for a new pipeline of a name seen before).
  const pipelineSeen = new Map<string, number>();
  for (const [kind, help] of [
    ['matched', 'Events a pipeline applied to (its `when` selected them).'],
    [
      'failed',
      'Events on which a pipeline step failed; the pipeline was undone for them and they were stored unchanged.',
    ],
    ['dropped', 'Events a pipeline dropped (not stored).'],
  ] as const) {
    new Counter({
      name: `logscope_pipeline_${kind}_events_total`,
      help,
      labelNames: ['pipeline'],
      registers: [registry],
      collect() {
        for (const p of services.pipelines.stats().pipelines) {
          const key = `${kind}\u0000${p.name}`;
          const seen = pipelineSeen.get(key) ?? 0;
          // Below what was seen: counting started again (a pipeline recreated under its name).
          const delta = p[kind] >= seen ? p[kind] - seen : p[kind];
          if (delta > 0) this.inc({ pipeline: p.name }, delta);
          pipelineSeen.set(key, p[kind]);
        }
      },
    });
  }
  mirroredCounter(
    registry,
    'logscope_pipeline_seconds_total',
    'Time spent running pipelines at intake.',
    () => services.pipelines.stats().seconds,
  );

  const gelfListeners = new Set<{ stats(): GelfStats }>();
  app.decorate('watchGelf', (listener: { stats(): GelfStats }) => {
    gelfListeners.add(listener);
    return () => void gelfListeners.delete(listener);
  });
  const gelf = (key: keyof GelfStats) => () => {
    let total = 0;
    for (const l of gelfListeners) total += l.stats()[key];
    return total;
  };
  labelledCounter(
    registry,
    'logscope_gelf_received_total',
    'GELF input read by the listener: transport="udp" datagrams (a chunk counts as one), transport="tcp" frames.',
    'transport',
    { udp: gelf('udpReceived'), tcp: gelf('tcpReceived') },
  );
  labelledCounter(
    registry,
    'logscope_gelf_dropped_total',
    'GELF messages not stored: reason="malformed" (not GELF: bad chunk, corrupt compression, not JSON, no short_message), ' +
      'reason="too_large" (decompressed or framed past 1 MiB), reason="incomplete" (chunks missing after 5 s, or evicted from a full reassembly buffer), ' +
      'reason="refused" (shed by the listener or refused by ingest: queue full, store failing), reason="kernel" (datagrams dropped for a full socket receive buffer).',
    'reason',
    {
      malformed: gelf('malformed'),
      too_large: gelf('tooLarge'),
      incomplete: gelf('incomplete'),
      refused: gelf('refused'),
      kernel: gelf('udpKernelDrops'),
    },
  );
  labelledCounter(
    registry,
    'logscope_gelf_tcp_connections_closed_total',
    'GELF TCP connections closed by the listener: reason="over_limit" (over intakeTcpMaxConnections, as they came), reason="idle" (intakeTcpIdleSeconds without data).',
    'reason',
    { over_limit: gelf('tcpConnectionsRefused'), idle: gelf('tcpIdleClosed') },
  );

  const memory = () => services.runner.memory();
  gauge(
    registry,
    'logscope_query_results_bytes',
    'Estimated memory held by query results (bounded by queryResultsMemoryMb).',
    () => memory().heldBytes,
  );
  mirroredCounter(
    registry,
    'logscope_query_results_evictions_total',
    'Finished query results dropped to stay within the budget (recomputed on their next read).',
    () => memory().evictions,
  );

  const triggers = () => services.triggers.stats();
  gauge(
    registry,
    'logscope_triggers_enabled',
    'Enabled triggers matched on ingest.',
    () => triggers().enabled,
  );
  mirroredCounter(
    registry,
    'logscope_trigger_matches_total',
    'Trigger matches recorded.',
    () => triggers().recorded,
  );
  mirroredCounter(
    registry,
    'logscope_trigger_matches_dropped_total',
    'Trigger matches dropped (recording fell behind).',
    () => triggers().dropped,
  );
  gauge(
    registry,
    'logscope_trigger_matches_pending',
    'Trigger matches waiting to be recorded.',
    () => triggers().pending,
  );
  const alerts = () => services.triggers.alerts.stats();
  mirroredCounter(
    registry,
    'logscope_alert_firings_total',
    'Trigger conditions met and notified (threshold crossings, silences, match notifications).',
    () => alerts().fired,
  );
  mirroredCounter(
    registry,
    'logscope_alert_suppressed_total',
    'Threshold firings held back by the trigger’s cooldown.',
    () => alerts().suppressed,
  );
  gauge(
    registry,
    'logscope_alert_notifier',
    'Whether this process sends the notifications (1; in a cluster, the holder of the alert-notifier lease).',
    () => (services.triggers.alerts.sending() ? 1 : 0),
  );
  gauge(
    registry,
    'logscope_alert_groups',
    'Groups whose sliding windows are kept in memory, over every threshold trigger.',
    () => alerts().groups,
  );
  mirroredCounter(
    registry,
    'logscope_alert_groups_refused_total',
    'Events of a new group not counted because their threshold trigger already keeps windows for 1,000 groups.',
    () => alerts().refusedGroups,
  );
  mirroredCounter(
    registry,
    'logscope_deliveries_sent_total',
    'Notifications delivered by this process.',
    () => services.deliveryQueue.sentCount,
  );
  mirroredCounter(
    registry,
    'logscope_delivery_failed_attempts_total',
    'Delivery attempts that failed (each is retried, or given up after 24 h).',
    () => services.deliveryQueue.failedAttempts,
  );

  new Gauge({
    name: 'logscope_queries',
    help: 'Queries held in memory, by status.',
    labelNames: ['status'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [status, n] of Object.entries(services.runner.stats())) this.set({ status }, n);
    },
  });

  const live = () => hub.stats();
  gauge(
    registry,
    'logscope_live_connections',
    'Open /ws/live-updates connections.',
    () => live().connections,
  );
  gauge(
    registry,
    'logscope_live_subscriptions',
    'Subscriptions over all connections.',
    () => live().subscriptions,
  );
  mirroredCounter(
    registry,
    'logscope_live_messages_total',
    'Websocket messages sent.',
    () => live().messagesSent,
  );
  mirroredCounter(
    registry,
    'logscope_live_slow_clients_closed_total',
    'Clients closed with 1013 for not keeping up.',
    () => live().slowClientsClosed,
  );

  // The stores are asked at most every STORE_STATS_MS, whatever the scrape rate:
  // counting a large store is not free, and a scrape must stay quick.
  let storeStats: { at: number; value: Promise<StoreFigures> } | undefined;
  const figures = (): Promise<StoreFigures> => {
    if (!storeStats || Date.now() - storeStats.at > STORE_STATS_MS) {
      const value = Promise.all([services.events.storeStats(), services.reports.countByStatus()]).then(
        ([events, reports]) => ({ events, reports }),
      );
      storeStats = { at: Date.now(), value };
      // A failed read is not kept: the next scrape asks again.
      value.catch(() => {
        if (storeStats?.value === value) storeStats = undefined;
      });
    }
    return storeStats.value;
  };
  const storeGauge = (name: string, help: string, read: (f: StoreFigures) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        this.set(read(await figures()));
      },
    });
  storeGauge('logscope_events_stored', 'Events in the event store.', (f) => f.events.events);
  storeGauge(
    'logscope_event_store_bytes',
    'Bytes the event store occupies on disk (file and write-ahead log).',
    (f) => f.events.bytesOnDisk,
  );
  storeGauge(
    'logscope_oldest_event_age_seconds',
    'Age of the oldest stored event by its time (0 when the store is empty); watch it against retentionDays.',
    (f) => (f.events.oldestTs === null ? 0 : Math.max(0, (Date.now() - f.events.oldestTs) / 1000)),
  );
  new Gauge({
    name: 'logscope_reports',
    help: 'Reports kept, by status (PENDING, READY, ERROR).',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      const { reports } = await figures();
      for (const [status, n] of Object.entries(reports)) this.set({ status }, n);
    },
  });

  const requests = new Histogram({
    name: 'logscope_http_request_duration_seconds',
    help: 'HTTP requests by method, route and status.',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  app.addHook('onResponse', async (request, reply) => {
    // The route pattern, never the raw URL: ids must not make a series each.
    const route = request.routeOptions.url ?? 'unmatched';
    requests.observe(
      { method: request.method, route, status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });

  app.get(
    '/metrics',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['service'],
        summary: 'Prometheus metrics (text exposition format; no token)',
        description:
          'Counts and gauges for scraping: events stored, event store bytes, oldest event age, ingest and commit counters, syslog UDP drops and GELF drops by reason, query and report figures, live connections, HTTP request durations by route. Public: it holds counts only, no event content.',
        security: [],
        response: {
          200: {
            description: 'Prometheus text exposition format 0.0.4',
            content: { 'text/plain; version=0.0.4; charset=utf-8': { schema: { type: 'string' } } },
          },
        },
      },
    },
    async (_request, reply) => {
      reply.header('content-type', registry.contentType);
      return registry.metrics();
    },
  );
});
