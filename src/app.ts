import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Config } from './config/config.js';
import type { Services } from './domain/services.js';
import { errorHandler, notFoundHandler } from './errors/error-handler.js';
import { authPlugin } from './http/plugins/auth.js';
import { bodyPlugin } from './http/plugins/body.js';
import { openapiPlugin } from './http/plugins/openapi.js';
import { authTokenRoutes } from './http/routes/authtokens.js';
import { dashboardRoutes } from './http/routes/dashboards.js';
import { esBulkRoutes } from './http/routes/es-bulk.js';
import { eventRoutes } from './http/routes/events.js';
import { type HealthCheck, healthRoutes } from './http/routes/health.js';
import { IngestResultSchema, ingestRoutes } from './http/routes/ingest.js';
import { liveRoutes } from './http/routes/live.js';
import { metricsRoutes } from './http/routes/metrics.js';
import { GenericQuerySchema, queryRoutes } from './http/routes/queries.js';
import { reportRoutes, ShortReportSchema } from './http/routes/reports.js';
import { taskRoutes } from './http/routes/tasks.js';
import { triggerRoutes } from './http/routes/triggers.js';
import { userRoutes } from './http/routes/users.js';
import { widgetRoutes } from './http/routes/widgets.js';
import {
  DashboardExportSchema,
  DashboardSchema,
  WidgetExportSchema,
  WidgetSchema,
} from './http/schemas/dashboards.js';
import { TaskSchema } from './http/schemas/tasks.js';
import { TriggerSchema } from './http/schemas/triggers.js';
import { AuthTokenSchema, UserSchema } from './http/schemas/users.js';
import { LiveHub } from './live/live-hub.js';
import { WidgetQueries } from './live/widget-queries.js';
import { VERSION } from './version.js';

export interface AppDeps {
  config: Config;
  services: Services;
  checks: HealthCheck[];
  logger?: FastifyServerOptions['logger'];
}

function makeAjv(coerce: boolean) {
  const ajv = new Ajv.default({
    // Query strings and paths arrive as text; bodies must carry their real JSON types.
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
    allErrors: true,
    strict: false,
  });
  addFormats.default(ajv);
  return ajv;
}

/** Builds the application with all plugins and routes. Never listens: main.ts does. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, services } = deps;
  const app = Fastify({
    logger: deps.logger ?? false,
    bodyLimit: config.bodyLimit,
    routerOptions: { ignoreTrailingSlash: true },
    requestIdHeader: 'x-request-id',
    ajv: { customOptions: {} },
  });
  const bodyAjv = makeAjv(false);
  const textAjv = makeAjv(true);
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object),
  );
  app.setErrorHandler(errorHandler);
  services.triggers.warn = (message, detail) => app.log.warn(detail ?? {}, message);
  app.setNotFoundHandler(notFoundHandler);

  await app.register(openapiPlugin, { version: VERSION });
  app.addSchema(UserSchema);
  app.addSchema(AuthTokenSchema);
  app.addSchema(IngestResultSchema);
  app.addSchema(GenericQuerySchema);
  app.addSchema(ShortReportSchema);
  app.addSchema(TaskSchema);
  app.addSchema(TriggerSchema);
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
    pingMs: 30_000,
    tailMs: 250,
    refreshMs: config.liveRefreshMs,
  });
  const offEvents = services.bus.subscribe('events-committed', (events) => hub.eventsArrived(events));
  services.queries.keepWhile((id) => hub.watches(id));
  app.addHook('onClose', async () => {
    offEvents();
    hub.close();
  });
  // Before the routes: its timing hook must see all of them.
  await app.register(metricsRoutes, { services, hub });

  await app.register(healthRoutes, { version: VERSION, checks: deps.checks });
  await app.register(authTokenRoutes, { tokens: services.tokens });
  await app.register(userRoutes, {
    users: services.users,
    loginAttemptsPerMinute: config.loginAttemptsPerMinute,
  });
  await app.register(eventRoutes, { events: services.events });
  await app.register(queryRoutes, { queries: services.queries });
  await app.register(reportRoutes, { reports: services.reports });
  await app.register(liveRoutes, { hub });
  await app.register(taskRoutes, { tasks: services.tasks });
  await app.register(triggerRoutes, { triggers: services.triggers });
  await app.register(dashboardRoutes, { dashboards: services.dashboards });
  await app.register(widgetRoutes, { widgets: services.widgets });
  await app.register(ingestRoutes, { ingest: services.ingest, bodyLimit: config.ingestBodyLimit });
  await app.register(esBulkRoutes, { ingest: services.ingest, bodyLimit: config.ingestBodyLimit });
  return app;
}
