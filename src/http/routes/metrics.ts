import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { growth, type MetricDecl, type MetricsSource } from '../../core/metrics.js';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Shows one more component's figures in /metrics (a syslog or GELF listener main.ts
     * starts after the app). Figures of the same name are summed over components. Returns
     * a function that stops showing them.
     */
    watchMetrics(source: MetricsSource): () => void;
  }
}

/** Reads a declaration as one value per label value ('' when it has no label). */
async function readSeries(decl: MetricDecl): Promise<Record<string, number>> {
  const value = await decl.read();
  return typeof value === 'number' ? { '': value } : { ...value };
}

/**
 * One Prometheus metric for the declarations of that name over every watched component:
 * the sum of their series. A counter adds what each component's running total grew by.
 */
function register(registry: Registry, first: MetricDecl, decls: () => MetricDecl[]) {
  // Several labels are named `a,b`, and each value is keyed `x,y` in the same order.
  const labelNames = first.label ? first.label.split(',') : [];
  const labels = (value: string) => {
    const parts = value.split(',');
    return Object.fromEntries(labelNames.map((name, i) => [name, parts[i] ?? '']));
  };
  if (first.type === 'histogram') {
    return new Histogram({
      name: first.name,
      help: first.help,
      labelNames,
      buckets: [...(first.buckets ?? [])],
      registers: [registry],
      collect() {
        for (const d of decls()) for (const v of d.drain?.() ?? []) this.observe(v);
      },
    });
  }
  if (first.type === 'gauge') {
    return new Gauge({
      name: first.name,
      help: first.help,
      labelNames,
      registers: [registry],
      async collect() {
        const sums: Record<string, number> = {};
        for (const d of decls())
          for (const [k, v] of Object.entries(await readSeries(d))) sums[k] = (sums[k] ?? 0) + v;
        this.reset();
        for (const [k, v] of Object.entries(sums)) this.set(labels(k), v);
      },
    });
  }
  const seen = new WeakMap<MetricDecl, Record<string, number>>();
  return new Counter({
    name: first.name,
    help: first.help,
    labelNames,
    registers: [registry],
    async collect() {
      for (const d of decls()) {
        const before = seen.get(d) ?? {};
        const now = await readSeries(d);
        for (const [k, v] of Object.entries(now)) {
          // Even 0: a labelled series shows from its first scrape.
          this.inc(labels(k), growth(v, before[k] ?? 0));
        }
        seen.set(d, now);
      }
    },
  });
}

/**
 * `GET /metrics`: Prometheus text format, no token (as Prometheus scrapes;
 * it holds counts only). One registry per app, so several apps in one process (tests)
 * never share counters. The figures are those each component declares (`metrics()`, see
 * core/metrics.ts); this file only turns them into Prometheus metrics. Wrapped with
 * fastify-plugin so its timing hook sees every route.
 */
export const metricsRoutes = fp(async (app: FastifyInstance, opts: { sources: readonly MetricsSource[] }) => {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'logscope_' });

  // Each component's declarations, made once (a counter keeps what it saw per declaration).
  const watched = new Map<MetricsSource, readonly MetricDecl[]>();
  const byName = new Map<string, MetricDecl>();
  const watch = (source: MetricsSource) => {
    const decls = source.metrics();
    watched.set(source, decls);
    for (const d of decls) {
      if (byName.has(d.name)) continue;
      byName.set(d.name, d);
      register(registry, d, () => [...watched.values()].flatMap((ds) => ds.filter((x) => x.name === d.name)));
    }
    return () => void watched.delete(source);
  };
  for (const source of opts.sources) watch(source);
  app.decorate('watchMetrics', watch);

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
