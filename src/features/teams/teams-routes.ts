import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { envelope, planList } from '../../http/list.js';
import { caller } from '../../http/plugins/auth.js';
import { errorResponses, ListQuery, Paginated } from '../../http/schemas/common.js';
import { TeamCreateSchema, TeamPatchSchema } from './team-schema.js';
import type { TeamsService } from './teams-service.js';

const ORDERABLE = ['id', 'name', 'created_at'] as const;
const IdParam = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) });
const tags = ['teams'];

export async function teamRoutes(fastify: FastifyInstance, opts: { teams: TeamsService }) {
  const { teams } = opts;
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const one = { 200: Type.Ref('Team'), ...errorResponses(400, 401, 403, 404, 409, 413, 415) };

  app.get(
    '/api/teams',
    {
      schema: {
        tags,
        summary: 'List the teams (every user may)',
        querystring: Type.Object(ListQuery),
        response: { 200: Paginated('Team', Type.Ref('Team')), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const plan = planList(request.query, ORDERABLE, 'id');
      return envelope(request, plan, await teams.list(plan));
    },
  );

  app.post(
    '/api/teams',
    {
      schema: {
        tags,
        summary: 'Create a team (admins)',
        body: TeamCreateSchema,
        response: { 201: Type.Ref('Team'), ...errorResponses(400, 401, 403, 409, 413, 415) },
      },
    },
    async (request, reply) => reply.code(201).send(await teams.create(caller(request), request.body)),
  );

  app.get(
    '/api/teams/:id',
    {
      schema: {
        tags,
        summary: 'Read a team (every user may)',
        params: IdParam,
        response: { 200: Type.Ref('Team'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => teams.get(request.params.id),
  );

  app.patch(
    '/api/teams/:id',
    {
      schema: {
        tags,
        summary: 'Rename a team or set its members (admins; not the built-in one)',
        params: IdParam,
        body: TeamPatchSchema,
        response: one,
      },
    },
    async (request) => teams.update(caller(request), request.params.id, request.body),
  );

  app.put(
    '/api/teams/:id',
    {
      schema: {
        tags,
        summary: 'Replace a team; members left out become none (admins; not the built-in one)',
        params: IdParam,
        body: TeamCreateSchema,
        response: one,
      },
    },
    async (request) => teams.update(caller(request), request.params.id, request.body, true),
  );

  app.delete(
    '/api/teams/:id',
    {
      schema: {
        tags,
        summary: 'Delete a team (admins; not the built-in one)',
        params: IdParam,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      await teams.delete(caller(request), request.params.id);
      return reply.code(204).send(null);
    },
  );
}
