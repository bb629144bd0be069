import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { caller } from '../../http/plugins/auth.js';
import { errorResponses } from '../../http/schemas/common.js';
import type { PatternsService } from './patterns-service.js';

export const PatternSchema = Type.Object(
  {
    pattern_id: Type.String(),
    template: Type.String({ description: 'The message template; variables are `<*>`.' }),
    first_seen: Type.Number({ description: 'Unix seconds (event time) of its first event.' }),
    last_seen: Type.Number({ description: 'Unix seconds (event time) of its last event.' }),
    count: Type.Integer({ description: 'Its events, all time.' }),
    example_ev_id: Type.String({ description: 'One of its events the caller may read (the newest).' }),
  },
  { $id: 'Pattern' },
);

export async function patternRoutes(fastify: FastifyInstance, opts: { patterns: PatternsService }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/api/patterns/:pattern_id',
    {
      schema: {
        tags: ['patterns'],
        summary: 'A message template: its text, when it was seen, how often, one of its events',
        params: Type.Object({ pattern_id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }) }),
        response: { 200: Type.Ref('Pattern'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => opts.patterns.get(caller(request), request.params.pattern_id),
  );
}
