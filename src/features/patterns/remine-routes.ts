import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { caller } from '../../http/plugins/auth.js';
import { errorResponses } from '../../http/schemas/common.js';
import { RemineRequestSchema } from './remine-schema.js';
import type { RemineService } from './remine-service.js';

const tags = ['patterns'];
const JobParam = Type.Object({ job_id: Type.String({ pattern: '^[0-9A-Za-z]{1,64}$' }) });

/** Re-mining a time range's stored events (docs/api/patterns.md#re-mining): administrators only. */
export async function remineRoutes(fastify: FastifyInstance, opts: { remine: RemineService }) {
  const { remine } = opts;
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/api/patterns/remine',
    {
      schema: {
        tags,
        summary: 'Re-mine the stored events of a time range in the background (admins; one job at a time)',
        body: RemineRequestSchema,
        response: {
          202: Type.Ref('PatternRemineJob'),
          ...errorResponses(400, 401, 403, 409, 413, 415),
        },
      },
    },
    async (request, reply) => reply.code(202).send(await remine.begin(caller(request), request.body)),
  );
  app.get(
    '/api/patterns/remine/:job_id',
    {
      schema: {
        tags,
        summary: 'A re-mining job: its state and progress (admins)',
        params: JobParam,
        response: { 200: Type.Ref('PatternRemineJob'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => remine.get(caller(request), request.params.job_id),
  );
  app.delete(
    '/api/patterns/remine/:job_id',
    {
      schema: {
        tags,
        summary: 'Stop a running re-mining job after its page (admins); an ended one is left as it is',
        params: JobParam,
        response: { 202: Type.Ref('PatternRemineJob'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await remine.requestStop(caller(request), request.params.job_id)),
  );
}
