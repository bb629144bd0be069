import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';

export interface HealthCheck {
  name: string;
  check: () => Promise<void>;
}

export async function healthRoutes(app: FastifyInstance, opts: { version: string; checks: HealthCheck[] }) {
  app.get(
    '/api/health',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['service'],
        summary: 'Liveness and store health',
        security: [],
        response: {
          200: Type.Object({ status: Type.String(), version: Type.String() }),
          503: Type.Object({
            status: Type.String(),
            version: Type.String(),
            failing: Type.Array(Type.String()),
          }),
        },
      },
    },
    async (_request, reply) => {
      const failing: string[] = [];
      await Promise.all(
        opts.checks.map(async (c) => {
          try {
            await c.check();
          } catch {
            failing.push(c.name);
          }
        }),
      );
      if (failing.length)
        return reply.status(503).send({ status: 'unavailable', version: opts.version, failing });
      return { status: 'ok', version: opts.version };
    },
  );
}
