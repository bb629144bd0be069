import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { ValidateFunction } from 'ajv';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import type { Config } from './config/config.js';
import type { Services } from './domain/services.js';
import { errorHandler, notFoundHandler } from './errors/error-handler.js';
import { badRequest } from './errors/errors.js';
import { requestScope } from './errors/process-net.js';
import { authPlugin } from './http/plugins/auth.js';
import { bodyPlugin } from './http/plugins/body.js';
import { openapiPlugin } from './http/plugins/openapi.js';
import { logRequest, serializeRequest } from './http/request-log.js';
import { authTokenRoutes } from './http/routes/authtokens.js';
import { channelRoutes } from './http/routes/channels.js';
import { dashboardRoutes } from './http/routes/dashboards.js';
import { esBulkRoutes } from './http/routes/es-bulk.js';
import { eventRoutes } from './http/routes/events.js';
import { fieldRoutes } from './http/routes/fields.js';
import { gelfRoutes } from './http/routes/gelf.js';
import { type HealthCheck, healthRoutes } from './http/routes/health.js';
import { IngestResultSchema, ingestRoutes } from './http/routes/ingest.js';
import { journaldRoutes } from './http/routes/journald.js';
import { liveRoutes } from './http/routes/live.js';
import { lokiRoutes } from './http/routes/loki.js';
import { metricsRoutes } from './http/routes/metrics.js';
import { otlpRoutes } from './http/routes/otlp.js';
import { pipelineRoutes } from './http/routes/pipelines.js';
import { GenericQuerySchema, queryRoutes } from './http/routes/queries.js';
import { reportRoutes, ShortReportSchema } from './http/routes/reports.js';
import { taskRoutes } from './http/routes/tasks.js';
import { triggerRoutes } from './http/routes/triggers.js';
import { uiRoutes } from './http/routes/ui.js';
import { userRoutes } from './http/routes/users.js';
import { widgetRoutes } from './http/routes/widgets.js';
import { ChannelSchema, DeliverySchema } from './http/schemas/alerts.js';
import {
  DashboardExportSchema,
  DashboardSchema,
  WidgetExportSchema,
  WidgetSchema,
} from './http/schemas/dashboards.js';
import { PipelineSchema } from './http/schemas/pipelines.js';
import { TaskSchema } from './http/schemas/tasks.js';
import { TriggerSchema } from './http/schemas/triggers.js';
import { AuthTokenSchema, UserSchema } from './http/schemas/users.js';
import { makeAjv } from './http/validator.js';
import { LiveHub } from './live/live-hub.js';
import { WidgetQueries } from './live/widget-queries.js';
import { VERSION } from './version.js';

export interface AppDeps {
  config: Config;
  services: Services;
  checks: HealthCheck[];
  /** Options of a logger the app makes for itself (tests), or none. */
  logger?: FastifyServerOptions['logger'];
  /** The serving process's logger (createServerLogger), the one its services were given too. */
  loggerInstance?: FastifyBaseLogger;
}

/**
 * Fastify's response serializers, each compiled on its route's first answer: compiling
 * all ~70 at start-up took most of a second, and a restart should be quick. Validators
 * are deferred the same way (buildApp).
 */
function lazySerializers(externalSchemas: unknown, options: unknown) {
  const compile = SerializerSelector()(externalSchemas as never, options as never);
  return (route: Parameters<typeof compile>[0]) => {
    let serialize: ((data: unknown) => string) | undefined;
    return (data: unknown) => {
      serialize ??= compile(route) as (data: unknown) => string;
      return serialize(data);
    };
  };
}

/** A Host header: a name or IPv4 address, or a bracketed IPv6 address, and an optional port. */
const HOST = /^(?:[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** The logger options with the redacting request serializer (whatever else they say). */
function withRedaction(logger: AppDeps['logger']): FastifyServerOptions['logger'] {
  if (!logger) return false;
  const options = logger === true ? {} : logger;
  return { ...options, serializers: { ...options.serializers, req: serializeRequest } };
}

/** Builds the application with all plugins and routes. Never listens: main.ts does. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, services } = deps;
  const app = Fastify({
    ...(deps.loggerInstance
      ? { loggerInstance: deps.loggerInstance }
      : { logger: withRedaction(deps.logger) }),
    bodyLimit: config.bodyLimit,
    routerOptions: { ignoreTrailingSlash: true },
    schemaController: { compilersFactory: { buildSerializer: lazySerializers } },
    requestIdHeader: 'x-request-id',
    // One line per request, written by the onResponse hook below (Fastify's own are two).
    logController: new LogController({ disableRequestLogging: true }),
    ajv: { customOptions: {} },
    // URLs the router refuses (bad percent-encoding, an over-long path segment) answer
    // in the API's error shape like every other error.
    frameworkErrors: (error, _request, res) => {
      const tooLong = error.statusCode === 414;
      const reply = res as FastifyReply;
      void reply
        .code(tooLong ? 414 : 400)
        .type('application/json; charset=utf-8')
        .send(
          tooLong
            ? { detail: 'A path segment is too long.', code: 'uri_too_long' }
            : { detail: 'The URL is not valid (bad percent-encoding).', code: 'bad_url' },
        );
    },
  });
  const bodyAjv = makeAjv(false);
  const textAjv = makeAjv(true);
  // Compiled on a route's first request, not at start-up (see lazySerializers).
  app.setValidatorCompiler(({ schema, httpPart }) => {
    let compiled: ValidateFunction | undefined;
    const validate = (data: unknown) => {
      compiled ??= (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object);
      const ok = compiled(data);
      validate.errors = compiled.errors;
      return ok;
    };
    validate.errors = null as ValidateFunction['errors'];
    return validate;
  });
  app.setErrorHandler(errorHandler);
  app.decorate('publicBaseUrl', () => services.publicUrl.get());
  app.addHook('onListen', async () => {
    const address = app.server.address();
    if (address && typeof address === 'object') services.publicUrl.listening(address.port);
  });
  // First of all: every callback and promise this request's handling starts knows the
  // request, so the process-wide net (errors/process-net.ts) can name it and answer it.
  app.addHook('onRequest', (request, reply, done) => {
    requestScope.enterWith({
      requestId: String(request.id),
      fail: () => {
        if (reply.sent || reply.raw.headersSent) return;
        void reply
          .code(500)
          .type('application/json; charset=utf-8')
          .send({ detail: 'Internal server error.', code: 'server_error', request_id: String(request.id) });
      },
    });
    done();
  });
  // Before everything else: a Host the URL parser would choke on is the client's error.
  app.addHook('onRequest', async (request) => {
    const host = request.headers.host;
    if (host !== undefined && !HOST.test(host)) throw badRequest('Malformed Host header.', 'bad_host');
  });
  app.addHook('onResponse', async (request, reply) =>
    logRequest(request, reply.statusCode, reply.elapsedTime),
  );
  app.setNotFoundHandler(notFoundHandler);

  await app.register(openapiPlugin, { version: VERSION });
  app.addSchema(UserSchema);
  app.addSchema(AuthTokenSchema);
  app.addSchema(IngestResultSchema);
  app.addSchema(GenericQuerySchema);
  app.addSchema(ShortReportSchema);
  app.addSchema(TaskSchema);
  app.addSchema(TriggerSchema);
  app.addSchema(PipelineSchema);
  app.addSchema(ChannelSchema);
  app.addSchema(DeliverySchema);
  app.addSchema(WidgetSchema);
  app.addSchema(WidgetExportSchema);
  app.addSchema(DashboardSchema);
  app.addSchema(DashboardExportSchema);
  await app.register(bodyPlugin);
  await app.register(authPlugin, { tokens: services.tokens });
  const widgetQueries = new WidgetQueries(services.dashboards, services.queries, services.runner);
  const hub = new LiveHub(services.queries, services.runner, widgetQueries, {
    maxBufferedBytes: config.liveBufferBytes,
    maxMessageBytes: 64 * 1024,
    maxUpdateBytes: config.liveUpdateMaxBytes,
    log: app.log,
    pingMs: 30_000,
    tailMs: 250,
    refreshMs: config.liveRefreshMs,
    identities: services.tokens,
    recheckMs: Math.max(1, config.tokenCacheSeconds) * 1000,
    ...(services.bus.kind === 'in-process' ? {} : { busConnected: () => services.bus.connected }),
  });
  // This node's commits come with their events (tailed in memory); the other nodes' as a summary.
  const offEvents = services.batcher.onCommit((events) => hub.eventsArrived(events));
  const offElsewhere = services.bus.subscribe('events-committed', (commit, remote) => {
    if (remote) hub.committedElsewhere(commit);
  });
  app.addHook('onClose', async () => {
    offEvents();
    offElsewhere();
    hub.close();
  });
  // Before the routes: its timing hook must see all of them.
  await app.register(metricsRoutes, { sources: [...services.metricsSources, hub] });

  await app.register(healthRoutes, { version: VERSION, checks: deps.checks });
  await app.register(authTokenRoutes, { tokens: services.tokens });
  await app.register(userRoutes, {
    users: services.users,
    loginFailuresPerUsername: config.loginFailuresPerUsername,
    loginFailuresPerAddress: config.loginFailuresPerAddress,
    sessionHours: config.sessionHours,
  });
  await app.register(eventRoutes, { events: services.events });
  await app.register(fieldRoutes, { fields: services.fields });
  await app.register(queryRoutes, { queries: services.queries });
  await app.register(reportRoutes, { reports: services.reports });
  await app.register(liveRoutes, { hub });
  await app.register(taskRoutes, { tasks: services.tasks });
  await app.register(triggerRoutes, { triggers: services.triggers });
  await app.register(pipelineRoutes, { pipelines: services.pipelines });
  await app.register(channelRoutes, { channels: services.channels, deliveries: services.deliveries });
  await app.register(dashboardRoutes, { dashboards: services.dashboards });
  await app.register(widgetRoutes, { widgets: services.widgets });
  // Every intake path: the same service and bounds.
  const intake = {
    ingest: services.ingest,
    bodyLimit: config.ingestBodyLimit,
    maxRecords: config.ingestMaxRecords,
  };
  for (const routes of [ingestRoutes, esBulkRoutes, gelfRoutes, lokiRoutes, otlpRoutes])
    await app.register(routes, intake);
  await app.register(journaldRoutes, { journald: services.journald });
  await app.register(uiRoutes);
  return app;
}
