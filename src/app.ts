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
import { esBulkRoutes } from './http/routes/es-bulk.js';
import { eventRoutes } from './http/routes/events.js';
import { type HealthCheck, healthRoutes } from './http/routes/health.js';
import { IngestResultSchema, ingestRoutes } from './http/routes/ingest.js';
import { GenericQuerySchema, queryRoutes } from './http/routes/queries.js';
import { reportRoutes, ShortReportSchema } from './http/routes/reports.js';
import { taskRoutes } from './http/routes/tasks.js';
import { userRoutes } from './http/routes/users.js';
import { TaskSchema } from './http/schemas/tasks.js';
import { AuthTokenSchema, UserSchema } from './http/schemas/users.js';
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
  app.setNotFoundHandler(notFoundHandler);

  await app.register(openapiPlugin, { version: VERSION });
  app.addSchema(UserSchema);
  app.addSchema(AuthTokenSchema);
  app.addSchema(IngestResultSchema);
  app.addSchema(GenericQuerySchema);
  app.addSchema(ShortReportSchema);
  app.addSchema(TaskSchema);
  await app.register(bodyPlugin);
  await app.register(authPlugin, { tokens: services.tokens });

  await app.register(healthRoutes, { version: VERSION, checks: deps.checks });
  await app.register(authTokenRoutes, { tokens: services.tokens });
  await app.register(userRoutes, { users: services.users });
  await app.register(eventRoutes, { events: services.events });
  await app.register(queryRoutes, { queries: services.queries });
  await app.register(reportRoutes, { reports: services.reports });
  await app.register(taskRoutes, { tasks: services.tasks });
  await app.register(ingestRoutes, { ingest: services.ingest, bodyLimit: config.ingestBodyLimit });
  await app.register(esBulkRoutes, { ingest: services.ingest, bodyLimit: config.ingestBodyLimit });
  return app;
}
