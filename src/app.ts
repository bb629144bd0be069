import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { ValidateFunction } from 'ajv';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import { errorHandler, MAX_VALIDATION_ERRORS, notFoundHandler } from './errors/error-handler.js';
import { badRequest } from './errors/errors.js';
import { requestScope } from './errors/process-net.js';
import type { Root } from './features/root.js';
import { authPlugin } from './http/plugins/auth.js';
import { bodyPlugin } from './http/plugins/body.js';
import { openapiPlugin } from './http/plugins/openapi.js';
import { logRequest, serializeRequest } from './http/request-log.js';
import { type HealthCheck, healthRoutes } from './http/routes/health.js';
import { metricsRoutes } from './http/routes/metrics.js';
import { uiRoutes } from './http/routes/ui.js';
import { makeAjv } from './http/validator.js';
import { STORE_FORMAT, VERSION } from './version.js';

export interface AppDeps {
  /** The built components: their schemas, routes and figures, over their platform. */
  root: Root;
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
  const { root } = deps;
  const { config, publicUrl } = root.platform;
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
      // A body of 20,000 bad items has 20,000 errors (ajv reports them all): what follows
      // (Fastify's message, the 400's fields) needs the first ones only.
      validate.errors = compiled.errors?.slice(0, MAX_VALIDATION_ERRORS) ?? null;
      return ok;
    };
    validate.errors = null as ValidateFunction['errors'];
    return validate;
  });
  app.setErrorHandler(errorHandler);
  app.decorate('publicBaseUrl', () => publicUrl.get());
  app.addHook('onListen', async () => {
    const address = app.server.address();
    if (address && typeof address === 'object') publicUrl.listening(address.port);
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
  for (const schema of root.schemas) app.addSchema(schema);
  await app.register(bodyPlugin);
  await app.register(authPlugin, { tokens: root.services.tokens });
  // Before the routes: its timing hook must see all of them.
  await app.register(metricsRoutes, { sources: root.metrics });
  await app.register(healthRoutes, { version: VERSION, storeFormat: STORE_FORMAT, checks: deps.checks });
  await root.routes(app);
  await app.register(uiRoutes);
  return app;
}
