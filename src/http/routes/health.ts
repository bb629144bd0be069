import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';

export interface HealthCheck {
  /** `metadata`, `events`, `bus`, and with the embedded store `cold` (its files' directory). */
  name: string;
  /** What backs it: `sqlite`, `postgres`, `duckdb`, `clickhouse`. */
  kind: string;
  check: () => Promise<void>;
  /** Its failure degrades the service without stopping it (status `degraded`, still 200). */
  optional?: boolean;
}

const Dependency = Type.Object({
  kind: Type.String(),
  status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
});
const Dependencies = Type.Object({
  metadata: Type.Optional(Dependency),
  events: Type.Optional(Dependency),
  bus: Type.Optional(Dependency),
  cold: Type.Optional(Dependency),
});

export async function healthRoutes(
  app: FastifyInstance,
  opts: { version: string; storeFormat: number; checks: HealthCheck[] },
) {
  app.get(
    '/api/health',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['service'],
        summary: 'Liveness and store health',
        security: [],
        response: {
          200: Type.Object({
            status: Type.String(),
            version: Type.String(),
            store_format: Type.Integer({ description: 'This release’s store format (docs/api/backups.md).' }),
            dependencies: Dependencies,
            warnings: Type.Optional(Type.Array(Type.String())),
          }),
          503: Type.Object({
            status: Type.String(),
            version: Type.String(),
            store_format: Type.Integer({ description: 'This release’s store format (docs/api/backups.md).' }),
            dependencies: Dependencies,
            failing: Type.Array(Type.String()),
          }),
        },
      },
    },
    async (_request, reply) => {
      const failing: string[] = [];
      const warnings: string[] = [];
      const dependencies: Record<string, { kind: string; status: 'ok' | 'unavailable' }> = {};
      await Promise.all(
        opts.checks.map(async (c) => {
          let status: 'ok' | 'unavailable' = 'ok';
          try {
            await c.check();
          } catch {
            if (c.optional)
              warnings.push(
                `${c.name} (${c.kind}) is unavailable: live updates between nodes fall back to polling the shared store`,
              );
            else failing.push(c.name);
            status = 'unavailable';
          }
          dependencies[c.name] = { kind: c.kind, status };
        }),
      );
      if (failing.length)
        return reply.status(503).send({
          status: 'unavailable',
          version: opts.version,
          store_format: opts.storeFormat,
          dependencies,
          failing,
        });
      if (warnings.length)
        return {
          status: 'degraded',
          version: opts.version,
          store_format: opts.storeFormat,
          dependencies,
          warnings,
        };
      return { status: 'ok', version: opts.version, store_format: opts.storeFormat, dependencies };
    },
  );
}
