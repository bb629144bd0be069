import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { AppError, tooManyRequests } from '../../errors/errors.js';
import { envelope, planList } from '../../http/list.js';
import { caller } from '../../http/plugins/auth.js';
import { errorResponses, ListQuery, Paginated } from '../../http/schemas/common.js';
import { LoginThrottle, PasswordWork } from './login-throttle.js';
import { LoginSchema, UserCreateSchema, UserPatchSchema } from './user-schema.js';
import type { UsersService } from './users-service.js';

const ORDERABLE = ['id', 'username', 'created_at'] as const;
const IdParam = Type.Object({ id: Type.Integer({ minimum: 1 }) });
const tags = ['users'];

export interface UserRoutesOptions {
  users: UsersService;
  /** Failed logins per username and minute before that username gets 429 (0: no limit). */
  loginFailuresPerUsername: number;
  /** Failed logins per client address and minute before its failures get 429 (0: no limit). */
  loginFailuresPerAddress: number;
  /** Lifetime of a login's token. */
  sessionHours: number;
  /** False: only users marked `local_login` may sign in with a password (single sign-on). */
  passwordLogin: boolean;
}

export async function userRoutes(fastify: FastifyInstance, opts: UserRoutesOptions) {
  // Password guessing is throttled by failed logins; nothing else is rate limited.
  const passwordWork = new PasswordWork();
  const throttle = new LoginThrottle({
    perUsername: opts.loginFailuresPerUsername,
    perAddress: opts.loginFailuresPerAddress,
  });
  const sessionMs = opts.sessionHours * 3_600_000;
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
      config: { auth: 'public' },
      schema: {
        tags: ['auth'],
        summary: 'Exchange a username and password for a new USER token that expires (a session)',
        security: [],
        body: LoginSchema,
        response: { 200: Type.Ref('AuthToken'), ...errorResponses(400, 401, 413, 415, 429) },
      },
    },
    async (request) => {
      const { username, password } = request.body;
      // A throttled username or address is refused before any password work (a check
      // costs a 120 ms scrypt on the thread pool): from any address for the one, with any
      // username for the other, so a spray of distinct names is braked too.
      const wait = Math.max(throttle.usernameWait(username), throttle.addressWait(request.ip));
      if (wait > 0) throw tooManyRequests(wait, 'Too many failed login attempts; retry later.');
      try {
        return await passwordWork.run(() => users.login(username, password, sessionMs, opts.passwordLogin));
      } catch (err) {
        if (!(err instanceof AppError) || err.status !== 401) throw err;
        throttle.fail(username, request.ip);
        throw err;
      }
    },
  );
}
