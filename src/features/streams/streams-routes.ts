import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { caller } from '../../http/plugins/auth.js';
import { errorResponses, parseBoolean, QueryBoolean } from '../../http/schemas/common.js';
import { StreamCreateSchema, StreamPatchSchema } from './stream-schema.js';
import type { StreamsService } from './streams-service.js';

const IdParam = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) });
const Counts = Type.Object({
  counts: Type.Optional(QueryBoolean('Add `event_count`: the stream’s events of the last 24 hours.')),
});
const tags = ['streams'];

export async function streamRoutes(fastify: FastifyInstance, opts: { streams: StreamsService }) {
  const { streams } = opts;
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const one = { 200: Type.Ref('Stream'), ...errorResponses(400, 401, 403, 404, 409, 413, 415) };

  app.get(
    '/api/streams',
    {
      schema: {
        tags,
        summary: 'The streams you may read (admins and manage_streams holders: all), in id order',
        querystring: Counts,
        response: {
          200: Type.Object({ count: Type.Integer(), results: Type.Array(Type.Ref('Stream')) }),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (request) => {
      const results = await streams.list(caller(request), {
        counts: parseBoolean(request.query.counts) ?? false,
      });
      return { count: results.length, results };
    },
  );

  app.post(
    '/api/streams',
    {
      schema: {
        tags,
        summary: 'Create a stream (admins, manage_streams)',
        body: StreamCreateSchema,
        response: { 201: Type.Ref('Stream'), ...errorResponses(400, 401, 403, 409, 413, 415) },
      },
    },
    async (request, reply) => reply.code(201).send(await streams.create(caller(request), request.body)),
  );

  app.get(
    '/api/streams/:id',
    {
      schema: {
        tags,
        summary: 'Read a stream you may read',
        params: IdParam,
        querystring: Counts,
        response: { 200: Type.Ref('Stream'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) =>
      streams.get(caller(request), request.params.id, {
        counts: parseBoolean(request.query.counts) ?? false,
      }),
  );

  app.patch(
    '/api/streams/:id',
    {
      schema: {
        tags,
        summary: 'Change some fields of a stream (admins, manage_streams)',
        params: IdParam,
        body: StreamPatchSchema,
        response: one,
      },
    },
    async (request) => streams.update(caller(request), request.params.id, request.body),
  );

  app.put(
    '/api/streams/:id',
    {
      schema: {
        tags,
        summary: 'Replace a stream; what is left out returns to its default (admins, manage_streams)',
        params: IdParam,
        body: StreamCreateSchema,
        response: one,
      },
    },
    async (request) => streams.update(caller(request), request.params.id, request.body, true),
  );

  app.delete(
    '/api/streams/:id',
    {
      schema: {
        tags,
        summary: 'Delete a stream; its events go back to Default (admins, manage_streams; not Default)',
        params: IdParam,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      await streams.delete(caller(request), request.params.id);
      return reply.code(204).send(null);
    },
  );
}
