import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { envelope, planList, splitIntList } from '../../http/list.js';
import { caller } from '../../http/plugins/auth.js';
import {
  errorResponses,
  ListQuery,
  Paginated,
  parseBoolean,
  QueryBoolean,
  ShowAllQuery,
} from '../../http/schemas/common.js';
import { TriggerCreateSchema, TriggerPatchSchema } from './trigger-schema.js';
import type { TriggersService } from './triggers-service.js';

const ORDERABLE = ['id', 'name', 'severity', 'owner', 'created_at', 'updated_at'] as const;
const IdParam = Type.Object({ id: Type.Integer({ minimum: 1 }) });
const tags = ['triggers'];

export async function triggerRoutes(fastify: FastifyInstance, opts: { triggers: TriggersService }) {
  const { triggers } = opts;
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const one = { 200: Type.Ref('Trigger'), ...errorResponses(400, 401, 403, 404, 413, 415) };

  app.get(
    '/api/triggers',
    {
      schema: {
        tags,
        summary: 'List your triggers (everyone’s with show_all for manage_triggers holders)',
        querystring: Type.Object({
          ...ListQuery,
          ...ShowAllQuery,
          owner: Type.Optional(Type.String({ description: 'Owner user ids, comma-separated.' })),
          enabled: Type.Optional(QueryBoolean('Enabled (true) or disabled (false) triggers.')),
        }),
        response: {
          200: Paginated('Trigger', Type.Ref('Trigger')),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      const q = request.query;
      const plan = planList(q, ORDERABLE, 'id');
      const page = await triggers.list(
        caller(request),
        {
          showAll: parseBoolean(q.show_all) ?? false,
          owners: splitIntList('owner', q.owner),
          enabled: parseBoolean(q.enabled),
        },
        plan,
      );
      return envelope(request, plan, page);
    },
  );

  app.post(
    '/api/triggers',
    {
      schema: {
        tags,
        summary: 'Create a trigger: every ingested event is matched against it from now on',
        body: TriggerCreateSchema,
        response: { 201: Type.Ref('Trigger'), ...errorResponses(400, 401, 403, 413, 415) },
      },
    },
    async (request, reply) => reply.status(201).send(await triggers.create(caller(request), request.body)),
  );

  app.get(
    '/api/triggers/:id',
    {
      schema: {
        tags,
        summary: 'Read a trigger',
        params: IdParam,
        response: { 200: Type.Ref('Trigger'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => triggers.get(caller(request), request.params.id),
  );

  app.patch(
    '/api/triggers/:id',
    {
      schema: {
        tags,
        summary: 'Change some fields of a trigger',
        params: IdParam,
        body: TriggerPatchSchema,
        response: one,
      },
    },
    async (request) => triggers.update(caller(request), request.params.id, request.body),
  );

  app.put(
    '/api/triggers/:id',
    {
      schema: {
        tags,
        summary: 'Replace the writable fields of a trigger; omitted ones return to their defaults',
        params: IdParam,
        body: TriggerCreateSchema,
        response: one,
      },
    },
    async (request) => triggers.replace(caller(request), request.params.id, request.body),
  );

  app.delete(
    '/api/triggers/:id',
    {
      schema: {
        tags,
        summary: 'Delete a trigger and its matches (the tasks it opened stay)',
        params: IdParam,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await triggers.delete(caller(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
}
