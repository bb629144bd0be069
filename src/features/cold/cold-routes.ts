import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { envelope, planList } from '../../http/list.js';
import { caller } from '../../http/plugins/auth.js';
import { errorResponses, ListQuery, Paginated } from '../../http/schemas/common.js';
import type { ColdService } from './cold-service.js';

export async function coldRoutes(fastify: FastifyInstance, opts: { cold: ColdService }) {
  const { cold } = opts;
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/api/cold/files',
    {
      schema: {
        tags: ['cold'],
        summary: 'The cold tier’s files, oldest day first (admins)',
        querystring: Type.Object({
          ...ListQuery,
          stream_id: Type.Optional(
            Type.Integer({ minimum: 1, description: 'Files filed under this stream.' }),
          ),
          day: Type.Optional(
            Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'A UTC day, YYYY-MM-DD.' }),
          ),
        }),
        response: { 200: Paginated('ColdFile', Type.Ref('ColdFile')), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { stream_id: streamId, day } = request.query;
      const plan = planList({ ...request.query, ordering: undefined }, ['day'], 'day');
      return envelope(request, plan, await cold.list(caller(request), { streamId, day }, plan));
    },
  );
}
