import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { envelope, planList, splitIntList, splitList } from '../../http/list.js';
import { caller } from '../../http/plugins/auth.js';
import {
  errorResponses,
  ListQuery,
  Paginated,
  parseBoolean,
  QueryBoolean,
} from '../../http/schemas/common.js';
import { TaskCreateSchema, TaskPatchSchema } from './task-schema.js';
import type { TasksService } from './tasks-service.js';

const ORDERABLE = ['id', 'title', 'priority', 'due_date', 'created_at', 'updated_at'] as const;
const IdParam = Type.Object({ id: Type.Integer({ minimum: 1 }) });
const tags = ['tasks'];

export async function taskRoutes(fastify: FastifyInstance, opts: { tasks: TasksService }) {
  const { tasks } = opts;
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const one = { 200: Type.Ref('Task'), ...errorResponses(400, 401, 403, 404, 413, 415) };

  app.get(
    '/api/tasks',
    {
      schema: {
        tags,
        summary: "List the team's tasks (everyone sees every task)",
        querystring: Type.Object({
          ...ListQuery,
          owner: Type.Optional(Type.String({ description: 'Owner user ids, comma-separated.' })),
          assigned_to: Type.Optional(
            Type.String({ description: 'Assignee user ids or usernames, comma-separated.' }),
          ),
          title: Type.Optional(Type.String({ description: 'Case-insensitive substring of the title.' })),
          is_open: Type.Optional(QueryBoolean('Open (true) or closed (false) tasks.')),
          is_overdue: Type.Optional(QueryBoolean('Open tasks whose due date has passed (or the others).')),
          unassigned: Type.Optional(QueryBoolean('Tasks without (true) or with (false) an assignee.')),
        }),
        response: {
          200: Paginated('Task', Type.Ref('Task')),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      const q = request.query;
      const plan = planList(q, ORDERABLE, 'id');
      const page = await tasks.list(
        caller(request),
        {
          owners: splitIntList('owner', q.owner),
          assignedTo: splitList(q.assigned_to),
          title: q.title,
          isOpen: parseBoolean(q.is_open),
          isOverdue: parseBoolean(q.is_overdue),
          unassigned: parseBoolean(q.unassigned),
        },
        plan,
      );
      return envelope(request, plan, page);
    },
  );

  app.post(
    '/api/tasks',
    {
      schema: {
        tags,
        summary: 'Create a task owned by the caller (answers 200, not 201)',
        body: TaskCreateSchema,
        response: one,
      },
    },
    async (request) => tasks.create(caller(request), request.body),
  );

  app.get(
    '/api/tasks/:id',
    {
      schema: {
        tags,
        summary: 'Read a task',
        params: IdParam,
        response: { 200: Type.Ref('Task'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => tasks.get(caller(request), request.params.id),
  );

  app.patch(
    '/api/tasks/:id',
    {
      schema: {
        tags,
        summary: 'Change some fields of a task (owner, assignee, manage_tasks, admins)',
        params: IdParam,
        body: TaskPatchSchema,
        response: one,
      },
    },
    async (request) => tasks.update(caller(request), request.params.id, request.body),
  );

  app.put(
    '/api/tasks/:id',
    {
      schema: {
        tags,
        summary: 'Replace the writable fields of a task; omitted ones return to their defaults',
        params: IdParam,
        body: TaskCreateSchema,
        response: one,
      },
    },
    async (request) => tasks.replace(caller(request), request.params.id, request.body),
  );

  app.delete(
    '/api/tasks/:id',
    {
      schema: {
        tags,
        summary: 'Delete a task (owner, admins)',
        params: IdParam,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await tasks.delete(caller(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
}
