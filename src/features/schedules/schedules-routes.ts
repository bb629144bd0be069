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
import type { ScheduleRunner } from './schedule-runner.js';
import { ScheduleCreateSchema, SchedulePatchSchema } from './schedule-schema.js';
import type { SchedulesService } from './schedules-service.js';

const ORDERABLE = ['id', 'name', 'next_run_at', 'created_at', 'updated_at'] as const;
const IdParam = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) });
const tags = ['schedules'];

/** `/api/schedules` (docs/api/schedules.md): thin, the rules are the service's and the runner's. */
export async function scheduleRoutes(
  fastify: FastifyInstance,
  opts: { schedules: SchedulesService; runner: ScheduleRunner },
) {
  const { schedules, runner } = opts;
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const one = { 200: Type.Ref('Schedule'), ...errorResponses(400, 401, 403, 404, 413, 415) };

  app.get(
    '/api/schedules',
    {
      schema: {
        tags,
        summary: 'Your report schedules (admins: everyone’s with show_all=true)',
        querystring: Type.Object({
          ...ListQuery,
          ...ShowAllQuery,
          name: Type.Optional(Type.String({ maxLength: 200, description: 'Name contains (ignoring case).' })),
          owner: Type.Optional(
            Type.String({ maxLength: 10_000, description: 'Owner user ids, comma-separated.' }),
          ),
          enabled: Type.Optional(QueryBoolean('Only enabled (true) or disabled (false) schedules.')),
        }),
        response: { 200: Paginated('Schedule', Type.Ref('Schedule')), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const q = request.query;
      const plan = planList(q, ORDERABLE);
      return envelope(
        request,
        plan,
        await schedules.list(
          caller(request),
          {
            name: q.name,
            owners: splitIntList('owner', q.owner),
            enabled: parseBoolean(q.enabled),
            showAll: parseBoolean(q.show_all) ?? false,
          },
          plan,
        ),
      );
    },
  );

  app.get(
    '/api/schedules/preview',
    {
      schema: {
        tags,
        summary: 'A cron’s reading and its next runs in a time zone',
        querystring: Type.Object({
          cron: Type.String({ maxLength: 1000 }),
          time_zone: Type.Optional(Type.String({ maxLength: 100, description: 'IANA name (default UTC).' })),
          from: Type.Optional(
            Type.String({ maxLength: 40, description: 'ISO 8601 or Unix seconds (default now).' }),
          ),
          count: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Default 5.' })),
        }),
        response: {
          200: Type.Object({
            cron: Type.String(),
            time_zone: Type.String(),
            description: Type.String(),
            next_runs: Type.Array(Type.String({ format: 'date-time' })),
          }),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (request) => {
      const q = request.query;
      return schedules.preview({
        cron: q.cron,
        time_zone: q.time_zone,
        ...(q.from !== undefined ? { from: q.from } : {}),
        ...(q.count !== undefined ? { count: q.count } : {}),
      });
    },
  );

  app.post(
    '/api/schedules',
    {
      schema: {
        tags,
        summary: 'Schedule a report: a dashboard or saved search rendered on a cron, as you',
        body: ScheduleCreateSchema,
        response: { 201: Type.Ref('Schedule'), ...errorResponses(400, 401, 403, 409, 413, 415) },
      },
    },
    async (request, reply) => reply.code(201).send(await schedules.create(caller(request), request.body)),
  );

  app.get(
    '/api/schedules/:id',
    {
      schema: {
        tags,
        summary: 'One schedule (its owner, admins)',
        params: IdParam,
        response: { 200: Type.Ref('Schedule'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => schedules.get(caller(request), request.params.id),
  );

  app.patch(
    '/api/schedules/:id',
    {
      schema: {
        tags,
        summary: 'Change what is given (its owner, admins)',
        params: IdParam,
        body: SchedulePatchSchema,
        response: one,
      },
    },
    async (request) => schedules.update(caller(request), request.params.id, request.body),
  );

  app.put(
    '/api/schedules/:id',
    {
      schema: {
        tags,
        summary: 'Replace it; what is left out returns to its default (its owner, admins)',
        params: IdParam,
        body: ScheduleCreateSchema,
        response: one,
      },
    },
    async (request) => schedules.update(caller(request), request.params.id, request.body, true),
  );

  app.delete(
    '/api/schedules/:id',
    {
      schema: {
        tags,
        summary: 'Delete it (its reports stay)',
        params: IdParam,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await schedules.delete(caller(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/schedules/:id/run',
    {
      schema: {
        tags,
        summary: 'Run it now, enabled or not, as its owner (202; 409 while a run is going)',
        params: IdParam,
        response: { 202: Type.Ref('Schedule'), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await runner.runNow(caller(request), request.params.id, request.ip ?? null)),
  );
}
