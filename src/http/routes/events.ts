import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { EventsService } from '../../domain/events/events-service.js';
import { caller } from '../plugins/auth.js';
import { errorResponses, parseBoolean, QueryBoolean } from '../schemas/common.js';

const EvParam = Type.Object({ ev_id: Type.String({ minLength: 1, maxLength: 64 }) });
const tags = ['events'];

export async function eventRoutes(fastify: FastifyInstance, opts: { events: EventsService }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { events } = opts;

  app.get(
    '/api/events/:ev_id',
    {
      schema: {
        tags,
        summary: 'One event: every field, times in Unix seconds, and `raw` (the record as received)',
        params: EvParam,
        querystring: Type.Object({
          actions_hint: Type.Optional(QueryBoolean('Add the actions that apply to each field.')),
          add_trigger_data: Type.Optional(QueryBoolean('Add the triggers the event matched.')),
        }),
        response: {
          200: Type.Object({}, { additionalProperties: true }),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) =>
      events.get(caller(request), request.params.ev_id, {
        actionsHint: parseBoolean(request.query.actions_hint) ?? false,
        addTriggerData: parseBoolean(request.query.add_trigger_data) ?? false,
      }),
  );

  app.get(
    '/api/events/:ev_id/timestamps',
    {
      schema: {
        tags,
        summary: 'When the event happened, arrived and became queryable (Unix seconds)',
        params: EvParam,
        response: {
          200: Type.Object({
            ev_id: Type.String(),
            event_time: Type.Number(),
            received_time: Type.Number(),
            stored_time: Type.Number(),
          }),
          ...errorResponses(401, 403, 404),
        },
      },
    },
    async (request) => events.timestamps(caller(request), request.params.ev_id),
  );

  app.get(
    '/api/events/:ev_id/triggers',
    {
      schema: {
        tags,
        summary: 'The triggers the event matched',
        params: EvParam,
        response: {
          200: Type.Object({
            ev_id: Type.String(),
            triggers: Type.Array(
              Type.Object({
                trigger_id: Type.Integer(),
                name: Type.String(),
                severity: Type.String(),
                description: Type.String(),
                matched_at: Type.Number({ description: 'Unix seconds' }),
                task_id: Type.Union([Type.Integer(), Type.Null()], {
                  description: 'The task the match opened or joined (create_task triggers)',
                }),
              }),
            ),
          }),
          ...errorResponses(401, 403, 404),
        },
      },
    },
    async (request) => events.triggers(caller(request), request.params.ev_id),
  );
}
