import rateLimit from '@fastify/rate-limit';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { UsersService } from '../../domain/users/users-service.js';
import { tooManyRequests } from '../../errors/errors.js';
import { envelope, planList } from '../list.js';
import { caller } from '../plugins/auth.js';
import { errorResponses, ListQuery, Paginated } from '../schemas/common.js';
import { LoginSchema, UserCreateSchema, UserPatchSchema } from '../schemas/users.js';

const ORDERABLE = ['id', 'username', 'created_at'] as const;
const IdParam = Type.Object({ id: Type.Integer({ minimum: 1 }) });
const tags = ['users'];

export async function userRoutes(
  fastify: FastifyInstance,
  opts: { users: UsersService; loginAttemptsPerMinute: number },
) {
  // Password guessing is throttled per client address; nothing else is rate limited.
  const limit = opts.loginAttemptsPerMinute;
  if (limit > 0) {
    await fastify.register(rateLimit, {
      global: false,
      errorResponseBuilder: (_request, context) =>
        tooManyRequests(Math.ceil(context.ttl / 1000), 'Too many login attempts; retry later.'),
    });
  }
  const { users } = opts;
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const one = { 200: Type.Ref('User'), ...errorResponses(400, 401, 403, 404, 409) };

  app.get(
    '/api/users',
    {
      schema: {
        tags,
        summary: 'List users (admins)',
        querystring: Type.Object(ListQuery),
        response: { 200: Paginated('User', Type.Ref('User')), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const plan = planList(request.query, ORDERABLE);
      return envelope(request, plan, await users.list(caller(request), plan));
    },
  );

  app.post(
    '/api/users',
    {
      schema: {
        tags,
        summary: 'Create a user (admins)',
        body: UserCreateSchema,
        response: { 201: Type.Ref('User'), ...errorResponses(400, 401, 403, 409, 413, 415) },
      },
    },
    async (request, reply) => {
      reply.status(201);
      return users.create(caller(request), request.body);
    },
  );

  app.get(
    '/api/users/me',
    { schema: { tags, summary: 'The calling user', response: one } },
    async (request) => users.me(caller(request)),
  );

  app.get(
    '/api/users/:id',
    { schema: { tags, summary: 'Read a user (admins)', params: IdParam, response: one } },
    async (request) => users.get(caller(request), request.params.id),
  );

  app.patch(
    '/api/users/:id',
    {
      schema: {
        tags,
        summary: 'Change a user (admins)',
        params: IdParam,
        body: UserPatchSchema,
        response: one,
      },
    },
    async (request) => users.update(caller(request), request.params.id, request.body),
  );

  app.delete(
    '/api/users/:id',
    {
      schema: {
        tags,
        summary: 'Delete a user and their tokens (admins)',
        params: IdParam,
        response: { 204: Type.Null(), ...errorResponses(401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      await users.delete(caller(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/api/auth/login',
    {
      config: { auth: 'public', ...(limit > 0 ? { rateLimit: { max: limit, timeWindow: 60_000 } } : {}) },
      schema: {
        tags: ['auth'],
        summary: 'Exchange a username and password for a new USER token',
        security: [],
        body: LoginSchema,
        response: { 200: Type.Ref('AuthToken'), ...errorResponses(400, 401, 413, 415, 429) },
      },
    },
    async (request) => users.login(request.body.username, request.body.password),
  );
}
