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
} from '../../http/schemas/common.js';
import { SavedSearchCreateSchema, SavedSearchPatchSchema } from './saved-search-schema.js';
import type { SavedSearchesService } from './saved-searches-service.js';

const ORDERABLE = ['id', 'title', 'created_at', 'updated_at'] as const;
const IdParam = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) });
const tags = ['saved searches'];

export async function savedSearchRoutes(fastify: FastifyInstance, opts: { searches: SavedSearchesService }) {
  const { searches } = opts;
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const one = { 200: Type.Ref('SavedSearch'), ...errorResponses(400, 401, 403, 404, 413, 415) };

  app.get(
    '/api/saved-searches',
    {
      schema: {
        tags,
        summary: 'The saved searches you may see: yours, those shared with you (admins: all)',
        querystring: Type.Object({
          ...ListQuery,
          title: Type.Optional(
            Type.String({ maxLength: 200, description: 'Title contains (ignoring case).' }),
          ),
          owner: Type.Optional(
            Type.String({ maxLength: 10_000, description: 'Owner user ids, comma-separated.' }),
          ),
          shared: Type.Optional(QueryBoolean('true: only those others shared with you; false: only yours.')),
        }),
        response: {
          200: Paginated('SavedSearch', Type.Ref('SavedSearch')),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      const plan = planList(request.query, ORDERABLE, '-id');
      const q = request.query;
      return envelope(
        request,
        plan,
        await searches.list(
          caller(request),
          { title: q.title, owners: splitIntList('owner', q.owner), shared: parseBoolean(q.shared) },
          plan,
        ),
      );
    },
  );

  app.post(
    '/api/saved-searches',
    {
      schema: {
        tags,
        summary: 'Save a search (yours; share it with teams or everyone)',
        body: SavedSearchCreateSchema,
        response: { 201: Type.Ref('SavedSearch'), ...errorResponses(400, 401, 403, 413, 415) },
      },
    },
    async (request, reply) => reply.code(201).send(await searches.create(caller(request), request.body)),
  );

  app.get(
    '/api/saved-searches/:id',
    {
      schema: {
        tags,
        summary: 'Read a saved search you may see',
        params: IdParam,
        response: { 200: Type.Ref('SavedSearch'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => searches.get(caller(request), request.params.id),
  );

  app.patch(
    '/api/saved-searches/:id',
    {
      schema: {
        tags,
        summary: 'Change some fields (its owner, admins)',
        params: IdParam,
        body: SavedSearchPatchSchema,
        response: one,
      },
    },
    async (request) => searches.update(caller(request), request.params.id, request.body),
  );

  app.put(
    '/api/saved-searches/:id',
    {
      schema: {
        tags,
        summary: 'Replace it; what is left out returns to its default (its owner, admins)',
        params: IdParam,
        body: SavedSearchCreateSchema,
        response: one,
      },
    },
    async (request) => searches.update(caller(request), request.params.id, request.body, true),
  );

  app.delete(
    '/api/saved-searches/:id',
    {
      schema: {
        tags,
        summary: 'Delete it (its owner, admins)',
        params: IdParam,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await searches.delete(caller(request), request.params.id);
      return reply.code(204).send(null);
    },
  );
}
