import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { caller } from '../../http/plugins/auth.js';
import { httpOrigin } from '../../http/read-origin.js';
import { errorResponses, parseBoolean, QueryBoolean } from '../../http/schemas/common.js';
import { CONTEXT_MAX } from './event-context.js';
import type { EventsService } from './events-service.js';

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
      events.get(
        caller(request),
        request.params.ev_id,
        {
          actionsHint: parseBoolean(request.query.actions_hint) ?? false,
          addTriggerData: parseBoolean(request.query.add_trigger_data) ?? false,
        },
        httpOrigin(request),
      ),
  );

  const Side = (what: string) =>
    Type.Optional(
      Type.Integer({ minimum: 0, maximum: CONTEXT_MAX, description: `Events ${what} (default 50).` }),
    );
  const EventList = Type.Array(Type.Object({}, { additionalProperties: true }));
  app.get(
    '/api/events/:ev_id/context',
    {
      schema: {
        tags,
        summary: 'The events of the same source around one, in the order they happened',
        description:
          'Same `by` values (default: host, app and a process id or file path when the event has one; `by=` empty: every event), ' +
          'ties on time broken by the order they were stored. `cursor` (a before_cursor or after_cursor) continues that side only. ' +
          'Only events the caller may read; an unreadable anchor is 404.',
        params: EvParam,
        querystring: Type.Object({
          before: Side('before the anchor'),
          after: Side('after the anchor'),
          by: Type.Optional(
            Type.String({ maxLength: 2000, description: 'Comma-separated fields naming the source.' }),
          ),
          cursor: Type.Optional(Type.String({ maxLength: 4000 })),
        }),
        response: {
          200: Type.Object({
            anchor: Type.Object({}, { additionalProperties: true }),
            by: Type.Object({}, { additionalProperties: true }),
            before: Type.Optional(EventList),
            after: Type.Optional(EventList),
            before_cursor: Type.Optional(Type.Union([Type.String(), Type.Null()])),
            after_cursor: Type.Optional(Type.Union([Type.String(), Type.Null()])),
          }),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) =>
      events.context(caller(request), request.params.ev_id, request.query, httpOrigin(request)),
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
    async (request) => events.timestamps(caller(request), request.params.ev_id, httpOrigin(request)),
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
    async (request) => events.triggers(caller(request), request.params.ev_id, httpOrigin(request)),
  );
}
