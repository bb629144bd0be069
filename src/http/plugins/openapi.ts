import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ErrorSchema } from '../schemas/common.js';

/** OpenAPI 3.1 generated from the route schemas (never written by hand), served with a UI. */
export const openapiPlugin = fp(async (app: FastifyInstance, opts: { version: string }) => {
  app.addSchema(ErrorSchema);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Logscope API',
        version: opts.version,
        description: 'Log retrieval and analysis: queries, dashboards, tasks, tokens, reports, events.',
      },
      components: {
        securitySchemes: {
          token: {
            type: 'apiKey',
            in: 'header',
            name: 'Authorization',
            description: 'Value: `token <secret_key>` (or `Bearer <secret_key>`).',
          },
        },
      },
      security: [{ token: [] }],
    },
    refResolver: {
      buildLocalReference: (json, _base, _frag, i) => String(json.$id ?? json.title ?? `def-${i}`),
    },
  });
  // The interactive reference is public, like the document it renders.
  await app.register(async (docs) => {
    docs.addHook('onRoute', (route) => {
      route.config = { ...(route.config ?? {}), auth: 'public' };
    });
    await docs.register(swaggerUi, { routePrefix: '/api/docs', staticCSP: true });
  });
  app.get('/api/schema', { config: { auth: 'public' }, schema: { hide: true } }, async () => app.swagger());
});
