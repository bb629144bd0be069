import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';

export interface HealthCheck {
  /** `metadata`, `events` (and, in cluster mode, `bus`). */
  name: string;
  /** What backs it: `sqlite`, `postgres`, `duckdb`, `clickhouse`. */
  kind: string;
  check: () => Promise<void>;
}

const Dependency = Type.Object({
  kind: Type.String(),
  status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
});
const Dependencies = Type.Object({
  metadata: Type.Optional(Dependency),
  events: Type.Optional(Dependency),
  bus: Type.Optional(Dependency),
});

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
          200: Type.Object({ status: Type.String(), version: Type.String(), dependencies: Dependencies }),
          503: Type.Object({
            status: Type.String(),
            version: Type.String(),
            dependencies: Dependencies,
            failing: Type.Array(Type.String()),
          }),
        },
      },
    },
    async (_request, reply) => {
      const failing: string[] = [];
      const dependencies: Record<string, { kind: string; status: 'ok' | 'unavailable' }> = {};
      await Promise.all(
        opts.checks.map(async (c) => {
          let status: 'ok' | 'unavailable' = 'ok';
          try {
            await c.check();
          } catch {
            failing.push(c.name);
            status = 'unavailable';
          }
          dependencies[c.name] = { kind: c.kind, status };
        }),
      );
      if (failing.length)
        return reply
          .status(503)
          .send({ status: 'unavailable', version: opts.version, dependencies, failing });
      return { status: 'ok', version: opts.version, dependencies };
    },
  );
}
