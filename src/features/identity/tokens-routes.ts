import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TokenType } from '../../core/identity.js';
import { fieldError } from '../../errors/errors.js';
import { envelope, planList, splitList } from '../../http/list.js';
import { caller } from '../../http/plugins/auth.js';
import {
  errorResponses,
  ListQuery,
  Paginated,
  parseBoolean,
  ShowAllQuery,
} from '../../http/schemas/common.js';
import type { TokensService } from './tokens-service.js';
import { AuthTokenCreateSchema } from './user-schema.js';

const ORDERABLE = ['id', 'created_at', 'name', 'token_type', 'expires_at', 'last_used_at', 'key_id'] as const;
const KeyParam = Type.Object({ secret_key: Type.String({ minLength: 1, maxLength: 200 }) });
const tags = ['authtokens'];

export async function authTokenRoutes(fastify: FastifyInstance, opts: { tokens: TokensService }) {
  const { tokens } = opts;
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/api/authtokens',
    {
      schema: {
        tags,
        summary: "List the caller's active tokens",
        querystring: Type.Object({
          ...ListQuery,
          ...ShowAllQuery,
          token_type: Type.Optional(
            Type.String({ description: 'INGEST or USER (comma-separated for both).' }),
          ),
        }),
        response: {
          200: Paginated('AuthToken', Type.Ref('AuthToken')),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      const q = request.query;
      const plan = planList(q, ORDERABLE, 'id');
      const types = splitList(q.token_type)?.map((t) => {
        const upper = t.toUpperCase();
        if (upper !== 'USER' && upper !== 'INGEST')
          throw fieldError('token_type', `"${t}" is not INGEST or USER.`);
        return upper as TokenType;
      });
      const page = await tokens.list(
        caller(request),
        { showAll: parseBoolean(q.show_all) ?? false, ...(types ? { tokenTypes: types } : {}) },
        plan,
      );
      return envelope(request, plan, page);
    },
  );

  app.post(
    '/api/authtokens',
    {
      schema: {
        tags,
        summary:
          'Create a token (the full secret_key is shown only in this response); one made with a single sign-on session expires with it at the latest',
        body: AuthTokenCreateSchema,
        response: { 201: Type.Ref('AuthToken'), ...errorResponses(400, 401, 403, 413, 415) },
      },
    },
    async (request, reply) => {
      reply.status(201);
      return tokens.createAs(caller(request), request.body);
    },
  );

  app.get(
    '/api/authtokens/:secret_key',
    {
      schema: {
        tags,
        summary: 'Read a token by its secret key or key id',
        params: KeyParam,
        response: { 200: Type.Ref('AuthToken'), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => tokens.get(caller(request), request.params.secret_key),
  );

  app.delete(
    '/api/authtokens/:secret_key',
    {
      schema: {
        tags,
        summary: 'Delete a token',
        params: KeyParam,
        response: { 204: Type.Null(), ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      await tokens.delete(caller(request), request.params.secret_key);
      return reply.status(204).send(null);
    },
  );
}
