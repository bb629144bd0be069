import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { envelope, planList } from '../../http/list.js';
import { caller } from '../../http/plugins/auth.js';
import {
  errorResponses,
  ListQuery,
  Paginated,
  parseBoolean,
  QueryBoolean,
} from '../../http/schemas/common.js';
import { PipelineCreateSchema, PipelinePatchSchema } from './pipeline-schema.js';
import { type PipelinesService, SIMULATE_MAX_EVENTS } from './pipelines-service.js';

const ORDERABLE = ['id', 'name', 'order', 'created_at', 'updated_at'] as const;
const IdParam = Type.Object({ id: Type.Integer({ minimum: 1 }) });
const tags = ['pipelines'];
const WHO = 'Admins and manage_pipelines holders. ';

const SimulatedEvent = Type.Object({
  event: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], {
    description: 'The event as it would be stored; null when rejected or dropped.',
  }),
  dropped: Type.Boolean(),
  error: Type.Optional(Type.String({ description: 'Why intake would reject the record.' })),
  applied: Type.Array(Type.String(), { description: 'Pipelines that applied, in order.' }),
  failures: Type.Array(Type.Object({ pipeline: Type.String(), error: Type.String() }), {
    description: 'Pipelines undone by a failing step (the event went on unchanged).',
  }),
});

export async function pipelineRoutes(fastify: FastifyInstance, opts: { pipelines: PipelinesService }) {
  const { pipelines } = opts;
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const one = { 200: Type.Ref('Pipeline'), ...errorResponses(400, 401, 403, 404, 413, 415) };

  app.get(
    '/api/pipelines',
    {
      schema: {
        tags,
        summary: 'List the ingest pipelines, built-in ones included, in the order intake runs them',
        description: WHO,
        querystring: Type.Object({
          ...ListQuery,
          enabled: Type.Optional(QueryBoolean('Enabled (true) or disabled (false) pipelines.')),
          builtin: Type.Optional(QueryBoolean('Built-in (true) or created (false) pipelines.')),
        }),
        response: {
          200: Paginated('Pipeline', Type.Ref('Pipeline')),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (request) => {
      const q = request.query;
      const plan = planList(q, ORDERABLE, 'order');
      const page = await pipelines.list(
        caller(request),
        { enabled: parseBoolean(q.enabled), builtin: parseBoolean(q.builtin) },
        plan,
      );
      return envelope(request, plan, page);
    },
  );

  app.post(
    '/api/pipelines',
    {
      schema: {
        tags,
        summary: 'Create a pipeline: events ingested from now on go through it',
        description: `${WHO}An invalid step or pattern: 400 with each problem keyed by where it is (steps[0].grok.patterns[1]) and its position in the pattern.`,
        body: PipelineCreateSchema,
        response: { 201: Type.Ref('Pipeline'), ...errorResponses(400, 401, 403, 413, 415) },
      },
    },
    async (request, reply) => reply.status(201).send(await pipelines.create(caller(request), request.body)),
  );

  // Before /:id, which would otherwise take "simulate" for an id.
  app.post(
    '/api/pipelines/simulate',
    {
      schema: {
        tags,
        summary: 'Run records through a pipeline (or the pipelines intake runs) without storing them',
        description:
          `${WHO}\`pipeline\` is a definition ({name, when, steps}); \`pipeline_id\` a stored pipeline ` +
          '(enabled or not); without either the enabled pipelines run, as at intake. An invalid definition: ' +
          '400 with each problem keyed by where it is (pipeline.steps[0].grok.patterns[1]) and its position in the pattern.',
        body: Type.Object(
          {
            pipeline: Type.Optional(
              Type.Object(
                {
                  name: Type.Optional(Type.String({ maxLength: 200 })),
                  when: Type.Optional(Type.String({ maxLength: 10_000 })),
                  steps: Type.Array(Type.Unknown(), { maxItems: 100 }),
                },
                { additionalProperties: false },
              ),
            ),
            pipeline_id: Type.Optional(Type.Integer({ minimum: 1 })),
            events: Type.Array(Type.Unknown(), { minItems: 1, maxItems: SIMULATE_MAX_EVENTS }),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ events: Type.Array(SimulatedEvent) }),
          ...errorResponses(400, 401, 403, 404, 409, 413, 415),
        },
      },
    },
    async (request) => pipelines.simulate(caller(request), request.body),
  );

  app.get(
    '/api/pipelines/:id',
    {
      schema: {
        tags,
        summary: 'Read a pipeline',
        description: WHO,
        params: IdParam,
        response: { 200: Type.Ref('Pipeline'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => pipelines.get(caller(request), request.params.id),
  );

  app.patch(
    '/api/pipelines/:id',
    {
      schema: {
        tags,
        summary: 'Change some fields of a pipeline (of a built-in: enabled and order)',
        description: WHO,
        params: IdParam,
        body: PipelinePatchSchema,
        response: one,
      },
    },
    async (request) => pipelines.update(caller(request), request.params.id, request.body),
  );

  app.put(
    '/api/pipelines/:id',
    {
      schema: {
        tags,
        summary: 'Replace the writable fields of a pipeline; omitted ones return to their defaults',
        description: `${WHO}A built-in takes its own definition back with another enabled or order.`,
        params: IdParam,
        body: PipelineCreateSchema,
        response: one,
      },
    },
    async (request) => pipelines.replace(caller(request), request.params.id, request.body),
  );

  app.delete(
    '/api/pipelines/:id',
    {
      schema: {
        tags,
        summary: 'Delete a pipeline (a built-in cannot be deleted: 409; disable it instead)',
        description: WHO,
        params: IdParam,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      await pipelines.delete(caller(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
}
