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
import { KindSchema, LogMetricCreateSchema, LogMetricPatchSchema } from './log-metric-schema.js';
import type { LogMetricsService } from './log-metrics-service.js';

const ORDERABLE = ['id', 'name', 'created_at', 'updated_at'] as const;
const IdParam = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) });
const tags = ['log metrics'];

export async function logMetricRoutes(fastify: FastifyInstance, opts: { metrics: LogMetricsService }) {
  const { metrics } = opts;
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const one = { 200: Type.Ref('LogMetric'), ...errorResponses(400, 401, 403, 404, 409, 413, 415) };

  app.get(
    '/api/log-metrics',
    {
      schema: {
        tags,
        summary: 'The log metrics you may see: yours and those shared with you (admins: all with show_all)',
        querystring: Type.Object({
          ...ListQuery,
          ...ShowAllQuery,
          name: Type.Optional(Type.String({ maxLength: 100, description: 'Name contains (ignoring case).' })),
          owner: Type.Optional(
            Type.String({ maxLength: 10_000, description: 'Owner user ids, comma-separated.' }),
          ),
          kind: Type.Optional(KindSchema),
          shared: Type.Optional(QueryBoolean('true: only those others shared with you; false: only yours.')),
        }),
        response: {
          200: Paginated('LogMetric', Type.Ref('LogMetric')),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (request) => {
      const plan = planList(request.query, ORDERABLE, 'id');
      const q = request.query;
      return envelope(
        request,
        plan,
        await metrics.list(
          caller(request),
          {
            name: q.name,
            owners: splitIntList('owner', q.owner),
            kind: q.kind,
            shared: parseBoolean(q.shared),
            showAll: parseBoolean(q.show_all),
          },
          plan,
        ),
      );
    },
  );

  app.post(
    '/api/log-metrics',
    {
      schema: {
        tags,
        summary: 'Define a log metric (yours; share it with teams or everyone)',
        body: LogMetricCreateSchema,
        response: { 201: Type.Ref('LogMetric'), ...errorResponses(400, 401, 403, 409, 413, 415) },
      },
    },
    async (request, reply) => reply.code(201).send(await metrics.create(caller(request), request.body)),
  );

  app.get(
    '/api/log-metrics/:id',
    {
      schema: {
        tags,
        summary: 'Read a log metric you may see',
        params: IdParam,
        response: { 200: Type.Ref('LogMetric'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => metrics.get(caller(request), request.params.id),
  );

  app.patch(
    '/api/log-metrics/:id',
    {
      schema: {
        tags,
        summary: 'Change some fields (its owner, admins); a change of what it counts resets it',
        params: IdParam,
        body: LogMetricPatchSchema,
        response: one,
      },
    },
    async (request) => metrics.update(caller(request), request.params.id, request.body),
  );

  app.put(
    '/api/log-metrics/:id',
    {
      schema: {
        tags,
        summary: 'Replace it; what is left out returns to its default (its owner, admins)',
        params: IdParam,
        body: LogMetricCreateSchema,
        response: one,
      },
    },
    async (request) => metrics.update(caller(request), request.params.id, request.body, true),
  );

  app.delete(
    '/api/log-metrics/:id',
    {
      schema: {
        tags,
        summary: 'Delete it and its buckets (its owner, admins)',
        params: IdParam,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await metrics.delete(caller(request), request.params.id);
      return reply.code(204).send(null);
    },
  );
}
