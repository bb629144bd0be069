import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { fieldError } from '../../errors/errors.js';
import { caller } from '../../http/plugins/auth.js';
import { errorResponses } from '../../http/schemas/common.js';
import { FIELDS_SAMPLE, FIELDS_TOP, type FieldsService } from './fields-service.js';

const FieldSchema = Type.Object({
  name: Type.String({ description: 'Dotted name, as queries use it.' }),
  type: Type.Union([
    Type.Literal('string'),
    Type.Literal('number'),
    Type.Literal('ip'),
    Type.Literal('time'),
  ]),
  count: Type.Integer({ description: 'Sampled events that have the field.' }),
  top: Type.Array(
    Type.Object({
      value: Type.Union([Type.String(), Type.Number(), Type.Boolean()]),
      count: Type.Integer(),
    }),
    { description: `The ${FIELDS_TOP} most common values, most common first (none for times).` },
  ),
});

export async function fieldRoutes(fastify: FastifyInstance, opts: { fields: FieldsService }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/api/fields',
    {
      schema: {
        tags: ['events'],
        summary: 'The fields of the matching events, with their types and top values',
        description:
          `For field lists and query completion: the fields present in the events that \`query\` matches in the time range, computed from the newest ${FIELDS_SAMPLE.toLocaleString('en')} of them (\`sampled\`: true when more matched), most common first, each with its type and ${FIELDS_TOP} top values. ` +
          'The time range is `time_range` as JSON (`{"ts_from": …, "ts_to": …}` or `{"preset": "last_hour"}`) or `preset` alone; the default is the last hour.',
        querystring: Type.Object({
          query: Type.Optional(
            Type.String({ maxLength: 10_000, description: 'A query in the query language.' }),
          ),
          time_range: Type.Optional(Type.String({ maxLength: 1000, description: 'The time range as JSON.' })),
          preset: Type.Optional(
            Type.String({ maxLength: 100, description: 'A time range preset (last_hour, …).' }),
          ),
        }),
        response: {
          200: Type.Object({
            fields: Type.Array(FieldSchema),
            sampled: Type.Boolean(),
            events: Type.Integer({ description: 'Events looked at.' }),
            total: Type.Integer({ description: 'Events that matched.' }),
          }),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (request) => {
      const q = request.query;
      if (q.time_range !== undefined && q.preset !== undefined)
        throw fieldError('time_range', 'Give time_range or preset, not both.');
      let timeRange: unknown;
      if (q.time_range !== undefined) {
        try {
          timeRange = JSON.parse(q.time_range);
        } catch {
          throw fieldError('time_range', 'Must be JSON: {"ts_from": …, "ts_to": …} or {"preset": …}.');
        }
      } else if (q.preset !== undefined) timeRange = { preset: q.preset };
      return opts.fields.fields(caller(request), {
        ...(q.query !== undefined ? { query: q.query } : {}),
        ...(timeRange !== undefined ? { time_range: timeRange } : {}),
      });
    },
  );
}
